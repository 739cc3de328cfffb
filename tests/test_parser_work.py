"""Linear time, proved by counting work (characters handed to the scanners),
never by timing: doubling the input doubles the work, whatever the split."""

from __future__ import annotations

import random

import pytest
from parser_cases import random_cuts

from streamtools.parser import DIALECTS, Parser
from streamtools.parser.jsonscan import ValueScanner


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
