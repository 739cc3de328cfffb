"""``hermes``: gpt-oss's own call form, a harmony message ``<|channel|>commentary
to=functions.NAME <|constrain|>json<|message|>{…}<|call|>``, which servers that do
not parse harmony pass on as text (lablup/mlxcel#654, odysseus-dev/odysseus#4522,
NousResearch/hermes-agent#84231). It was text: the call lost. It is now the call
it stands for; other channels stay text (``harmony_call``)."""

from __future__ import annotations

import pytest
from parser_cases import F, call, every_chunking, hold_bound, run_checked, summary
from test_parser_s16b_properties import fragments_hold

from streamtools.events import CallEnd
from streamtools.parser import Parser
from streamtools.parser.harmony_call import HOLD_BOUND

TOOLS = ["search", "read_file"]
HEAD = "<|channel|>commentary to=functions.search <|constrain|>json<|message|>"


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        # as the leak reports show it, with the markup before it left as text
        (f'Reading.<|start|>assistant{HEAD}{{"q": "a <|call|> b"}}<|call|> ok',
         [("text", "Reading.<|start|>assistant"), call("search", q="a <|call|> b"),
          ("text", " ok"), F]),
        # a bare name, "json" without <|constrain|>, the analysis channel, <|end|>
        ('<|channel|>analysis to=read_file json<|message|>{"path": "/x"}<|end|>',
         [call("read_file", path="/x"), F]),
        # other channels: text, as before
        ("<|channel|>analysis<|message|>think<|end|><|channel|>final<|message|>4",
         [("text", "<|channel|>analysis<|message|>think<|end|><|channel|>final<|message|>4"),
          F]),
        ("the `<|channel|>` token", [("text", "the `<|channel|>` token"), F]),
        # errors: unknown tool, a recipient that is no name, invalid JSON, text after
        ("<|channel|>commentary to=functions.nope<|message|>{}<|call|>",
         [("error", "nope", "unknown_tool"), F]),
        ("<|channel|>commentary to=search(q)<|message|>{}<|call|>",
         [("error", None, "malformed"), F]),
        (f'{HEAD}{{"q": x}}<|call|>', [("error", "search", "invalid_json"), F]),
        (f'{HEAD}{{"q": "x"}} then', [("error", "search", "malformed"), ("text", "then"), F]),
    ],
)
def test_harmony_calls_at_every_chunking(text: str, expect: list[tuple[object, ...]]) -> None:
    every_chunking("hermes", text, TOOLS, expect)


def test_the_call_keeps_its_markup_as_raw() -> None:
    text = f'{HEAD}{{"q": "a"}}<|call|>'
    (end,) = [e for e in run_checked("hermes", list(text), TOOLS) if isinstance(e, CallEnd)]
    assert end.raw == text and end.arguments == {"q": "a"}


@pytest.mark.parametrize(
    ("tail", "finish", "kind"),
    [("", "stop", "call"), ("\n", "stop", "call"), ("", None, "error"), ("", "length", "error")],
)
def test_a_reply_whose_call_token_was_cut(tail: str, finish: str | None, kind: str) -> None:
    text = f'{HEAD}{{"q": "a"}}' + tail  # <|call|> is a stop token: servers cut it
    got = summary(run_checked("hermes", list(text), TOOLS, finish_reason=finish))
    assert got[0][0] == kind


def test_the_channel_is_held_within_the_bound() -> None:
    parser = Parser("hermes", TOOLS)
    most = 0
    for c in f'{HEAD}{{"q": "a"}}<|call|>':
        parser.feed(c)
        most = max(most, parser.held)
    assert most == HOLD_BOUND == len("<|channel|>commentary to") <= hold_bound(parser)


def test_fragments_of_the_form_chunking_invariance() -> None:
    fragments_hold(["<|channel|>", "commentary to=", "analysis", "functions.search", " ",
                    "<|constrain|>json", "<|message|>", '{"q": "x"}', "<|call|>", "<|end|>",
                    "<|", "final", "Done."], ["hermes"], TOOLS)
