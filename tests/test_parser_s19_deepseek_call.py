"""``hermes``: DeepSeek V3.1's own call form, ``<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>
NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`` (vllm-project/vllm#23454),
which reaches the text where a server's parser does not match the template
(sgl-project/sglang#17320) or none runs (tenstorrent/tt-inference-server#3683,
decoded in ASCII). It was text: the calls lost, the tokens shown to the user.
Read by the same body as Kimi K2's form (``kimi_call``)."""

from __future__ import annotations

import pytest
from parser_cases import F, call, every_chunking, hold_bound, run_checked, summary
from test_parser_s16b_properties import fragments_hold

from streamtools.events import CallEnd
from streamtools.parser import Parser
from streamtools.parser.kimi_call import HOLD_BOUND

TOOLS = ["search", "write_file"]
SEC, END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
B, SEP, E = "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>"
ASCII = {SEC: "<|tool_calls_begin|>", END: "<|tool_calls_end|>", B: "<|tool_call_begin|>",
         SEP: "<|tool_sep|>", E: "<|tool_call_end|>"}


def ascii_(text: str) -> str:
    for token, spelled in ASCII.items():
        text = text.replace(token, spelled)
    return text


def _spelled(x: object) -> object:
    if isinstance(x, str):
        return ascii_(x)
    if isinstance(x, dict):
        return {k: _spelled(v) for k, v in x.items()}
    return x


CASES = [
    (f'Checking. {SEC}{B}search{SEP}{{"q": "cats"}}{E}{END} ok',
     [("text", "Checking. "), call("search", q="cats"), ("text", " ok"), F]),
    # two calls, a token inside a string, layout between
    (f'{SEC}{B}search{SEP}{{"q": "a {E} b"}}{E}\n{B}write_file{SEP}{{"path": "x"}}{E}{END}',
     [call("search", q=f"a {E} b"), call("write_file", path="x"), F]),
    (f"{SEC}{B}nope{SEP}{{}}{E}{END}", [("error", "nope", "unknown_tool"), F]),
    (f"see {SEC} here", [("text", f"see {SEC} here"), F]),
]


@pytest.mark.parametrize("spelling", ["full-width", "ascii"])
@pytest.mark.parametrize(("text", "expect"), CASES)
def test_deepseek_calls_at_every_chunking(
    spelling: str, text: str, expect: list[tuple[object, ...]]
) -> None:
    if spelling == "ascii":
        text = ascii_(text)
        expect = [tuple(_spelled(x) for x in e) for e in expect]
    every_chunking("hermes", text, TOOLS, expect)


def test_each_call_keeps_its_markup_as_raw() -> None:
    first = f'{SEC}{B}search{SEP}{{"q": "a"}}{E}'
    second = f'{B}search{SEP}{{"q": "b"}}{E}{END}'
    ends = [e for e in run_checked("hermes", list(first + second), TOOLS)
            if isinstance(e, CallEnd)]
    assert [e.raw for e in ends] == [first, second]


def test_the_opener_is_held_within_the_bound() -> None:
    parser = Parser("hermes", TOOLS)
    most = 0
    for c in f"{SEC}{' ' * 16}{B}search{SEP}{{}}{E}":
        parser.feed(c)
        most = max(most, parser.held)
    assert most == len(SEC) + 16 + len(B) - 1 <= HOLD_BOUND <= hold_bound(parser)
    assert summary(parser.end("stop"))[0] == ("call", "search", {})


def test_fragments_of_the_form_chunking_invariance() -> None:
    fragments_hold([SEC, END, B, SEP, E, ASCII[SEC], ASCII[SEP], "<|tool_call_end|>", "search",
                    '{"q": "x"}', " ", "\n", "<｜", "<|", "{", "}", "Done."], ["hermes"], TOOLS)
