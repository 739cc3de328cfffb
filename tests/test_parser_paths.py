"""The parser's per-delta paths (entry points, the lane, the bodies' fast paths)
give the events its full machines give: a reply in small deltas, which takes
the paths, against the same reply in one delta, which the machines read."""

from __future__ import annotations

import random

import pytest
from parser_cases import feed_all, merge, random_cuts

from streamtools.errors import SizeLimitExceeded
from streamtools.events import ReasoningDelta, TextDelta
from streamtools.parser import Parser

ANSWER = (
    '{"thought": "weigh \\"a\\" and b\\n", "final": {"content": '
    '"The answer: 42 apples, \\u00e9 é 你好 👋 and a \\\\ backslash."}}'
)


def _whole(dialect: str, text: str) -> list[object]:
    return list(merge(feed_all(Parser(dialect), [text])))


@pytest.mark.parametrize("seed", range(20))
def test_json_object_answer_in_small_deltas_is_the_machines(seed: int) -> None:
    """``json_object``'s entry point (``_feed_many``: two start characters besides
    "<") takes the answer's plain deltas in its own lane: the same text and
    reasoning as the machine reading the whole reply."""
    parser = Parser("json_object")
    assert parser.feed.__func__ is Parser._feed_many  # type: ignore[attr-defined]
    events = feed_all(parser, random_cuts(ANSWER, random.Random(seed)))
    assert merge(events) == _whole("json_object", ANSWER)
    assert ReasoningDelta(text='weigh "a" and b\n') in merge(events)
    assert any(isinstance(e, TextDelta) for e in events)


def test_json_object_answer_lane_keeps_max_buffer() -> None:
    """The lane counts what it takes against ``max_buffer``, as the body does."""
    parser = Parser("json_object", max_buffer=40)
    with pytest.raises(SizeLimitExceeded):
        for delta in random_cuts('{"final": {"content": "' + "word " * 40, random.Random(1)):
            parser.feed(delta)


REPLIES = {
    "hermes": 'Hi <tool_call>{"name": "search", "arguments": {"q": "a \\"b\\"", "n": 2}}'
              '</tool_call> and <tool_call>\n{"name": "calc", "arguments": {}}\n</tool_call>.',
    "json_action": 'Hi\n```json action\n{"tool": "search", "parameters": {"q": "a b", "n": 2}}'
                   '\n```\nthen\n```json action\n{"tool": "calc", "parameters": {}}\n```\nok',
    "inline_json": 'Hi {"tool": "search", "arguments": {"q": "a b", "n": 2}} and {"x": 1} '
                   '{"tool": "calc", "arguments": {}} end',
    "command": 'Hi\n@tool search {"q": "a b", "n": 2}\n@tool calc {}\nok',
    "am_xml": 'Hi <am:tool_call name="search"><q>a b</q><n>2</n></am:tool_call> and '
              '<am:tool_call name="calc"></am:tool_call>.',
    "json_object": ANSWER,
}


@pytest.mark.parametrize("dialect", sorted(REPLIES))
def test_a_reply_in_small_deltas_gives_the_machines_events(dialect: str) -> None:
    """Two calls (the second's body may be the first's, renewed) and prose."""
    text = REPLIES[dialect]
    for seed in range(30):
        events = feed_all(Parser(dialect), random_cuts(text, random.Random(seed)))
        assert merge(events) == _whole(dialect, text), seed


def test_the_core_holds_what_the_body_holds_whole_without_fast() -> None:
    """A buffer in the body's ``holds`` (an envelope head or a closing marker still
    arriving) is held by the core's set lookup: ``fast`` is not called for it."""
    parser = Parser("hermes")
    parser.feed('<tool_call>{"name": "search"')
    body = parser._body
    assert body is not None and ', "ar' in body.holds

    def no_fast(delta: str) -> None:
        raise AssertionError(f"fast called for {delta!r}")

    body.fast = no_fast  # type: ignore[method-assign]
    assert parser.feed(", ") == []
    assert parser.feed('"ar') == []
    assert parser._held == ', "ar'
    del body.fast  # the class's again
    events = feed_all(parser, ['guments": {}}', "</tool_call>"])
    assert [type(e).__name__ for e in events] == ["ArgsDelta", "CallEnd", "Finish"]
