"""The parser's public surface: dialect registry, constructor options, errors,
the ToolCatalog protocol with the real ToolRegistry, and JSON-encodable events."""

from __future__ import annotations

import copy

import pytest
from parser_cases import feed_all, merge, run_checked

from streamtools.errors import (
    ParserStateError,
    SizeLimitExceeded,
    UnknownDialectError,
    UsageError,
)
from streamtools.events import (
    ArgsDelta,
    CallEnd,
    CallError,
    CallStart,
    Finish,
    TextDelta,
    encode_events,
)
from streamtools.parser import DIALECTS, DialectSyntax, Parser, ToolCatalog


def test_dialect_registry_names_and_stop_markers() -> None:
    assert {name: d.stop_marker for name, d in DIALECTS.items()} == {
        "am_xml": "</am:tool_call>",
        "json_action": None,
        "hermes": "</tool_call>",
        "inline_json": None,
        "json_object": None,
        "command": None,
    }
    assert all(isinstance(d, DialectSyntax) and d.name == n for n, d in DIALECTS.items())


def test_dialect_object_accepted_and_unknown_name_refused() -> None:
    p = Parser(DIALECTS["hermes"])
    assert p.syntax is DIALECTS["hermes"]
    with pytest.raises(UnknownDialectError, match="am_xml, command, hermes"):
        Parser("xml")


def test_stop_str_is_one_stop_string_and_empty_is_misuse() -> None:
    events = feed_all(Parser("am_xml", stop="\nObservation:"), ["Hello Observation"])
    assert merge(events) == [TextDelta(text="Hello Observation"), Finish(reason="stop")]
    assert Parser("hermes", stop="ab")._stops == frozenset({"ab"})
    for bad in ("", [""], ("x", "")):
        with pytest.raises(UsageError, match="non-empty"):
            Parser("am_xml", stop=bad)


def test_finish_reason_passed_through_never_invented() -> None:
    text = '<tool_call>{"name": "x"}</tool_call>'
    assert feed_all(Parser("hermes"), [text])[-1] == Finish(reason="stop")
    assert feed_all(Parser("hermes"), [text], "length")[-1] == Finish(reason="length")
    assert feed_all(Parser("hermes"), [text], "tool_calls")[-1] == Finish(reason="tool_calls")


def test_id_prefix_and_counting() -> None:
    text = '<tool_call>{"name": "a"}</tool_call><tool_call>{"name": "b"}</tool_call>'
    events = feed_all(Parser("hermes", id_prefix="t-"), [text])
    assert [(e.index, e.id) for e in events if isinstance(e, CallStart)] == [(0, "t-0"), (1, "t-1")]


def test_size_cap_raises_then_refuses_input() -> None:
    p = Parser("am_xml", max_buffer=100)
    p.feed('<am:tool_call name="x"><q>')
    with pytest.raises(SizeLimitExceeded, match="max_buffer=100"):
        for _ in range(50):
            p.feed("<q>aaaa")  # not plain content: goes through the machine
    with pytest.raises(ParserStateError, match="ERROR"):
        p.feed("more")
    p2 = Parser("hermes", max_buffer=50)
    p2.feed('<tool_call>{"name": "x", "arguments": {"q": "')
    with pytest.raises(SizeLimitExceeded):
        for _ in range(50):
            p2.feed("plain")  # plain string content: the call fast path counts too


@pytest.mark.parametrize("stop", [(), ("Z!",)])  # a stop string: the other entry point
@pytest.mark.parametrize(
    ("dialect", "head"),
    [
        ("hermes", '<tool_call>{"name": "x", "arguments": {"q": "'),
        ("am_xml", '<am:tool_call name="x"><q>a'),
        ("inline_json", '{"tool": "x", "arguments": {"q": "'),
    ],
)
def test_size_cap_counts_every_character_of_a_streaming_argument(
    dialect: str, head: str, stop: tuple[str, ...]
) -> None:
    # plain argument text takes the shortest path (the lane); the cap still counts
    # each character of the call and refuses the first one past it
    cap = len(head) + 20
    p = Parser(dialect, ["x"], stop, max_buffer=cap)
    p.feed(head)
    events = [e for _ in range(20) for e in p.feed("a")]
    assert [e.delta for e in events if isinstance(e, ArgsDelta)][-1] == "a"
    with pytest.raises(SizeLimitExceeded, match=f"max_buffer={cap}"):
        p.feed("a")
    with pytest.raises(ParserStateError, match="ERROR"):
        p.feed("a")


def test_prose_quoting_markers_in_backticks_stays_text() -> None:
    quotes = {
        "am_xml": '`<am:tool_call name="search">`',
        "hermes": "`<tool_call>`",
        "inline_json": '`{"tool": "search", "arguments": {}}`',
        "command": "`@tool search {}`",
        "json_action": "`<think>`",
    }
    for dialect, quote in quotes.items():
        text = f"Use {quote} like this."
        events = run_checked(dialect, list(text), ["search"])
        assert merge(events) == [TextDelta(text=text), Finish(reason="stop")], dialect


def test_registry_is_a_catalog_with_lenient_xml_and_messages() -> None:
    from streamtools.tools import ToolRegistry, tool

    @tool
    def search(query: str, limit: int = 5) -> list[str]:
        """Search."""
        return []

    registry = ToolRegistry([search])
    assert isinstance(registry, ToolCatalog)
    good = '<am:tool_call name="search"><query>12</query><limit>3</limit></am:tool_call>'
    bad = '<am:tool_call name="search"><query>x</query><limit>three</limit></am:tool_call>'
    unknown = '<am:tool_call name="rm"></am:tool_call>'
    events = run_checked("am_xml", list(good + bad + unknown), registry)
    ends = [e for e in events if isinstance(e, CallEnd)]
    errors = [e for e in events if isinstance(e, CallError)]
    assert [e.arguments for e in ends] == [{"query": "12", "limit": 3}]
    assert [e.reason for e in errors] == ["invalid_arguments", "unknown_tool"]
    assert "$.limit" in errors[0].message and "search" in errors[0].message
    assert errors[0].raw == bad and errors[1].raw == unknown
    assert "search" in errors[1].message and "rm" in errors[1].message


def test_events_encode_as_json_lines() -> None:
    events = feed_all(Parser("am_xml"), ['Hi <am:tool_call name="x"><a>1</a></am:tool_call>'])
    lines = encode_events(events).splitlines()
    assert lines[0] == b'{"type":"text","text":"Hi "}'
    assert lines[-1] == b'{"type":"finish","reason":"stop","stop_sequence":null}'


def test_empty_deltas_are_no_ops() -> None:
    p = Parser("hermes")
    assert p.feed("") == []
    assert p.feed("<tool") == []
    assert p.feed("") == []
    assert merge(p.feed("s>") + p.end()) == [TextDelta(text="<tools>"), Finish(reason="stop")]


def test_fast_path_with_many_marker_start_characters() -> None:
    p = Parser("json_action", stop=["\n\n", "Obs", "#"])
    assert p.feed("plain") == [TextDelta(text="plain")]
    assert p.feed("a `b") == [TextDelta(text="a `b")]  # examined by the scanner: no marker
    assert p.feed("x\n\nyz") == [TextDelta(text="x")]
    assert p.stopped and p.end() == [Finish(reason="stop", stop_sequence="\n\n")]


def test_a_parser_cannot_be_copied() -> None:
    parser = Parser("json_action")  # a dialect with its own bound feed entry point
    with pytest.raises(UsageError, match="cannot be copied"):
        copy.copy(parser)
    with pytest.raises(UsageError, match="cannot be copied"):
        copy.deepcopy(parser)
