"""The parser's per-delta paths (entry points, the lane, the bodies' fast paths)
give the events its full machines give: a reply in small deltas, which takes
the paths, against the same reply in one delta, which the machines read."""

from __future__ import annotations

import random

import pytest
from parser_cases import feed_all, merge, random_cuts

from streamtools.errors import SizeLimitExceeded
from streamtools.events import ReasoningDelta, TextDelta
from streamtools.parser import Parser, express

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


def test_the_core_holds_what_the_body_holds_whole_without_fast(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A buffer in the body's ``holds`` (an envelope head or a closing marker still
    arriving) is held by the core's set lookup: ``fast`` is not called for it."""
    monkeypatch.setattr(express, "ENABLED", False)  # the general machine's paths
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


def _state(obj: object, seen: frozenset[int] = frozenset()) -> object:
    """Everything a body holds, nested objects by their state (the sink and the
    context by role, not identity), for comparing a renewed body with a new one."""
    if isinstance(obj, (str, int, float, bool, type(None), tuple, frozenset)):
        return obj
    if isinstance(obj, list):
        return [_state(x, seen) for x in obj]
    if isinstance(obj, dict):
        return {k: _state(v, seen) for k, v in obj.items()}
    if id(obj) in seen:
        return "<back>"
    names = set(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:
        names.update(getattr(cls, "__slots__", ()))
    names.update(n for n in ("rest", "fenced", "array") if hasattr(obj, n))
    inner = seen | {id(obj)}
    out: dict[str, object] = {"class": type(obj).__name__}
    for name in sorted(names):
        value = getattr(obj, name, "<unset>")
        if name in ("ctx", "catalog", "roles", "prefixes", "jumps", "known"):
            out[name] = type(value).__name__
        elif callable(value) and not isinstance(value, type):
            out[name] = "<method>"
        else:
            out[name] = _state(value, inner)
    return out


FIRST_CALLS = {
    "hermes": [
        '<tool_call>{"name": "search", "arguments": {"q": "a"}}</tool_call>',
        '<tool_call>\n```json\n{"name": "search", "arguments": {"q": 1}}\n```\n</tool_call>',
        '<tool_call>[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": [1',
        '<tool_call>{"name": "search", "arguments": {"q": tru}}</tool_call>',
        '<tool_call>```json\n{"name": "x"} oops</tool_call>',
        '<tool_call>{"name": "search", "options": {"q": 1}, "args": {}}</tool_call>',
    ],
    "json_action": [
        '```json action\n{"tool": "search", "parameters": {"q": "a"}}\n```\nok',
        '```json_action\n{"tool": "s", "parameters": {"q": "a"}}\n```\n```json action\n{"to',
        '```json action\n{"tool": "s", "parameters": {"q": [}}\n```\n',
    ],
    "inline_json": [
        '{"tool": "search", "arguments": {"q": "a"}} ',
        '{"x": 1} ',
        '{"tool": "search", "arguments": {"q": nope}} ',
    ],
    "am_xml": [
        '<am:tool_call name="search"><q>42 a</q><n>2</n></am:tool_call>',
        '<am:tool_call name="search"><parameters><q><![CDATA[a]]></q></parameters></am:tool_call>',
        '<am:tool_call name="search">stray<q>a\r\n</q></am:tool_call>',
        '<am:tool_call name="search"><q>a</q><am:tool_call name="x"></am:tool_call>',
        '<am:tool_call name="search"><args><q>a</q></am:tool_call>',
        '<am:tool_callx',
    ],
    "command": [
        '@tool search {"q": "a"}\nok',
        '@tool search(q="a")\nok',
        '@tool search {"q": \n',
    ],
}


@pytest.mark.parametrize("dialect", sorted(FIRST_CALLS))
def test_a_renewed_body_is_a_new_one(dialect: str) -> None:
    """After a call (complete, failed, fenced, in an array, rejected), the body
    the core let go of and the next call renews is, in every attribute of it and
    of its call, envelope and scanner, the body ``__init__`` builds."""
    tools = ["search", "a", "b", "s", "x"]
    for first in FIRST_CALLS[dialect]:
        for cuts in ([first], list(first)):
            parser = Parser(dialect, tools)
            feed_all_but_end = [parser.feed(c) for c in cuts]
            assert feed_all_but_end is not None
            spare = parser._ctx.spare
            if spare is None:  # the call is still open (cut off): nothing to renew
                continue
            for marker in parser.syntax.markers:
                fresh = parser.syntax.open(marker, Parser(dialect, tools)._ctx)
                if type(fresh) is not type(spare):  # another kind of body (am:request_tools)
                    continue
                parser._ctx.spare = spare
                renewed = parser.syntax.open(marker, parser._ctx)
                assert renewed is spare, marker
                assert _state(renewed) == _state(fresh), (first, marker)
