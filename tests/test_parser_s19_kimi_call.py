"""``hermes``: Kimi K2's own call form, ``<|tool_calls_section_begin|>
<|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{…}<|tool_call_end|>
<|tool_calls_section_end|>``, which servers whose parser is off or misses a call
pass on as text (BerriAI/litellm#12679, NousResearch/hermes-agent#29735,
MoonshotAI/Kimi-K2#26, vybestack/llxprt-code#749). It was text: the calls lost,
the tokens shown to the user. It is now the calls it stands for; the opener in
prose stays text (``kimi_call``)."""

from __future__ import annotations

import pytest
from parser_cases import F, call, every_chunking, hold_bound, run_checked, summary
from test_parser_s16b_properties import fragments_hold

from streamtools.events import ArgsDelta, CallEnd
from streamtools.parser import Parser
from streamtools.parser.kimi_call import HOLD_BOUND

TOOLS = ["search", "write_file"]
SEC, END = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
B, A, E = "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        # as Kimi's template writes it, prose around it
        (f'Let me look. {SEC}{B}functions.search:0{A}{{"q": "cats"}}{E}{END} ok',
         [("text", "Let me look. "), call("search", q="cats"), ("text", " ok"), F]),
        # two calls, spaces between the tokens (llxprt-code#749), the tokens in a string
        (f'{SEC} {B} functions.search:0 {A} {{"q": "a {E} b"}} {E}\n'
         f'{B}functions.write_file:1{A}{{"path": "x", "n": [1, 2]}}{E}\n{END}',
         [call("search", q=f"a {E} b"), call("write_file", path="x", n=[1, 2]), F]),
        # the singular opener, a bare name, arguments as a JSON string (Kimi-K2#26)
        (f'<|tool_call_section_begin|>{B}search:0{A}"{{\\"q\\": \\"x\\"}}"{E}'
         "<|tool_call_section_end|>", [call("search", q="x"), F]),
        # a section the model did not close: the call ends where text begins
        (f'{SEC}{B}functions.search:0{A}{{"q": "x"}}{E}Done.',
         [call("search", q="x"), ("text", "Done."), F]),
        # prose: the opener alone, or followed by anything but a call
        (f"the {SEC} token", [("text", f"the {SEC} token"), F]),
        (f"`{SEC}`", [("text", f"`{SEC}`"), F]),
        # errors: an unknown tool, a head that is no name, invalid JSON, text after
        # the arguments; the section goes on after each
        (f"{SEC}{B}functions.nope:0{A}{{}}{E}{B}functions.search:1{A}{{}}{E}{END}",
         [("error", "nope", "unknown_tool"), call("search"), F]),
        (f"{SEC}{B}search(q=1){A}{{}}{E}{END}", [("error", None, "malformed"), F]),
        (f'{SEC}{B}search:0{A}{{"q": x}}{E}{END}', [("error", "search", "invalid_json"), F]),
        (f'{SEC}{B}search:0{A}{{"q": "x"}} then{E}{END} ok',
         [("error", "search", "malformed"), ("text", " ok"), F]),
    ],
)
def test_kimi_calls_at_every_chunking(text: str, expect: list[tuple[object, ...]]) -> None:
    every_chunking("hermes", text, TOOLS, expect)


def test_each_call_keeps_its_markup_as_raw_and_arguments_stream() -> None:
    first = f'{SEC}{B}functions.search:0{A}{{"q": "ab"}}{E}'
    second = f'{B}functions.search:1{A}{{"q": "c"}}{E}{END}'
    events = run_checked("hermes", list(first + second), TOOLS)
    ends = [e for e in events if isinstance(e, CallEnd)]
    assert [e.raw for e in ends] == [first, second]
    assert len([e for e in events if isinstance(e, ArgsDelta) and e.index == 0]) > 3


@pytest.mark.parametrize(
    ("tail", "finish", "kind"),
    [(E, None, "call"), (E + "\n", "length", "call"), ("", "stop", "error"),
     ("", None, "error")],
)
def test_a_reply_that_ends_in_the_section(tail: str, finish: str | None, kind: str) -> None:
    text = f'{SEC}{B}functions.search:0{A}{{"q": "a"}}' + tail
    got = summary(run_checked("hermes", list(text), TOOLS, finish_reason=finish))
    assert got[0][0] == kind


def test_the_opener_is_held_within_the_stated_bound() -> None:
    parser = Parser("hermes", TOOLS)
    text = f"{SEC}{' ' * 16}{B}search:0{A}{{}}{E}"
    most = 0
    for c in text:
        parser.feed(c)
        most = max(most, parser.held)
    assert most == HOLD_BOUND == len(SEC) + 16 + len(B) - 1
    assert hold_bound(parser) >= HOLD_BOUND
    # one more space: prose
    text = f"{SEC}{' ' * 17}{B}"
    assert summary(run_checked("hermes", list(text), TOOLS)) == [("text", text), F]


def test_fragments_of_the_form_chunking_invariance() -> None:
    fragments_hold([SEC, END, B, A, E, "functions.search:0", '{"q": "x"}', '"{}"', " ", "\n",
                    "<|", "<|tool_call", "search", "{", "}", "Done."], ["hermes"], TOOLS)
