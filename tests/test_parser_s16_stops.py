"""A user stop string that begins in the text before a call marker whose body
is undecided: the text is held until the body decides. Rejected (prose), the
stop string counts as a provider would cut there; a call, the stop string is
the call's content and the text goes out before the call's events."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from parser_cases import F, S, call, every_chunking, merge, run_checked, summary
from test_parser_properties import SETTINGS, TOOLS, cut

from streamtools.events import Finish, TextDelta
from streamtools.parser import DIALECTS, Parser
from streamtools.parser.stopcut import StopCutter

# bodies that decide after their marker (they may still be prose): texts that
# turn out to be prose (rejected), and a call
UNDECIDED = {
    "inline_json": (['{"q": 1}', '{"tool": "nope", "arguments": {}}', "{ not json }", "{}"],
                    '{"tool": "search", "arguments": {"q": "x"}}'),
    "am_xml": (["<am:tool_callx y", "<am:tool_calls>z"],
               '<am:tool_call name="search"><q>x</q></am:tool_call>'),
    "json_action": (["```Java\nx\n```", "```ajson x```", "```json-ld\n{}\n```"],
                    '```json_action\n{"tool": "search", "parameters": {"q": "x"}}\n```'),
}


def marker_of(dialect: str, text: str) -> str:
    """The marker ``text`` opens with (the longest: the scan's)."""
    return max((m for m in DIALECTS[dialect].markers if text.startswith(m)), key=len)


CASES = [
    # rejected: the stop string counts from where it begins, before the marker
    ("inline_json", 'say ab{"q": 1} more', 'ab{"q',
     [("text", "say "), ("finish", "stop", 'ab{"q')]),
    ("inline_json", 'say ab{"q": 1} more', 'b{"q": 1} m',
     [("text", "say a"), ("finish", "stop", 'b{"q": 1} m')]),
    ("am_xml", "see x<am:tool_callx y", "x<am:tool_callx",
     [("text", "see "), ("finish", "stop", "x<am:tool_callx")]),
    ("json_action", "a\n```Java\nx\n```", "\n```Java",
     [("text", "a"), ("finish", "stop", "\n```Java")]),
    # rejected, but the stop string is not there after all: all of it is text
    ("inline_json", 'say ab{"q": 1} more', 'ab{"r', [("text", 'say ab{"q": 1} more'), F]),
    ("inline_json", 'say ab{"q', 'ab{"q": 2', [("text", 'say ab{"q'), F]),
    # a stop string holding a second marker, which ends first: its body decides
    ("inline_json", 'say {"tool": "nope", "arguments": {}} x', '{"tool": "nope", "arguments": {}',
     [("text", "say "), ("finish", "stop", '{"tool": "nope", "arguments": {}')]),
    ("inline_json", '`{"tool": "nope", "arguments": {}}', '`{"tool": "nope", "arguments": {}',
     [("finish", "stop", '`{"tool": "nope", "arguments": {}')]),  # (the first quoted: prose)
    ("inline_json", 'ab{"x": {"tool": "search", "arguments": {}}}', 'ab{"x": {"tool": "search"',
     [("text", 'ab{"x": '), call(S), ("text", "}"), F]),
    # a call: the stop string is its content, the text before it comes first
    ("inline_json", 'say ab{"tool": "search", "arguments": {}} ok', 'ab{"tool"',
     [("text", "say ab"), call(S), ("text", " ok"), F]),
    ("inline_json", 'say ab{"tool": "search", "arguments": {}} ok', 'ab{"tool": "search", "a',
     [("text", "say ab"), call(S), ("text", " ok"), F]),
    ("am_xml", 'see x<am:tool_call name="search"><q>1</q></am:tool_call>', "x<am:tool_call ",
     [("text", "see x"), call(S, q="1"), F]),
    # a call cut at the end (unterminated): its error, after the text before it
    ("inline_json", 'say ab{"tool": "search", "argu', 'ab{"tool"',
     [("text", "say ab"), ("error", S, "unterminated"), F]),
]


@pytest.mark.parametrize(("dialect", "text", "stop", "expect"), CASES)
def test_a_stop_string_before_an_undecided_marker(
    dialect: str, text: str, stop: str, expect: list[tuple[object, ...]]
) -> None:
    every_chunking(dialect, text, ["search"], expect, stop)


def test_held_text_is_counted_and_released_when_the_call_decides() -> None:
    parser = Parser("inline_json", ["search"], 'ab{"tool"')
    entry = parser.feed.__func__  # type: ignore[attr-defined]
    assert parser.feed("say a") == [TextDelta(text="say ")]
    assert parser.feed("b") == []
    assert parser.feed('{"too') == []
    assert parser.held == len('ab{"too')
    events = parser.feed('l": "search", ')
    assert events[0] == TextDelta(text="ab")  # before the call's start
    assert type(events[1]).__name__ == "CallStart"
    assert parser.held == 0
    # no wrapper left behind: the dialect's own entry point again
    assert parser.feed.__func__ is entry  # type: ignore[attr-defined]


PROSE = st.text(alphabet="ab xy\n.`", max_size=12)


@pytest.mark.parametrize("dialect", sorted(UNDECIDED))
def test_a_stop_string_over_a_rejected_marker_cuts_as_a_provider_would(dialect: str) -> None:
    """Prose only (every body rejected): the visible text is what a server
    cutting at the stop strings shows, whatever the chunking."""
    rejected, _ = UNDECIDED[dialect]

    @SETTINGS
    @given(PROSE, PROSE, st.sampled_from(rejected), st.integers(0, 40), PROSE,
           st.lists(st.integers(0, 10_000), max_size=20))
    def prop(lead: str, before: str, body: str, m: int, tail: str, points: list[int]) -> None:
        marker = marker_of(dialect, body)
        stop = before + body[: len(marker) + m % (len(body) - len(marker) + 1)]
        text = lead + before + body + tail
        cutter = StopCutter([stop])
        want = cutter.feed(text) + (cutter.flush() if cutter.hit is None else "")
        for chunks in ([text], cut(text, points), list(text)):
            events = merge(run_checked(dialect, chunks, TOOLS, stop))
            assert events[:-1] == ([TextDelta(text=want)] if want else [])
            finish = events[-1]
            assert isinstance(finish, Finish) and finish.stop_sequence == cutter.hit

    prop()


@pytest.mark.parametrize("dialect", sorted(UNDECIDED))
def test_a_stop_string_over_a_call_marker_is_the_calls_content(dialect: str) -> None:
    _, good = UNDECIDED[dialect]
    marker = marker_of(dialect, good)

    @SETTINGS
    @given(st.sampled_from(["ab", "x ", "\n", "say "]), st.integers(0, 40),
           st.lists(st.integers(0, 10_000), max_size=20))
    def prop(before: str, m: int, points: list[int]) -> None:
        # past the marker: a stop string ending with it ends as soon and starts first
        stop = before + good[: len(marker) + 1 + m % (len(good) - len(marker) - 1)]
        text = "lead " + before + good
        for chunks in ([text], cut(text, points), list(text)):
            events = summary(run_checked(dialect, chunks, TOOLS, stop))
            assert events == [("text", "lead " + before), call(S, q="x"), F]

    prop()


@pytest.mark.parametrize("dialect", sorted(UNDECIDED))
def test_a_feed_looked_up_once_gives_the_same_events(dialect: str) -> None:
    """``feed = parser.feed`` before the stream (as bench/parser.py does) works
    while text before an undecided body is held: the entry point is not swapped."""
    _, good = UNDECIDED[dialect]
    text = "lead ab" + good + " tail"
    stop = "ab" + good[: len(marker_of(dialect, good)) + 2]
    for chunks in ([text], list(text)):
        parser = Parser(dialect, TOOLS, stop)
        feed = parser.feed
        events = [e for chunk in chunks for e in feed(chunk)] + parser.end()
        assert summary(events) == [("text", "lead ab"), call(S, q="x"), ("text", " tail"), F]
