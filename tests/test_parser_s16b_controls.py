"""Raw control characters (a newline, a tab) inside a JSON string of a call, as
models write code and file contents (Qwen3-Coder, small Llamas;
ml-explore/mlx-lm#1712): the arguments are the text the model meant, the
``ArgsDelta`` stream carries each such character as its JSON escape (so the
deltas still concatenate to JSON that decodes to the arguments), and ``raw``
keeps the text as written. ``run_checked`` checks both invariants on every run."""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from parser_cases import chunkings, run_checked, summary
from test_proxy import USER, _openai, _stream, proxy

from streamtools.events import ArgsDelta, CallEnd, CallError, ParserEvent, ReasoningDelta
from streamtools.parser import Parser
from streamtools.parser.jsonscan import CONTROL, ValueScanner

CODE = "def f():\n\treturn 1\r\n\x01"
W = "write_file"

# each dialect's call of write_file with CODE written raw inside a string
CALLS = {
    "hermes": f'<tool_call>{{"name": "{W}", "arguments": {{"content": "{CODE}"}}}}</tool_call>',
    "hermes-qwen": f'<tool_call>\n<function={W}>{{"content": "{CODE}"}}</function>\n</tool_call>',
    "json_action": f'```json action\n{{"tool": "{W}", "parameters": {{"content": "{CODE}"}}}}\n```',
    "inline_json": f'Saving. {{"tool": "{W}", "arguments": {{"content": "{CODE}"}}}} done',
    "json_object": f'{{"action": {{"tool": "{W}", "args": {{"content": "{CODE}"}}}}}}',
    "command": f'@tool {W} {{"content": "{CODE}"}}\n',
}


def _args(events: list[ParserEvent]) -> str:
    return "".join(e.delta for e in events if isinstance(e, ArgsDelta))


@pytest.mark.parametrize("case", sorted(CALLS))
def test_a_raw_control_character_in_a_string_is_the_character_meant(case: str) -> None:
    text = CALLS[case]
    dialect = case.split("-")[0]
    seen = []
    for how, chunks in chunkings(text):
        events = run_checked(dialect, chunks, [W])
        (end,) = [e for e in events if isinstance(e, CallEnd | CallError)]
        assert isinstance(end, CallEnd), (how, end)
        assert end.arguments == {"content": CODE}
        assert CODE in end.raw  # as the model wrote it
        streamed = _args(events)
        assert not re.search(r"[\x00-\x1f]", streamed), streamed
        assert json.loads(streamed) == {"content": CODE}  # strict, as any client reads it
        seen.append(summary(events))
    assert all(s == seen[0] for s in seen)


def test_the_escapes_are_the_short_ones_where_json_has_them() -> None:
    events = run_checked("hermes", [CALLS["hermes"]], [W])
    assert _args(events) == '{"content": "def f():\\n\\treturn 1\\r\\n\\u0001"}'


def test_json_object_text_and_reasoning_members_read_them_too() -> None:
    text = '{"thought": "a\nb", "final": "line 1\nline 2\tend"}'
    for how, chunks in chunkings(text):
        events = run_checked("json_object", chunks, [W])
        got = summary(events)
        assert got == [("think", "a\nb"), ("text", "line 1\nline 2\tend"),
                       ("finish", "stop", None)], how
        assert any(isinstance(e, ReasoningDelta) for e in events)


def test_a_raw_control_character_in_a_key_is_escaped_as_well() -> None:
    text = f'<tool_call>{{"name": "{W}", "arguments": {{"a\tb": 1}}}}</tool_call>'
    for how, chunks in chunkings(text):
        events = run_checked("hermes", chunks, [W])
        assert summary(events)[0] == ("call", W, {"a\tb": 1}), how


def test_a_raw_control_character_outside_a_string_is_still_an_error() -> None:
    text = f'<tool_call>{{"name": "{W}", "arguments": {{"a": 1\x01}}}}</tool_call>'
    events = run_checked("hermes", [text], [W])
    (error,) = [e for e in events if isinstance(e, CallError)]
    assert error.reason == "invalid_json" and error.raw == text


_ESCAPE = re.compile(r'(\\\\)|\\(n|t|r|u00[01][0-9a-fA-F])')


def _unescape_controls(json_text: str) -> str:
    """JSON text with every escaped control character written raw (an escaped
    backslash left as it is)."""

    def one(m: re.Match[str]) -> str:
        if m.group(1):
            return m.group(1)
        e = m.group(2)
        return {"n": "\n", "t": "\t", "r": "\r"}.get(e) or chr(int(e[1:], 16))

    return _ESCAPE.sub(one, json_text)


STRINGS = st.text(st.sampled_from(["a", " ", "\n", "\t", "\r", "\x00", "\x1f", "\\", '"', "é"]),
                  max_size=8)
ARGS = st.dictionaries(STRINGS, st.one_of(STRINGS, st.lists(STRINGS, max_size=2),
                                          st.integers(-5, 5)), max_size=3)


