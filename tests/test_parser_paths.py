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
