"""``hermes``: Mistral's own call form, ``[TOOL_CALLS]NAME[ARGS]{…}`` (Mistral
Small 3.2, Ministral 3, Devstral: their chat template writes it,
waybarrios/vllm-mlx#631) and ``[TOOL_CALLS]NAME{…}`` (vllm-project/vllm#48318),
one ``[TOOL_CALLS]`` per call, no closing token (ml-explore/mlx-lm#1448), which
servers that do not parse it pass on as text: the call was lost. It is read
where ``<think>`` may open (the reply's start, after a call or ``</think>``,
whitespace between), which costs no delta of prose a test; after the answer's
text began it stays text, as it was (``mistral_call``)."""

from __future__ import annotations

import pytest
from parser_cases import F, call, every_chunking, run_checked
from test_parser_s16b_properties import fragments_hold

from streamtools.events import CallEnd, TextDelta
from streamtools.parser import Parser

TOOLS = ["search", "add"]
SEARCH = '[TOOL_CALLS]search[ARGS]{"q": "a [TOOL_CALLS] b"}'
ADD = '[TOOL_CALLS]add{"a": 1}'


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        (SEARCH, [call("search", q="a [TOOL_CALLS] b"), F]),
        # several, whitespace between, text after the last
        (f"\n{SEARCH}\n{ADD} Done.",
         [("text", "\n"), call("search", q="a [TOOL_CALLS] b"), ("text", "\n"), call("add", a=1),
          ("text", " Done."), F]),
        # after reasoning, after a hermes call
        (f"<think>Need it.</think>{ADD}", [("think", "Need it."), call("add", a=1), F]),
        ('<tool_call>{"name": "add", "arguments": {"a": 2}}</tool_call>' + ADD,
         [call("add", a=2), call("add", a=1), F]),
        # text, as before: after the answer began, quoted, the JSON-array form
        (f"I will help.{ADD}", [("text", f"I will help.{ADD}"), F]),
        (f"`{ADD}`", [("text", f"`{ADD}`"), F]),
        ('[TOOL_CALLS][{"name": "add", "arguments": {"a": 1}}]',
         [("text", '[TOOL_CALLS][{"name": "add", "arguments": {"a": 1}}]'), F]),
        ("[TOOL_CALL", [("text", "[TOOL_CALL"), F]),
        # errors: invalid JSON (its text up to the next call), no arguments, unknown tool
        ('[TOOL_CALLS]search[ARGS]{"q": x}\n' + ADD,
         [("error", "search", "invalid_json"), call("add", a=1), F]),
        ("[TOOL_CALLS]search now", [("error", None, "malformed"), F]),
        ("[TOOL_CALLS]nope[ARGS]{}", [("error", "nope", "unknown_tool"), F]),
        ('[TOOL_CALLS]search[ARGS]{"q": "a', [("error", "search", "unterminated"), F]),
    ],
)
def test_mistral_calls_at_every_chunking(text: str, expect: list[tuple[object, ...]]) -> None:
    every_chunking("hermes", text, TOOLS, expect)


def test_each_call_keeps_its_markup_as_raw() -> None:
    ends = [e for e in run_checked("hermes", list(SEARCH + ADD), TOOLS) if isinstance(e, CallEnd)]
    assert [e.raw for e in ends] == [SEARCH, ADD]


def test_prose_with_brackets_takes_the_fast_path() -> None:
    # "[" is no start character of hermes: once the answer began, a delta with one
    # is released whole at once, as before (no test for it on the fast path)
    parser = Parser("hermes", TOOLS)
    assert parser.feed("Hi.") == [TextDelta(text="Hi.")]
    assert parser._fast and parser._one == "<" and parser.feed.__name__ == "feed"
    assert parser.feed(" [TOOL_") == [TextDelta(text=" [TOOL_")]
    assert parser.examined == len("Hi.")  # (the first delta only went to the scan)


def test_fragments_of_the_form_chunking_invariance() -> None:
    fragments_hold(["[TOOL_CALLS]", "search", "[ARGS]", "add", '{"q": "x"}', "[TOOL_", "CALLS]",
                    "[", " ", "\n", "Done.", "<think>", "</think>"], ["hermes"], TOOLS)
