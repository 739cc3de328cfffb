"""``hermes``: gpt-oss's harmony call with the recipient in the role's header,
before the channel, ``<|start|>assistant to=functions.NAME<|channel|>commentary
json<|message|>{…}<|call|>``: the harmony format allows it (openai/harmony#40) and
gpt-oss-120b writes it (ggml-org/llama.cpp#15181 reads it). It was text, the call
lost: only ``<|channel|>commentary to=…`` was read (``harmony_call``)."""

from __future__ import annotations

import pytest
from parser_cases import F, call, every_chunking, run_checked
from test_parser_s16b_properties import fragments_hold

from streamtools.events import CallEnd
from streamtools.parser import Parser
from streamtools.parser.harmony_call import HOLD_BOUND

TOOLS = ["search", "read_file"]
HEAD = "<|start|>assistant to=functions.search<|channel|>commentary json<|message|>"


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        (f'{HEAD}{{"q": "a <|call|> b"}}<|call|> ok',
         [call("search", q="a <|call|> b"), ("text", " ok"), F]),
        # after an analysis message, <|constrain|>, a bare name, the analysis channel, <|end|>
        ('<|channel|>analysis<|message|>Need it.<|end|><|start|>assistant to=functions.search'
         '<|channel|>commentary <|constrain|>json<|message|>{"q": "x"}<|call|>',
         [("text", "<|channel|>analysis<|message|>Need it.<|end|>"), call("search", q="x"), F]),
        ('<|start|>assistant to=read_file <|channel|>analysis<|message|>{"path": "/x"}<|end|>',
         [call("read_file", path="/x"), F]),
        # the recipient in the channel after <|start|>assistant: read as before
        ('<|start|>assistant<|channel|>commentary to=functions.search json<|message|>'
         '{"q": "y"}<|call|>',
         [("text", "<|start|>assistant"), call("search", q="y"), F]),
        # other messages: text, as before
        ("<|start|>assistant<|channel|>final<|message|>4",
         [("text", "<|start|>assistant<|channel|>final<|message|>4"), F]),
        ("<|start|>user<|message|>hi", [("text", "<|start|>user<|message|>hi"), F]),
        # errors: a channel that is no call's, an unknown tool
        ('<|start|>assistant to=functions.search<|channel|>final<|message|>{"q": "x"}<|call|>',
         [("error", None, "malformed"), F]),
        ("<|start|>assistant to=functions.nope<|channel|>commentary<|message|>{}<|call|>",
         [("error", "nope", "unknown_tool"), F]),
    ],
)
def test_role_header_calls_at_every_chunking(text: str, expect: list[tuple[object, ...]]) -> None:
    every_chunking("hermes", text, TOOLS, expect)


def test_the_call_keeps_its_markup_as_raw() -> None:
    text = f'{HEAD}{{"q": "a"}}<|call|>'
    (end,) = [e for e in run_checked("hermes", list(text), TOOLS) if isinstance(e, CallEnd)]
    assert end.raw == text and end.arguments == {"q": "a"}


def test_the_start_is_held_within_the_bound() -> None:
    parser = Parser("hermes", TOOLS)
    most = 0
    for c in f'{HEAD}{{"q": "a"}}<|call|>':
        parser.feed(c)
        most = max(most, parser.held)
    assert most == len("<|start|>assistant to") < HOLD_BOUND


def test_fragments_of_the_form_chunking_invariance() -> None:
    fragments_hold(["<|start|>", "assistant", " to=", "functions.search", "<|channel|>",
                    "commentary", " json", "<|message|>", '{"q": "x"}', "<|call|>", "<|end|>",
                    "<|", "final", "Done."], ["hermes"], TOOLS)
