"""``hermes``: Gemma 4's own call form, ``<|tool_call>call:NAME{key:<|"|>text<|"|>}
<tool_call|>``, which servers that do not parse it pass on as text (omlx#581,
NousResearch/hermes-agent#48412, FlashML-org/FreeToken#346). It was text: the
call lost without a word. It is now the call it stands for; the marker in
prose, or a head that is no ``call:NAME{``, stays text (``gemma_call``)."""

from __future__ import annotations

import pytest
from parser_cases import F, call, every_chunking, hold_bound, run_checked, summary
from test_parser_s16b_properties import fragments_hold

from streamtools.events import CallEnd
from streamtools.parser import Parser
from streamtools.parser.gemma_call import HOLD_BOUND, to_json

TOOLS = ["search", "write_file"]
Q = '<|"|>'


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        (f"Let me look. <|tool_call>call:search{{q:{Q}cats{Q}}}<tool_call|> ok",
         [("text", "Let me look. "), call("search", q="cats"), ("text", " ok"), F]),
        # a string holds braces, the closing marker, newlines; typed values; nesting
        (f"<|tool_call>call:search{{q:{Q}a }} <tool_call|>\nb{Q},n:5,x:-1.5,on:true,"
         f"none:null,o:{{a:[1,{Q}b{Q}]}}}}<tool_call|>",
         [call("search", q="a } <tool_call|>\nb", n=5, x=-1.5, on=True, none=None,
               o={"a": [1, "b"]}), F]),
        # short values left bare (Gemma writes them so), two calls, layout before the close
        ("<|tool_call>call:write_file{content:hello,path:a.txt} <tool_call|>"
         "<|tool_call>call:search{}<tool_call|>",
         [call("write_file", content="hello", path="a.txt"), call("search"), F]),
        # OpenAI's namespace, as elsewhere
        (f"<|tool_call>call:functions.search{{q:{Q}a{Q}}}<tool_call|>", [call("search", q="a"), F]),
        # prose: the marker alone, or a head that is no call:NAME{
        ("write <|tool_call> to call", [("text", "write <|tool_call> to call"), F]),
        ("<|tool_call>call search{}", [("text", "<|tool_call>call search{}"), F]),
        # errors: an unknown tool, text after the arguments, notation that is no value
        ("<|tool_call>call:nope{}<tool_call|>", [("error", "nope", "unknown_tool"), F]),
        (f"<|tool_call>call:search{{q:{Q}a{Q}}} then", [("error", "search", "malformed"),
                                                       ("text", "then"), F]),
        ("<|tool_call>call:search{q:two words}<tool_call|>", [("error", "search", "invalid_json"),
                                                             F]),
    ],
)
def test_gemma_calls_at_every_chunking(text: str, expect: list[tuple[object, ...]]) -> None:
    every_chunking("hermes", text, TOOLS, expect)


def test_the_call_keeps_its_markup_as_raw() -> None:
    text = f"<|tool_call>call:search{{q:{Q}a{Q}}}<tool_call|>"
    end = next(e for e in run_checked("hermes", list(text), TOOLS) if isinstance(e, CallEnd))
    assert end.raw == text and end.arguments == {"q": "a"}


@pytest.mark.parametrize(
    ("finish", "kind"), [("stop", "call"), (None, "error"), ("length", "error")]
)
def test_a_reply_stopped_after_the_arguments(finish: str | None, kind: str) -> None:
    text = f"<|tool_call>call:search{{q:{Q}a{Q}}}"
    got = summary(run_checked("hermes", list(text), TOOLS, finish_reason=finish))
    assert got[0][0] == kind


def test_the_head_is_held_within_the_stated_bound() -> None:
    name = "n" * 64
    parser = Parser("hermes", [name])
    text = f"<|tool_call>call:{name}{{}}<tool_call|>"
    most = 0
    for c in text:
        parser.feed(c)
        most = max(most, parser.held)
    assert most == HOLD_BOUND == len(f"<|tool_call>call:{name}")
    assert hold_bound(parser) >= HOLD_BOUND
    assert summary(run_checked("hermes", list(text), [name]))[0] == ("call", name, {})


def test_to_json() -> None:
    assert to_json(f"{{a:{Q}x{Q},b:[1,2.5e3,true],c:{{d:null}}}}") == (
        '{"a":"x","b":[1,2.5e3,true],"c":{"d":null}}'
    )
    assert to_json("{a:<b}") is None


def test_gemma_calls_hold_the_invariants() -> None:
    pieces = [
        "<|tool_call>", "<tool_call|>", "call:", "search", "{", "}", Q, "q:", "a", ",", "[",
        "]", " ", "\n", "<|", "<tool_call", "x y", "<tool_call>", "</tool_call>",
    ]
    fragments_hold(pieces, ["hermes"], TOOLS)
