"""Linear time, proved by counting work (characters handed to the scanners),
never by timing: doubling the input doubles the work, whatever the split."""

from __future__ import annotations

import random
from typing import Any

import pytest
from parser_cases import merge, random_cuts, run_checked

from streamtools.events import CallEnd, CallError, TextDelta
from streamtools.parser import DIALECTS, Parser
from streamtools.parser.jsonscan import TOKEN_MAX, ValueScanner


def corpus(dialect: str, size: int, seed: int = 1) -> str:
    """Prose and calls of ``dialect`` until ``size`` characters."""
    rng = random.Random(seed)
    calls = {
        "am_xml": '<am:tool_call name="search"><q>what is {n} &amp; x</q><n>{n}</n></am:tool_call>',
        "hermes": '<tool_call>{{"name": "search", "arguments": {{"q": "x\\n{n}", "n": {n}}}}}'
        "</tool_call>",
        "json_action": '```json action\n{{"tool": "search", "parameters": {{"n": {n}}}}}\n```',
        "inline_json": '{{"tool": "search", "arguments": {{"q": "{n}"}}}}',
        "command": '\n@tool search {{"n": [{n}, "a"]}}\n',
        "json_object": "",
    }[dialect]
    parts: list[str] = []
    total = 0
    while total < size:
        piece = f"Some prose, 你好 {rng.random():.3f} <b> & more. " if rng.random() < 0.6 else (
            calls.format(n=rng.randint(0, 999))
        )
        parts.append(piece)
        total += len(piece)
    return "".join(parts)


@pytest.mark.parametrize("dialect", sorted(set(DIALECTS) - {"json_object"}))
def test_work_is_linear_in_input(dialect: str) -> None:
    ratios = []
    for size in (20_000, 80_000):
        text = corpus(dialect, size)
        p = Parser(dialect, ["search"])
        for chunk in random_cuts(text, random.Random(2), 1, 6):
            p.feed(chunk)
        p.end()
        ratios.append(p.examined / len(text))
    assert ratios[1] <= ratios[0] * 1.1  # constant work per character
    assert ratios[1] < 8  # and a small constant


@pytest.mark.parametrize("dialect", ["hermes", "am_xml", "json_object"])
def test_big_argument_char_by_char_is_linear(dialect: str) -> None:
    value = "ab \\\" 👋 " * 25_000
    text = {
        "hermes": f'<tool_call>{{"name": "w", "arguments": {{"v": "{value}"}}}}</tool_call>',
        "am_xml": f'<am:tool_call name="w"><v>{value}</v></am:tool_call>',
        "json_object": f'{{"action": {{"tool": "w", "args": {{"v": "{value}"}}}}}}',
    }[dialect]
    p = Parser(dialect)
    for ch in text:
        p.feed(ch)
    p.end()
    assert p.examined <= 3 * len(text)


def test_json_scanner_examines_each_character_about_once() -> None:
    items = ", ".join(f'{{"k{i}": "v\\u00e9{i}", "n": -{i}.5e1}}' for i in range(3000))
    text = '{"a": [' + items + "]}"
    scanner = ValueScanner()
    held = ""
    for ch in text:
        s = held + ch
        k = scanner.feed(s, 0)
        held = s[k:]
    assert scanner.done and held == ""
    assert scanner.examined <= 3 * len(text)  # numbers and escapes are re-offered when cut


class _CountingStr(str):
    """A str that counts the characters its slices and concatenations copy
    (``examined`` counts scanning; copying the rest of a large delta once per
    call is work too). Long results count on, so a copy of a copy is seen;
    short ones (values, names) are plain str, which msgspec can encode."""

    copied = 0

    @staticmethod
    def _counted(text: str) -> str:
        _CountingStr.copied += len(text)
        return _CountingStr(text) if len(text) > 256 else text

    def __getitem__(self, key: object) -> str:
        piece = super().__getitem__(key)  # type: ignore[index]
        return self._counted(piece) if isinstance(key, slice) else piece

    def __add__(self, other: str) -> str:
        return self._counted(str(self) + other)

    def __radd__(self, other: str) -> str:
        return self._counted(other + str(self))

    def find(self, sub: str, start: Any = None, end: Any = None) -> int:
        """Counts the characters searched, as a copy would (a search to the end of
        a large delta after each call is as quadratic as a copy of it)."""
        at = super().find(sub, start, end)
        first = 0 if start is None else start
        last = len(self) if end is None else end
        _CountingStr.copied += (at + len(sub) if at >= 0 else last) - first
        return at


@pytest.mark.parametrize(
    "dialect, unit",
    [
        ("hermes", '<tool_call>{"name":"search","arguments":{}}</tool_call>'),
        ("am_xml", '<am:tool_call name="search"><q>a < b</q></am:tool_call>'),
        # JSON that is not a call: each object opens a body that turns out to be prose
        ("inline_json", 'Example: {"id": 1, "ok": true}\n'),
        # calls and prose with no "<" (a marker-start character of every dialect)
        ("inline_json", 'Found {"tool": "search", "arguments": {"q": 1}} and more.\n'),
        ("json_action", '```json action\n{"tool": "search", "parameters": {}}\nx```\n'),
        ("command", '\n@tool search {"q": [1, "a"]}\nok, '),
        # code blocks that are not the reply object: each fence opens a body that
        # turns out to be prose (it once looked at the rest of the delta for a "{")
        ("json_object", "Like this:\n```python\nx = 1\n```\n"),
    ],
)
def test_one_large_delta_copies_linear_text(dialect: str, unit: str) -> None:
    per_char = []
    for repeat in (500, 2000):
        text = _CountingStr(unit * repeat)
        _CountingStr.copied = 0
        p = Parser(dialect, ["search"])
        p.feed(text)  # a whole reply in one delta: a non-streamed answer, a replay
        p.end()
        per_char.append(_CountingStr.copied / len(text))
    # copies of the rest of the delta per call grew with the number of calls
    assert per_char[1] <= per_char[0] * 1.1 + 0.01
    assert per_char[1] < 3


