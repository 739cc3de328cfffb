"""``<think>`` opens reasoning only where nothing but whitespace has been shown
since the reply began, a call opened or reasoning closed; anywhere else it is
text. Before, a ``<think>`` anywhere in visible text (a model naming the tag in
prose, a small model echoing it) turned the whole rest of the reply into
reasoning, hidden from the user. llama.cpp reads ``<think>`` only at the start
of the message (``try_parse_reasoning``: ``try_consume_literal(start_think)``
at the parser's position), Ollama's thinking parser only before any
non-whitespace (``thinkingState_LookingForOpening``); nbramia/LifeOS#568's review
is a user's literal `` `<think>draft</think>` `` corrupted by a tag-anywhere
reader. This parser also opens reasoning after a call or a ``</think>`` (models
that think between calls)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from parser_cases import F, call, chunkings, every_chunking, merge, random_cuts, run_checked

from streamtools.events import ParserEvent, ReasoningDelta, TextDelta

TOOLS = ["search"]
HERMES_CALL = '<tool_call>{"name": "search", "arguments": {"q": "a"}}</tool_call>'
AM_CALL = '<am:tool_call name="search"><q>a</q></am:tool_call>'
DIALECTS = ["am_xml", "hermes", "json_action", "inline_json", "command"]

PROSE = "Wrap your notes in <think> tags, like <think>this</think>."


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_think_tag_in_the_answer_is_text(dialect: str) -> None:
    every_chunking(dialect, PROSE, TOOLS, [("text", PROSE), F])


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_think_tag_before_any_text_still_opens_reasoning(dialect: str) -> None:
    every_chunking(dialect, "\n\n<think>plan</think>Answer.", TOOLS,
                   [("text", "\n\n"), ("think", "plan"), ("text", "Answer."), F])


@pytest.mark.parametrize(
    ("dialect", "text", "expect"),
    [
        # after a call (interleaved thinking), whitespace between
        ("hermes", "Checking. " + HERMES_CALL + "\n<think>then</think>Done.",
         [("text", "Checking. "), call("search", q="a"), ("text", "\n"), ("think", "then"),
          ("text", "Done."), F]),
        ("am_xml", AM_CALL + "<think>then</think>Done <think>x",
         [call("search", q="a"), ("think", "then"), ("text", "Done <think>x"), F]),
        # after reasoning closed, another block; after the answer, text again
        ("hermes", "<think>a</think> <think>b</think>c <think>d</think>",
         [("think", "a"), ("text", " "), ("think", "b"), ("text", "c <think>d</think>"), F]),
        # the text after a call that opens reasoning counts: the next tag is text
        ("hermes", HERMES_CALL + "ok <think>x</think>",
         [call("search", q="a"), ("text", "ok <think>x</think>"), F]),
    ],
)
def test_where_reasoning_may_open(dialect: str, text: str, expect: list[tuple[str, ...]]) -> None:
    every_chunking(dialect, text, TOOLS, expect)


def test_a_stop_string_holding_a_prose_think_tag_counts() -> None:
    every_chunking("hermes", "Use <think> here", TOOLS,
                   [("text", "Use"), ("finish", "stop", " <think>")], stop=" <think>")


# -- the rule against a reference reading, at random cuts ----------------------------

_PIECES = ["a", "b c", " ", "\n", "`", "<think>", "</think>", "<", "think>", "</", HERMES_CALL]


def _reference(text: str) -> list[tuple[str, str]]:
    """The rule read off the whole text at once (no call in a piece but the one)."""
    out: list[tuple[str, str]] = []
    think, quiet, i = False, True, 0

    def put(kind: str, s: str) -> None:
        if out and out[-1][0] == kind != "call":
            out[-1] = (kind, out[-1][1] + s)
        else:
            out.append((kind, s))

    while i < len(text):
        prev = text[i - 1] if i else ""
        if think:
            if text.startswith("</think>", i) and prev != "`":
                think, quiet, i = False, True, i + len("</think>")
                continue
            put("think", text[i])
        elif text.startswith("<think>", i) and prev != "`" and quiet:
            think, i = True, i + len("<think>")
            continue
        elif text.startswith(HERMES_CALL, i) and prev != "`":
            put("call", HERMES_CALL)
            quiet, i = True, i + len(HERMES_CALL)
            continue
        else:
            put("text", text[i])
            quiet = quiet and text[i].isspace()
        i += 1
    return out


def _read(events: list[ParserEvent]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for e in merge(events):
        if isinstance(e, TextDelta):
            out.append(("text", e.text))
        elif isinstance(e, ReasoningDelta):
            out.append(("think", e.text))
        elif hasattr(e, "raw") and not isinstance(e, TextDelta | ReasoningDelta):
            out.append(("call", e.raw))
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES), max_size=14), st.integers(0, 10_000))
def test_the_rule_at_any_chunking(pieces: list[str], seed: int) -> None:
    text = "".join(pieces)
    expect = _reference(text)
    for chunks in ([text], list(text), random_cuts(text, random.Random(seed))):
        assert _read(run_checked("hermes", chunks, TOOLS)) == expect, chunks


def test_the_reference_is_the_parser_s_on_the_table() -> None:
    # (the reference itself, against a case written out by hand)
    text = "x<think>y</think>" + HERMES_CALL + " <think>z"
    assert _reference(text) == [("text", "x<think>y</think>"), ("call", HERMES_CALL),
                                ("text", " "), ("think", "z")]
    for _how, chunks in chunkings(text):
        assert _read(run_checked("hermes", chunks, TOOLS)) == _reference(text)
