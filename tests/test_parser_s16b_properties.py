"""Hypothesis properties for the forms this session's parser commits read, as
``test_parser_properties`` holds them for the canonical forms: ``am_xml``'s
nested XML objects and arrays (``xml_nested``), the Qwen3-Coder form with a
``</parameter>`` left out or its arguments as one JSON object (hermes and
am_xml), and ``am_xml``'s ``<parameter name="X">`` closed by ``</X>``.
``run_checked`` holds DESIGN §2's invariants after every delta (conservation,
append-only arguments that decode to ``CallEnd.arguments``, bounded hold-back);
each property adds chunking invariance (whole, random cuts, one character at a
time) and the arguments the generated text means."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from parser_cases import merge, run_checked
from test_parser_s16_nested import REGISTRY

from streamtools.events import CallEnd, ParserEvent

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOOLS = ["search", "calc", "write_file"]


def cut(text: str, points: list[int]) -> list[str]:
    cuts = sorted({p % (len(text) + 1) for p in points} | {0, len(text)})
    return [text[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]


def runs(dialect: str, text: str, points: list[int], tools: Any,
         finish: str | None = None) -> list[ParserEvent]:
    """The events of ``text`` whole, cut at ``points`` and a character at a time,
    the same once merged (chunking invariance); the whole run's events."""
    whole = run_checked(dialect, [text], tools, finish_reason=finish)
    chunked = run_checked(dialect, cut(text, points), tools, finish_reason=finish)
    chars = run_checked(dialect, list(text), tools, finish_reason=finish)
    assert merge(whole) == merge(chunked) == merge(chars)
    return whole


def fragments_hold(
    pieces: list[str], dialects: list[str], tools: list[str], examples: int = 60, size: int = 20
) -> None:
    """Any text made of up to ``size`` of a call form's ``pieces`` (its tags, their
    starts, names, layout), in each of ``dialects``, with the catalog ``tools`` or
    none, ended cleanly or cut: ``runs`` (chunking invariance, and
    ``run_checked``'s invariants) holds, over ``examples`` examples."""

    @settings(SETTINGS, max_examples=examples)
    @given(st.lists(st.sampled_from(pieces), max_size=size), st.sampled_from(dialects),
           st.booleans(), st.sampled_from([None, "stop"]),
           st.lists(st.integers(0, 10_000), max_size=15))
    def prop(chosen: list[str], dialect: str, catalog: bool, finish: str | None,
             points: list[int]) -> None:
        runs(dialect, "".join(chosen), points, tools if catalog else None, finish)

    prop()


def ends(events: list[ParserEvent]) -> list[tuple[str, Any]]:
    return [(e.name, e.arguments) for e in events if isinstance(e, CallEnd)]


# -- am_xml: objects and arrays as nested elements -----------------------------------------

WORD = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 ]{0,5}[A-Za-z0-9]|[A-Za-z0-9]", fullmatch=True)
ADDRESS = st.fixed_dictionaries(
    {"city": WORD, "zip": WORD},
    optional={"floor": st.integers(-99, 999), "lines": st.lists(WORD, max_size=2)},
)
SHIP = st.fixed_dictionaries(
    {"address": ADDRESS},
    optional={"tags": st.lists(WORD, max_size=3),
              "counts": st.lists(st.integers(0, 99), max_size=3),
              "parcels": st.lists(ADDRESS, max_size=2), "where": ADDRESS},
)
# (an empty array is an empty element, ``<tags></tags>`` or ``<tags/>``: the empty
# list where the schema says array)


def xml(name: str, value: Any, gap: str, item: str) -> str:
    """``value`` as the nested element ``<name>``: an object's members and an
    array's items as child elements, ``gap`` the layout between them."""
    if isinstance(value, dict):
        inner = "".join(gap + xml(k, v, gap, item) for k, v in value.items())
        return f"<{name}>{inner}{gap}</{name}>"
    if value == [] and not gap:
        return f"<{name}/>"
    if isinstance(value, list):
        inner = "".join(gap + xml(item, v, gap, item) for v in value)
        return f"<{name}>{inner}{gap}</{name}>"
    return f"<{name}>{value}</{name}>"


def test_am_xml_nested_objects_and_arrays_hold_the_invariants() -> None:
    @SETTINGS
    @given(SHIP, st.sampled_from(["", "\n", "\n  "]), st.sampled_from(["item", "entry"]),
           st.sampled_from(["", "Shipping it. "]), st.lists(st.integers(0, 10_000), max_size=20))
    def prop(args: dict[str, Any], gap: str, item: str, prose: str, points: list[int]) -> None:
        body = "".join(gap + xml(k, v, gap, item) for k, v in args.items())
        text = f'{prose}<am:tool_call name="ship">{body}{gap}</am:tool_call> ok'
        events = runs("am_xml", text, points, REGISTRY)
        assert ends(events) == [("ship", args)]

    prop()