@pytest.mark.parametrize(
    "dialect, call, close",
    [
        ("hermes", '<tool_call>{"name": "search", "arguments": {}}', "</tool_call>"),
        ("json_action", '```json action\n{"tool": "search", "parameters": {}}', "\n```"),
    ],
)
def test_whitespace_before_the_closing_marker_is_taken_not_held(
    dialect: str, call: str, close: str
) -> None:
    """Whitespace between the object and its closing marker is taken as it comes:
    held, each delta would copy all of it again (quadratic: 40,000 spaces a
    character at a time took seconds)."""
    p = Parser(dialect, ["search"])
    p.feed(call)
    longest = 0
    for ch in " \n\t\r" * 5_000:
        assert p.feed(ch) == []
        longest = max(longest, len(p._held))
    events = p.feed(close) + p.end()
    assert longest == 0
    assert [type(e).__name__ for e in events] == ["CallEnd", "Finish"]
    assert events[0].raw == call + " \n\t\r" * 5_000 + close  # type: ignore[union-attr]


def test_whitespace_around_a_json_object_reply_is_not_copied_per_delta() -> None:
    """``json_object`` drops the whitespace around its reply, so it waits to see
    what follows; a long run is kept in pieces, not copied again with each delta."""
    per_char = []
    for repeat in (20, 80):
        _CountingStr.copied = 0
        run = [_CountingStr(" \n" * 150) for _ in range(repeat)]
        p = Parser("json_object")
        events = [e for delta in run for e in p.feed(delta)]
        events += p.feed('{"final": "a"}')
        events += [e for delta in run for e in p.feed(delta)]
        events += p.end()
        assert [type(e).__name__ for e in events] == ["TextDelta", "Finish"]
        per_char.append(_CountingStr.copied / (2 * 300 * repeat))
    assert per_char[1] <= per_char[0] * 1.1 + 0.01
    assert per_char[1] < 3


@pytest.mark.parametrize("dialect", ["hermes", "json_object"])
@pytest.mark.parametrize("unit", ["1", "x"])
def test_a_runaway_number_or_word_is_refused_not_reread(dialect: str, unit: str) -> None:
    """A number or bare word cut by each delta is held until it ends; a model
    looping on ``1111…`` would have it read again with every delta (quadratic).
    Over ``TOKEN_MAX`` characters it is refused, however the text is cut."""
    value = unit * 40_000
    text = {
        "hermes": f'<tool_call>{{"name": "w", "arguments": {{"v": {value}}}}}</tool_call>',
        "json_object": f'{{"action": {{"tool": "w", "args": {{"v": {value}}}}}}}',
    }[dialect]
    whole = run_checked(dialect, [text], ["w"])
    p = Parser(dialect, ["w"])
    cut = [e for ch in text for e in p.feed(ch)] + p.end()
    assert p.examined <= 3 * len(text)
    (error,) = [e for e in cut if isinstance(e, CallError)]
    assert error.reason == "invalid_json" and f"over {TOKEN_MAX} characters" in error.message
    assert merge(cut) == merge(whole)


@pytest.mark.parametrize("unit", ['Example: {"zz": 1}\n', 'Example: {"a": 1}\n'])
def test_prose_markers_with_a_stop_string_that_begins_with_one_stay_linear(unit: str) -> None:
    """A stop string that begins with a marker (``{"zzz`` in ``inline_json``) is
    looked for where the marker turns out to be prose, and its start is held
    meanwhile: bounded by the stop string's length, whatever the split."""
    examined, copied = [], []
    for repeat in (500, 2000):
        text = _CountingStr(unit * repeat)
        _CountingStr.copied = 0
        p = Parser("inline_json", ["search"], stop='{"zzz')
        whole = p.feed(text) + p.end()
        copied.append(_CountingStr.copied / len(text))
        p = Parser("inline_json", ["search"], stop='{"zzz')
        chars = [e for ch in unit * repeat for e in p.feed(ch)] + p.end()
        examined.append(p.examined / len(text))
        assert merge(chars) == merge(whole)
        assert "".join(e.text for e in whole if isinstance(e, TextDelta)) == unit * repeat
    assert copied[1] <= copied[0] * 1.1 + 0.01 and copied[1] < 3
    assert examined[1] <= examined[0] * 1.1 and examined[1] < 8


@pytest.mark.parametrize("unit", [1, 7])
def test_qwen_form_in_hermes_is_linear(unit: int) -> None:
    """Qwen3-Coder's form, its values full of tags' starts (``<``, ``</param``) that
    the body holds until they show what they are: each character is handed to the
    body a bounded number of times, whatever the size."""
    ratios = []
    for size in (20_000, 80_000):
        value = "a </param b <c> " * (size // 16)
        text = (
            "<tool_call>\n<function=search>\n<parameter=q>\n" + value
            + "\n</parameter>\n</function>\n</tool_call>"
        )
        p = Parser("hermes", ["search"])
        events = [e for k in range(0, len(text), unit) for e in p.feed(text[k : k + unit])]
        events += p.end()
        assert [e.arguments for e in events if isinstance(e, CallEnd)] == [{"q": value}]
        ratios.append(p.examined / len(text))
    assert ratios[1] <= ratios[0] * 1.1
    assert ratios[1] < 8
