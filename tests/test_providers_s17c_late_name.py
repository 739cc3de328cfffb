"""A name that comes, on a server's index, after the call there ended without one.

``ToolCallDeltas`` passed it to the ended call as a late part, while
``NativeCalls`` (that call already a ``CallError``: no tool name) started a
new call from it: that call was then never completed by a ``done`` chunk,
ended only in ``NativeCalls.end``, after the calls that began later, so
its events were no longer together (found by the property test in
tests/test_providers_interleaved.py).
"""

from __future__ import annotations

import json

import msgspec
import pytest

from streamtools.events import ArgsDelta, CallEnd, CallError, CallStart, ParserEvent
from streamtools.native import NativeCalls
from streamtools.providers.openai_calls import Function, ToolCallDelta, ToolCallDeltas
from streamtools.providers.surrogates import SurrogatePairs

Delta = tuple[int, str | None, str | None, str]


def events_of(deltas: list[Delta]) -> list[ParserEvent]:
    calls = ToolCallDeltas(SurrogatePairs(msgspec.json.Decoder(), object))
    native = NativeCalls()
    events: list[ParserEvent] = []
    for index, call_id, name, args in deltas:
        delta = ToolCallDelta(index=index, id=call_id, function=Function(name=name, arguments=args))
        for chunk in calls.feed(delta):
            events += native.feed(chunk)
    for chunk in calls.finish("tool_calls") + calls.rest(complete=True):
        events += native.feed(chunk)
    return events + native.end("tool_calls")


@pytest.mark.parametrize(
    ("deltas", "ends"),
    [
        (
            [(1, None, None, '{"x": 1}'), (0, None, None, '{"x": 1}'), (1, "a", "t", ""),
             (0, None, "t", "{")],
            [("a", "t", {})],
        ),
        (
            [(1, None, None, '"s"'), (0, None, None, ""), (1, "a", "t", ""),
             (1, None, None, '{"x": 1}'), (1, None, "u", "")],
            [("a", "t", {"x": 1}), (None, "u", {})],
        ),
    ],
)  # fmt: skip
def test_a_named_call_after_a_nameless_one_on_its_index_is_a_call_of_its_own(
    deltas: list[Delta], ends: list[tuple[str | None, str, dict[str, int]]]
) -> None:
    events = [e for e in events_of(deltas) if not isinstance(e, CallError)]
    current: int | None = None
    texts: dict[int, str] = {}
    done: list[tuple[str | None, str, dict[str, int]]] = []
    for event in events:
        if isinstance(event, CallStart):
            assert current is None, f"call {event.index} began inside {current}"
            current, texts[event.index] = event.index, ""
        elif isinstance(event, ArgsDelta):
            assert event.index == current, f"a delta of call {event.index} inside {current}"
            texts[event.index] += event.delta
        elif isinstance(event, CallEnd):
            assert event.index == current
            assert json.loads(texts[event.index]) == event.arguments
            done.append((event.id if event.id == "a" else None, event.name, event.arguments))
            current = None
    assert done == ends
