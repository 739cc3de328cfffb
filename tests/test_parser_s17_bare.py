"""Qwen3-Coder's call form with its ``<tool_call>`` opener left out, in ``hermes``
and ``am_xml`` (``parser.qwen_bare``): ``<function=NAME>…</function>`` and the
closing ``</tool_call>`` the model still writes (ollama/ollama#18530, #16686;
vitali87/code-graph-rag#236). A call for a tool of the catalog (any name without
one); prose otherwise. Each case whole, a character at a time and at random
cuts, with ``run_checked``'s invariants (the stated hold-back bound among them);
then hypothesis over generated calls and over the form's pieces."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from parser_cases import F, call, every_chunking, hold_bound, run_checked, summary
from test_parser_s16b_properties import SETTINGS, ends, fragments_hold, runs

from streamtools.events import CallEnd
from streamtools.parser import Parser
from streamtools.parser.gemma_call import HOLD_BOUND as GEMMA_HOLD
from streamtools.parser.qwen_bare import HOLD_BOUND, NAME_LIMIT

TOOLS = ["Read", "glob", "list_directory", "search"]
READ = ("<function=Read>\n<parameter=file_path>\n/path/to/the/file.md\n</parameter>\n"
        "</function>")
MEANT = call("Read", file_path="/path/to/the/file.md")
DIALECTS = ["hermes", "am_xml"]

CASES: dict[str, tuple[str, list[tuple[Any, ...]]]] = {
    # ollama#16686: no opener, the closing tag kept
    "closing-tag-kept": (READ + "\n</tool_call>", [MEANT, F]),
    # ollama#18530: a sentence of reasoning, a blank line, then the call
    "after-reasoning": ("I'll read it first.\n\n" + READ + "\n</tool_call>",
                        [("text", "I'll read it first.\n\n"), MEANT, F]),
    # code-graph-rag#236: all on one line
    "one-line": ("<function=list_directory><parameter=path>/tmp</parameter></function>"
                 "</tool_call>", [call("list_directory", path="/tmp"), F]),
    "no-closing-tag": (READ, [MEANT, F]),
    "text-after": (READ + "\nDone.", [MEANT, ("text", "Done."), F]),
    "closing-tag-then-text": (READ + "\n</tool_call> More.", [MEANT, ("text", " More."), F]),
    "end-of-turn-token": (READ + "\n<|im_end|>", [MEANT, F]),
    "two-calls": (READ + "\n<function=search>\n<parameter=q>\nx\n</parameter>\n</function>\n"
                  "</tool_call>", [MEANT, call("search", q="x"), F]),
    "then-a-whole-block": (READ + "\n<tool_call>\n<function=glob>\n<parameter=p>\n*.py\n"
                           "</parameter>\n</function>\n</tool_call>",
                           [MEANT, call("glob", p="*.py"), F]),
    "json-arguments": ('<function=search>{"q": "x"}</function>', [call("search", q="x"), F]),
    "a-closing-tag-start-at-the-end": (READ + "\n</tool_", [MEANT, ("text", "</tool_"), F]),
    # prose: no tool of that name, not a tag, quoted, cut off in the name
    "unknown-name": ("use <function=foo> here", [("text", "use <function=foo> here"), F]),
    "not-a-tag": ("x.<function=y", [("text", "x.<function=y"), F]),
    "spaced-name": ("<function=Read me>", [("text", "<function=Read me>"), F]),
    "quoted": ("`<function=Read>` is the tag", [("text", "`<function=Read>` is the tag"), F]),
    "cut-in-the-name": ("a <function=Rea", [("text", "a <function=Rea"), F]),
    # a tool's name in the tag, in prose: the tag alone is the error, the prose goes on
    "named-in-prose": ("Qwen writes <function=search> tags. More text, and more.",
                       [("text", "Qwen writes "), ("error", "search", "malformed"),
                        ("text", "tags. More text, and more."), F]),
    "named-in-prose-at-the-end": ("Qwen writes <function=search> tags",
                                  [("text", "Qwen writes "), ("error", "search", "malformed"),
                                   ("text", "tags"), F]),
    "invalid-json-arguments": ("<function=search>{bad} and more",
                               [("error", "search", "invalid_json"), ("text", "bad} and more"),
                                F]),
}


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_bare_form(dialect: str, case: str) -> None:
    text, expect = CASES[case]
    for finish in ("stop", None):
        every_chunking(dialect, text, TOOLS, expect, finish_reason=finish, with_finish=False)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_its_raw_text_is_the_call_s_markup_and_the_closing_tag(dialect: str) -> None:
    text = "Reading.\n" + READ + "\n</tool_call>"
    (end,) = [e for e in run_checked(dialect, [text], TOOLS) if isinstance(e, CallEnd)]
    assert end.raw == READ + "\n</tool_call>"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_cut_off_inside_it_is_unterminated(dialect: str) -> None:
    events = run_checked(dialect, list(READ[:-12]), TOOLS, finish_reason="stop")
    assert summary(events)[0] == ("error", "Read", "unterminated")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_without_a_catalog_any_name_up_to_the_limit_is_a_call(dialect: str) -> None:
    name = "t" * NAME_LIMIT
    text = f"<function={name}><parameter=a>1</parameter></function>"
    assert summary(run_checked(dialect, [text], None))[0] == ("call", name, {"a": "1"})
    longer = text.replace(name, name + "t")
    assert summary(run_checked(dialect, [longer], None))[0] == ("text", longer)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_hold_back_is_the_stated_bound(dialect: str) -> None:
    """Undecided while the name arrives: at most ``<function=`` and the name
    limit held, a character at a time, and ``hold_bound`` says so."""
    parser = Parser(dialect, None)
    most = 0
    for c in "x <function=" + "n" * (NAME_LIMIT + 3):
        parser.feed(c)
        most = max(most, parser.held)
    assert most == HOLD_BOUND == len("<function=") + NAME_LIMIT
    # (hermes also reads Gemma 4's <|tool_call>call:NAME{, which holds more: gemma_call)
    assert hold_bound(parser) == (GEMMA_HOLD if dialect == "hermes" else HOLD_BOUND)


WORD = st.from_regex(r"[A-Za-z0-9_./-]{0,10}", fullmatch=True)


def test_generated_bare_calls_at_any_cut() -> None:
    @SETTINGS
    @given(st.lists(st.tuples(st.sampled_from(["", "Checking.\n\n", "ok "]),
                              st.sampled_from(TOOLS), st.dictionaries(
                                  st.sampled_from(["q", "path", "n"]), WORD, max_size=3),
                              st.sampled_from(["", "\n</tool_call>", "</tool_call>\n"])),
                    min_size=1, max_size=3),
           st.sampled_from(DIALECTS), st.lists(st.integers(0, 10_000), max_size=20))
    def prop(calls: list[tuple[str, str, dict[str, str], str]], dialect: str,
             points: list[int]) -> None:
        text = "".join(
            prose + f"<function={name}>\n"
            + "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in args.items())
            + "</function>" + close
            for prose, name, args, close in calls
        ) + "\nend"
        assert ends(runs(dialect, text, points, TOOLS)) == [(n, a) for _, n, a, _ in calls]

    prop()


PIECES = ["<function=", "<function=Read>", "<function=search>", "Read", "sea", ">", "<",
          "</function>", "</tool_call>", "</tool_", "<tool_call>", "<parameter=q>",
          "</parameter>", "<|im_end|>", "\n", " ", "x", "`", '{"q": 1}', "="]


def test_fragments_of_the_form_chunking_invariance() -> None:
    fragments_hold(PIECES, DIALECTS, TOOLS)
