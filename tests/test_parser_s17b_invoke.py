"""The ``<function_calls><invoke name=…>`` call form (``parser.xml_invoke``), read in
``hermes`` and ``am_xml``: DeepSeek V3.2, GLM-5.1 and Kimi K2.5 write it
(NousResearch/hermes-agent#8965, nesquena/hermes-webui#702), DeepSeek V3.2 and V4
in their DSML tokens (hermes-agent#54283, #119261), MiniMax M2 inside
``<minimax:tool_call>`` (hermes-agent#27834). It was text: the call lost. Each
case whole, a character at a time and at random cuts, with ``run_checked``'s
invariants; then hypothesis over generated calls and over the form's pieces."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from parser_cases import F, call, chunkings, every_chunking, run_checked
from test_parser import SchemaCatalog
from test_parser_s16b_properties import SETTINGS, ends, fragments_hold, runs

from streamtools import tool
from streamtools.events import ArgsDelta, CallEnd, CallError
from streamtools.parser import Parser
from streamtools.tools import ToolRegistry

TOOLS = ["cronjob", "skills_list", "terminal", "search", "get_weather", "set_flag"]
DIALECTS = ["hermes", "am_xml"]
D = "\uff5cDSML\uff5c"
CRON = ('<function_calls>\n<invoke name="cronjob">\n'
        '<parameter name="action" string="true">list</parameter>\n</invoke>\n</function_calls>')
V4 = (f'<{D}tool_calls> <{D}invoke name="terminal"> <{D}parameter name="background" '
      f'string="false">true</{D}parameter> <{D}parameter name="command" string="true">cd /x '
      f'&& npx five-server . --port 23456</{D}parameter> </{D}invoke> </{D}tool_calls>')

CASES: dict[str, tuple[str, list[tuple[Any, ...]], str | None]] = {
    # hermes-agent#8965 (deepseek-v3.2, glm-5.1, kimi-k2.5 on Ollama's cloud)
    "ollama-cloud": ("I'll list them.\n" + CRON + "\nDone.",
                     [("text", "I'll list them.\n"), call("cronjob", action="list"),
                      ("text", "\nDone."), F], None),
    # hermes-webui#702: no parameters
    "no-parameters": ('<function_calls>\n<invoke name="skills_list">\n</invoke>\n'
                      "</function_calls>", [call("skills_list"), F], None),
    "self-closing": ('<function_calls><invoke name="skills_list"/></function_calls>',
                     [call("skills_list"), F], None),
    # DeepSeek V3.2's DSML tokens, two calls in one block
    "dsml-two-calls": (
        f'<{D}function_calls>\n<{D}invoke name="get_weather">\n<{D}parameter name="city" '
        f'string="true">Paris</{D}parameter>\n</{D}invoke>\n<{D}invoke name="search">\n'
        f'<{D}parameter name="q" string="true">a <b> & c</{D}parameter>\n</{D}invoke>\n'
        f"</{D}function_calls>",
        [call("get_weather", city="Paris"), call("search", q="a <b> & c"), F], None),
    # hermes-agent#119261: DeepSeek V4, one line, string="false" JSON
    "dsml-v4-one-line": (V4, [call("terminal", background=True,
                                   command="cd /x && npx five-server . --port 23456"), F], None),
    # hermes-agent#27834: MiniMax M2
    "minimax": ('<minimax:tool_call>\n  <invoke name="terminal">\n    <parameter name="command">'
                'ls -la</parameter>\n  </invoke>\n</minimax:tool_call>',
                [call("terminal", command="ls -la"), F], None),
    "string-true-keeps-text": ('<function_calls><invoke name="search"><parameter name="q" '
                               'string="true">[1, 2]</parameter></invoke></function_calls>',
                               [call("search", q="[1, 2]"), F], None),
    "string-false-is-json": (
        '<function_calls><invoke name="search"><parameter name="n" string="false">5'
        '</parameter><parameter name="tags" string="false">["a", 2]</parameter>'
        '<parameter name="o" string="false">{"k": null}</parameter><parameter name="w" '
        'string="false">plain words</parameter></invoke></function_calls>',
        [call("search", n=5, tags=["a", 2], o={"k": None}, w="plain words"), F], None),
    "json-body": ('<function_calls>\n<invoke name="search">\n{"q": "x</b>"}\n</invoke>\n'
                  "</function_calls>", [call("search", q="x</b>"), F], None),
    "tags-in-a-value": ('<function_calls><invoke name="search"><parameter name="q">a </invoke> '
                        '</function_calls> <parameter name="z"> c</parameter></invoke>'
                        "</function_calls>",
                        [call("search", q='a </invoke> </function_calls> <parameter name="z"> c'),
                         F], None),
    "special-token-between": ('<function_calls><invoke name="search"><|im_end|><parameter '
                              'name="q">x</parameter></invoke></function_calls>',
                              [call("search", q="x"), F], None),
    # the block's closing tag left out, or the provider stopped at it
    "block-close-left-out": (CRON[: -len("</function_calls>")] + "Next.",
                             [call("cronjob", action="list"), ("text", "Next."), F], None),
    "block-close-cut": (CRON[:-5], [call("cronjob", action="list"), F], "stop"),
    "cut-off-in-a-value": (CRON[:70], [("error", "cronjob", "unterminated"), F], None),
    "unknown-tool": ('<function_calls><invoke name="nope"><parameter name="a">1</parameter>'
                     "</invoke></function_calls>", [("error", "nope", "unknown_tool"), F], None),
    "no-name": ('<function_calls><invoke id="1"></invoke></function_calls>',
                [("error", None, "malformed"), F], None),
    "text-between-parameters": (
        '<function_calls><invoke name="search">q: <parameter name="q">x</parameter></invoke>'
        "</function_calls>", [("error", "search", "malformed"), F], None),
    "given-twice": ('<function_calls><invoke name="search"><parameter name="q">x</parameter>'
                    '<parameter name="q">y</parameter></invoke></function_calls>',
                    [("error", "search", "malformed"), F], None),
    # Luce-Org/lucebox#742: </invoke> left out before the next call or the block's end
    "invoke-close-left-out": (
        '<function_calls>\n<invoke name="search">\n<parameter name="q">x</parameter>\n'
        '<invoke name="cronjob">\n<parameter name="action">list</parameter>\n</invoke>\n'
        "</function_calls>", [call("search", q="x"), call("cronjob", action="list"), F], None),
    "invoke-close-left-out-at-the-end": (
        f'<{D}tool_calls>\n<{D}invoke name="search">\n<{D}parameter name="q" string="true">x'
        f"</{D}parameter>\n</{D}tool_calls> ok", [call("search", q="x"), ("text", " ok"), F],
        None),
    # sgl-project/sglang#39435: DeepSeek V4.1 left the token out of one tag
    "dsml-plain-parameter-tag": (
        "I'll call the `set_flag` function to enable the flag.\n\n"
        f'<{D}tool_calls>\n<{D}invoke name="set_flag">\n<parameter name="enabled">true'
        f"</{D}parameter>\n</{D}invoke>\n</{D}tool_calls>",
        [("text", "I'll call the `set_flag` function to enable the flag.\n\n"),
         call("set_flag", enabled="true"), F], None),
    "dsml-plain-parameter-closed-plain": (
        f'<{D}tool_calls><{D}invoke name="search"><parameter name="q">a</{D}b></parameter>'
        f"</{D}invoke></{D}tool_calls>", [call("search", q=f"a</{D}b>"), F], None),
    # vllm-project/vllm#54838: a value's closing tag left out before the next parameter
    "dsml-parameter-close-left-out": (
        f'<{D}function_calls>\n<{D}invoke name="search">\n<{D}parameter name="q" string="true">'
        f'cats\n<{D}parameter name="n" string="false">3</{D}parameter>\n</{D}invoke>\n'
        f"</{D}function_calls>", [call("search", q="cats", n=3), F], None),
    "dsml-last-parameter-close-left-out": (
        f'<{D}tool_calls> <{D}invoke name="search"> <{D}parameter name="q" string="true">cats'
        f" </{D}invoke> </{D}tool_calls>", [call("search", q="cats "), F], None),
    "plain-parameter-close-left-out": (
        '<function_calls>\n<invoke name="search">\n<parameter name="q">cats\n'
        '<parameter name="n">3</parameter>\n</invoke>\n</function_calls>',
        [call("search", q="cats", n="3"), F], None),
    # a plain tag inside a line, or one for a parameter given already, is the value's text
    "plain-parameter-tag-quoted": (
        '<function_calls><invoke name="search"><parameter name="q">write <parameter name="x">'
        "</parameter></invoke></function_calls>",
        [call("search", q='write <parameter name="x">'), F], None),
    # prose that names the tags stays prose
    "prose": ("Wrap calls in <function_calls> and <invoke> tags.",
              [("text", "Wrap calls in <function_calls> and <invoke> tags."), F], None),
    "prose-dsml": (f"The <{D}function_calls> token.",
                   [("text", f"The <{D}function_calls> token."), F], None),
    "prose-invoke-word": ("<function_calls><invoked>", [("text", "<function_calls><invoked>"), F],
                          None),
    "far-lead": ("<function_calls>" + " " * 17 + '<invoke name="search"></invoke>',
                 [("text", "<function_calls>" + " " * 17 + '<invoke name="search"></invoke>'),
                  F], None),
}


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_invoke_form(dialect: str, case: str) -> None:
    text, expect, finish = CASES[case]
    every_chunking(dialect, text, TOOLS, expect, finish_reason=finish)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_values_are_typed_by_the_schema_and_raw_is_the_call(dialect: str) -> None:
    # the schema wins over the attribute: a and b are numbers whatever string= says
    text = ('<function_calls>\n<invoke name="calc">\n<parameter name="a" string="true">1.5'
            '</parameter>\n<parameter name="b" string="false">2</parameter>\n</invoke>\n'
            "</function_calls>")
    events = run_checked(dialect, list(text), SchemaCatalog())
    (end,) = [e for e in events if isinstance(e, CallEnd)]
    assert end.arguments == {"a": 1.5, "b": 2} and end.raw == text


@tool
def pick(v: int | str, note: str | None = None) -> str:
    """Pick a value."""
    return str(v)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(
    ("value", "note", "want"),
    [
        ('string="true">5', 'string="true">null', {"v": "5", "note": "null"}),
        ('string="false">5', 'string="false">null', {"v": 5, "note": None}),
        (">5", ">null", {"v": 5, "note": None}),  # no attribute: the schema's reading
    ],
)
def test_the_string_attribute_decides_where_the_schema_allows_several_types(
    dialect: str, value: str, note: str, want: dict[str, Any]
) -> None:
    text = (f'<function_calls><invoke name="pick"><parameter name="v" {value}</parameter>'
            f'<parameter name="note" {note}</parameter></invoke></function_calls>')
    for _, chunks in chunkings(text):
        events = run_checked(dialect, chunks, ToolRegistry([pick]))
        assert [e.arguments for e in events if isinstance(e, CallEnd)] == [want]


def test_each_call_of_a_block_ends_when_the_next_begins() -> None:
    parser = Parser("hermes", TOOLS)
    first = parser.feed('<function_calls>\n<invoke name="search">\n<parameter name="q">x'
                        "</parameter>\n</invoke>\n")
    assert not [e for e in first if isinstance(e, CallEnd)]  # the block may end here
    second = parser.feed('<invoke name="cronjob">')
    (end,) = [e for e in second if isinstance(e, CallEnd)]
    assert end.arguments == {"q": "x"} and end.raw.endswith("</invoke>\n")


def test_a_string_value_streams_as_it_grows() -> None:
    parser = Parser("am_xml", TOOLS)
    parser.feed('<function_calls><invoke name="search"><parameter name="q" string="true">ca')
    got = parser.feed("ts and")
    assert [e.delta for e in got if isinstance(e, ArgsDelta)] == ["ts and"]


def test_an_error_keeps_the_raw_text_and_says_what_to_write() -> None:
    text = ('<function_calls><invoke name="search">q: <parameter name="q">x</parameter>'
            "</invoke></function_calls>")
    (error,) = [e for e in run_checked("hermes", [text], TOOLS) if isinstance(e, CallError)]
    assert error.raw == text and "'q:'" in error.message and "<invoke name=" in error.message


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_error_quotes_the_text_as_written_whatever_the_cut(dialect: str) -> None:
    text = f'<{D}tool_calls><{D}invoke name="search">x y\tz </{D}invoke></{D}tool_calls>'
    for how, chunks in chunkings(text):
        events = run_checked(dialect, chunks, TOOLS)
        (error,) = [e for e in events if isinstance(e, CallError)]
        assert "Text 'x y\\tz'" in error.message, how


def test_the_undecided_lead_is_held_no_longer_than_its_bound() -> None:
    parser = Parser("hermes", TOOLS)
    lead = f"<{D}function_calls>" + "\n" * 16 + f"<{D}invoke"
    assert parser.feed(lead) == [] and parser.held == len(lead)
    got = parser.feed(' name="search">')
    assert parser.held == 0 and [type(e).__name__ for e in got] == ["CallStart"]


WORD = st.from_regex(r"[A-Za-z0-9 _./-]{0,10}", fullmatch=True)
OPENERS = ["function_calls", f"{D}function_calls", f"{D}tool_calls", "minimax:tool_call"]


def test_generated_blocks_at_any_cut() -> None:
    @SETTINGS
    @given(st.lists(st.tuples(st.sampled_from(["", "Checking.\n", "ok "]),
                              st.sampled_from(OPENERS),
                              st.lists(st.tuples(st.sampled_from(TOOLS),
                                                 st.dictionaries(st.sampled_from(["q", "x"]),
                                                                 WORD, max_size=2)),
                                       min_size=1, max_size=3),
                              st.sampled_from(["", "\n", " "])), min_size=1, max_size=2),
           st.sampled_from(DIALECTS), st.lists(st.integers(0, 10_000), max_size=20))
    def prop(blocks: list[tuple[str, str, list[tuple[str, dict[str, str]]], str]],
             dialect: str, points: list[int]) -> None:
        text = ""
        for prose, opener, calls, sp in blocks:
            p = D if D in opener else ""
            text += f"{prose}<{opener}>{sp}" + "".join(
                f'<{p}invoke name="{name}">{sp}' + "".join(
                    f'<{p}parameter name="{k}" string="true">{v}</{p}parameter>{sp}'
                    for k, v in args.items()) + f"</{p}invoke>{sp}"
                for name, args in calls) + f"</{opener}>"
        text += " end"
        want = [(n, a) for _, _, calls, _ in blocks for n, a in calls]
        assert ends(runs(dialect, text, points, TOOLS)) == want

    prop()


PIECES = ["<function_calls>", "</function_calls>", f"<{D}tool_calls>", f"</{D}tool_calls>",
          '<invoke name="search">', f'<{D}invoke name="search">', "</invoke>", f"</{D}invoke>",
          '<parameter name="q">', '<parameter name="q" string="false">', "</parameter>",
          f'<{D}parameter name="q">', f"</{D}parameter>", "<invoke", "<inv", "</func",
          "search", "1", "x y", "\n", " ", "<", ">", "/>", "{", '"', "<|im_end|>"]


def test_fragments_of_the_form_chunking_invariance() -> None:
    fragments_hold(PIECES, DIALECTS, TOOLS)
