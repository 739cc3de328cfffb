"""The events' machine-readable codes (``CallError.reason``, ``TurnEnd.reason``,
``ToolFailed.kind``, ``Retry.reason``, ``StreamError.kind``) are ``Literal``
types, so a consumer can match them exhaustively (``assert_never``) and a type
checker catches a misspelt code. The Literals list exactly what the code emits:
``mypy --strict`` (``test_static``) refuses a construction with any other value,
and the scan below finds every value a Literal lists written in the code that
makes the events, so none is listed that nothing emits. Recordings and encoded
events still decode."""

from __future__ import annotations

import ast
import inspect
import typing
from pathlib import Path

import msgspec
import pytest

from streamtools.cli.replay import segment_events
from streamtools.errors import RepairExhausted, RepairReason
from streamtools.events import (
    CallError,
    CallErrorReason,
    Retry,
    RetryReason,
    StreamError,
    StreamErrorKind,
    ToolFailed,
    ToolFailedKind,
    TurnEnd,
    TurnEndReason,
    decode_event,
    encode_events,
)
from streamtools.runtime.recording import load

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "streamtools"

# event class, field, the Literal its field is
FIELDS: list[tuple[type[msgspec.Struct], str, typing.Any]] = [
    (CallError, "reason", CallErrorReason),
    (TurnEnd, "reason", TurnEndReason),
    (ToolFailed, "kind", ToolFailedKind),
    (Retry, "reason", RetryReason),
    (StreamError, "kind", StreamErrorKind),
]


def _values(alias: typing.Any) -> tuple[str, ...]:
    assert typing.get_origin(alias) is typing.Literal
    values = typing.get_args(alias)
    assert all(isinstance(v, str) for v in values)
    return values


def _code_strings() -> set[str]:
    """Every string constant of the package's code, outside ``events.py`` and
    outside docstrings (a value only a docstring names is not emitted)."""
    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        if path.name == "events.py" and path.parent == PACKAGE:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
            ):
                found.add(node.value)
    return found


@pytest.mark.parametrize(("cls", "field", "alias"), FIELDS, ids=lambda x: getattr(x, "__name__", x))
def test_the_field_is_its_literal(cls: type[msgspec.Struct], field: str, alias: object) -> None:
    assert typing.get_type_hints(cls)[field] == alias


# the codes of the events, and RepairExhausted's (an exception, typed alike)
CODES: list[tuple[type, str, typing.Any]] = [*FIELDS, (RepairExhausted, "reason", RepairReason)]


def test_every_listed_value_is_written_in_the_code() -> None:
    strings = _code_strings()
    unused = {
        f"{cls.__name__}.{field}={value!r}"
        for cls, field, alias in CODES
        for value in _values(alias)
        if value not in strings
    }
    assert unused == set()


def test_repair_exhausted_reason_is_its_literal() -> None:
    # its other annotations name types imported for type checkers only
    assert inspect.signature(RepairExhausted).parameters["reason"].annotation == "RepairReason"


def test_every_code_written_at_a_construction_is_listed() -> None:
    """The constants passed to the event classes by keyword, as the package writes
    them (``mypy --strict`` checks the rest: values that come through variables)."""
    by_name = {cls.__name__: (field, set(_values(alias))) for cls, field, alias in CODES}
    seen: dict[str, set[str]] = {name: set() for name in by_name}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id not in by_name:
                continue
            field, _ = by_name[node.func.id]
            for keyword in node.keywords:
                value = keyword.value
                if keyword.arg == field and isinstance(value, ast.Constant):
                    seen[node.func.id].add(str(value.value))
    # the scan sees them
    assert all(seen[name] for name in ("TurnEnd", "StreamError", "Retry", "RepairExhausted"))
    assert {name: codes - by_name[name][1] for name, codes in seen.items()} == {
        name: set() for name in by_name
    }


_OTHER_FIELDS: dict[type[msgspec.Struct], dict[str, typing.Any]] = {
    CallError: {"index": 0, "id": "call_0", "name": "add", "raw": "<x>", "message": "m"},
    TurnEnd: {"turn": 2},
    ToolFailed: {"index": 1, "id": "call_1", "name": "add", "message": "m"},
    Retry: {"turn": 1, "message": "m"},
    StreamError: {"message": "m"},
}


def _event(cls: type[msgspec.Struct], field: str, value: str) -> msgspec.Struct:
    return cls(**_OTHER_FIELDS[cls], **{field: value})


@pytest.mark.parametrize(("cls", "field", "alias"), FIELDS, ids=lambda x: getattr(x, "__name__", x))
def test_each_code_round_trips_and_an_unknown_one_is_refused(
    cls: type[msgspec.Struct], field: str, alias: object
) -> None:
    events = [_event(cls, field, value) for value in _values(alias)]
    lines = encode_events(events).splitlines()  # type: ignore[arg-type]
    assert [decode_event(line) for line in lines] == events
    tag = cls.__struct_config__.tag
    other = lines[0].replace(f'"{_values(alias)[0]}"'.encode(), b'"no_such_code"')
    with pytest.raises(msgspec.ValidationError, match=rf"at `\$\.{field}`") as raised:
        decode_event(other)
    assert tag is not None and str(raised.value).startswith("Invalid enum value 'no_such_code'")


@pytest.mark.parametrize("path", sorted((ROOT / "fixtures").glob("*.jsonl")), ids=str)
def test_the_recordings_still_play_into_events_that_round_trip(path: Path) -> None:
    segments = load(path)
    assert segments
    for segment in segments:
        events = [event for _, event in segment_events(segment, "am_xml")]
        assert any(isinstance(e, TurnEnd) for e in events)
        assert [decode_event(line) for line in encode_events(events).splitlines()] == events