def _render(dialect: str, body: str) -> str:
    if dialect == "hermes":
        return f'<tool_call>{{"name": "{W}", "arguments": {body}}}</tool_call>'
    if dialect == "json_action":
        return f'```json action\n{{"tool": "{W}", "parameters": {body}}}\n```'
    if dialect == "inline_json":
        return f'{{"tool": "{W}", "arguments": {body}}}'
    if dialect == "json_object":
        return f'{{"action": {{"tool": "{W}", "args": {body}}}}}'
    return f"@tool {W} {body}\n"


@pytest.mark.parametrize("dialect",
                         ["hermes", "json_action", "inline_json", "json_object", "command"])
def test_generated_calls_with_raw_controls_round_trip_at_any_cut(dialect: str) -> None:
    @settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(ARGS, st.lists(st.integers(0, 400), max_size=12))
    def prop(args: dict[str, Any], points: list[int]) -> None:
        text = _render(dialect, _unescape_controls(msgspec.json.encode(args).decode()))
        cuts = sorted({p % (len(text) + 1) for p in points} | {0, len(text)})
        chunks = [text[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]
        for pieces in (chunks, list(text)):
            events = run_checked(dialect, pieces, [W])
            (end,) = [e for e in events if isinstance(e, CallEnd | CallError)]
            assert isinstance(end, CallEnd), end
            assert end.arguments == args
            assert json.loads(_args(events)) == args

    prop()


def test_the_proxy_forwards_the_escaped_arguments_an_openai_client_decodes() -> None:
    reply = CALLS["hermes"].replace(W, "weather").replace('"content"', '"city"')
    tool: Any = {"type": "function", "function": {
        "name": "weather", "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}}, "required": ["city"]}}}
    with proxy([reply, reply], dialect="hermes") as (url, _):
        client = _openai(url)
        whole = client.chat.completions.create(model="m", messages=USER, tools=[tool])
        _, streamed = _stream(client, model="m", messages=USER, tools=[tool])
    completions: list[Any] = [whole, streamed]
    for completion in completions:
        (call,) = completion.choices[0].message.tool_calls or []
        assert json.loads(call.function.arguments) == {"city": CODE}


@pytest.mark.parametrize("dialect", ["hermes", "json_object", "command"])
@pytest.mark.parametrize("size", [1, 7, 100_000])
def test_many_raw_newlines_cost_linear_work(dialect: str, size: int) -> None:
    """Each raw control character stops the scanner once; it never re-reads the
    rest of a delta (``examined`` counts what it looked at)."""
    value = "line\n\tx" * 20_000
    text = {
        "hermes": f'<tool_call>{{"name": "{W}", "arguments": {{"v": "{value}"}}}}</tool_call>',
        "json_object": f'{{"action": {{"tool": "{W}", "args": {{"v": "{value}"}}}}}}',
        "command": f'@tool {W} {{"v": "{value}"}}\n',
    }[dialect]
    parser = Parser(dialect, [W])
    events: list[ParserEvent] = []
    for k in range(0, len(text), size):
        events += parser.feed(text[k : k + size])
    events += parser.end()
    (end,) = [e for e in events if isinstance(e, CallEnd)]
    assert end.arguments == {"v": value}
    assert parser.examined <= 3 * len(text)


def test_the_scanner_examines_each_character_once_across_raw_newlines() -> None:
    """Stopping before each raw control character, the scanner does not count
    (or look at) the rest of the text twice: a caller feeding on from the
    character after it, as the envelope does, gets it examined once."""
    text = '{"v": "' + "ab\ncd\t" * 5_000 + '"}'
    scanner = ValueScanner()
    i, pieces = 0, []
    while not scanner.done:
        j = scanner.feed(text, i)
        pieces.append(text[i:j])
        if scanner.error is CONTROL:
            pieces.append(scanner.take_control(text[j]))
            j += 1
        assert scanner.error is None
        i = j
    assert json.loads("".join(pieces)) == {"v": "ab\ncd\t" * 5_000}
    assert scanner.examined == len(text)


@pytest.mark.parametrize("dialect", ["hermes", "json_action", "inline_json"])
def test_arguments_as_a_string_of_json_with_a_raw_newline_read_as_the_others(
    dialect: str,
) -> None:
    """Arguments double-encoded as a string of JSON (Granite 4 writes them so):
    a raw newline in the outer string is a newline in the inner one once
    decoded, which was invalid JSON; it is escaped as in arguments written whole."""
    inner = '"{\\"content\\": \\"a\nb\\"}"'
    text = {
        "hermes": f'<tool_call>{{"name": "{W}", "arguments": {inner}}}</tool_call>',
        "json_action": f'```json action\n{{"tool": "{W}", "parameters": {inner}}}\n```',
        "inline_json": f'{{"tool": "{W}", "arguments": {inner}}}',
    }[dialect]
    for how, chunks in chunkings(text):
        events = run_checked(dialect, chunks, [W])
        assert summary(events)[0] == ("call", W, {"content": "a\nb"}), how
        assert json.loads(_args(events)) == {"content": "a\nb"}