def test_am_xml_nested_cut_off_anywhere_holds_the_invariants() -> None:
    """A reply ending anywhere inside the nested form: whatever it gives (a call,
    an error, text), every run of it gives the same."""
    @SETTINGS
    @given(SHIP, st.sampled_from(["", "\n"]), st.integers(0, 10_000),
           st.sampled_from([None, "stop"]), st.lists(st.integers(0, 10_000), max_size=20))
    def prop(args: dict[str, Any], gap: str, end: int, finish: str | None,
             points: list[int]) -> None:
        body = "".join(gap + xml(k, v, gap, "item") for k, v in args.items())
        text = f'<am:tool_call name="ship">{body}</am:tool_call>'
        runs("am_xml", text[: end % (len(text) + 1)], points, REGISTRY, finish)

    prop()


# -- the Qwen3-Coder form: </parameter> left out; arguments as one JSON object -------------

NAME = st.from_regex(r"[a-z][a-z0-9_]{0,5}", fullmatch=True)
VALUE = st.text(st.characters(blacklist_categories=["Cs", "Cc"], blacklist_characters="<&"),
                max_size=10).map(lambda v: "v" + v.strip())
ARGS = st.dictionaries(NAME, VALUE, min_size=1, max_size=4)


def qwen_call(name: str, args: dict[str, str], closes: list[bool], gap: str) -> str:
    """``<function=NAME>`` and a parameter per argument, each closed or not
    (a ``</parameter>`` left out right before the next tag or ``</function>``,
    as models leave it out: layout after a missing close would be the value's)."""
    params = "".join(
        f"<parameter={k}>\n{v}\n" + (f"</parameter>{gap}" if close else "")
        for (k, v), close in zip(args.items(), closes, strict=False)
    )
    return f"<function={name}>{gap}{params}</function>"


@pytest.mark.parametrize("dialect", ["hermes", "am_xml"])
def test_qwen_parameters_left_open_hold_the_invariants(dialect: str) -> None:
    @SETTINGS
    @given(st.lists(st.tuples(st.sampled_from(TOOLS), ARGS, st.lists(st.booleans(), min_size=4,
                                                                     max_size=4)),
                    min_size=1, max_size=2),
           st.sampled_from(["\n", ""]), st.sampled_from(["</tool_call>", "<|im_end|>", ""]),
           st.lists(st.integers(0, 10_000), max_size=20))
    def prop(calls: list[tuple[str, dict[str, str], list[bool]]], gap: str, close: str,
             points: list[int]) -> None:
        text = "Let me see. <tool_call>\n" + "\n".join(
            qwen_call(name, args, closes, gap) for name, args, closes in calls
        ) + "\n" + close
        events = runs(dialect, text, points, TOOLS, "stop")
        assert ends(events) == [(name, args) for name, args, _ in calls]

    prop()


JSON_ARGS = st.dictionaries(NAME, st.one_of(
    st.text(st.characters(blacklist_categories=["Cs"]), max_size=8),
    st.integers(-5, 5), st.booleans(), st.none(), st.lists(st.integers(0, 9), max_size=2),
), max_size=3)


@pytest.mark.parametrize("dialect", ["hermes", "am_xml"])
def test_qwen_json_arguments_hold_the_invariants(dialect: str) -> None:
    """``<function=NAME>{…}</function>`` and ``<function>NAME</function>{…}``,
    with strings that hold the closing tags (content, inside a JSON string)."""
    @SETTINGS
    @given(st.sampled_from(TOOLS), JSON_ARGS, st.sampled_from(["attr", "element"]),
           st.sampled_from(["", "\n"]), st.sampled_from(["</tool_call>", ""]),
           st.booleans(), st.lists(st.integers(0, 10_000), max_size=20))
    def prop(name: str, args: dict[str, Any], form: str, gap: str, close: str, tagged: bool,
             points: list[int]) -> None:
        if tagged:  # a closing tag inside a string value
            args = {**args, "z": "a</function></tool_call>b"}
        body = msgspec.json.encode(args).decode()
        if form == "attr":
            call = f"<function={name}>{gap}{body}{gap}</function>"
        else:
            call = f"<function>{name}</function>{gap}{body}"
        text = f"<tool_call>{gap}{call}{gap}{close}" + (" after" if close else "")
        events = runs(dialect, text, points, TOOLS, "stop")
        assert ends(events) == [(name, args)]

    prop()


# -- am_xml: <parameter name="X"> closed by </X> ---------------------------------------------


def test_am_xml_parameter_closed_by_its_name_holds_the_invariants() -> None:
    @SETTINGS
    @given(ARGS, st.lists(st.sampled_from(["</parameter>", "</NAME>", ""]), min_size=4,
                          max_size=4),
           st.sampled_from(["", "\n"]), st.lists(st.integers(0, 10_000), max_size=20))
    def prop(args: dict[str, str], closes: list[str], gap: str, points: list[int]) -> None:
        # "": the close left out, the next parameter's tag on a line of its own right
        # after the value (one newline, layout; the last one keeps a close: nothing
        # follows it to end it)
        closes = [*closes[: len(args) - 1], closes[len(args) - 1] or "</parameter>"]
        body = "".join(
            f'{gap}<parameter name="{k}">{v}{close.replace("NAME", k) or ("" if gap else chr(10))}'
            for (k, v), close in zip(args.items(), closes, strict=False)
        )
        text = f'<am:tool_call name="write_file">{body}{gap}</am:tool_call> done'
        events = runs("am_xml", text, points, TOOLS)
        assert ends(events) == [("write_file", args)]

    prop()
