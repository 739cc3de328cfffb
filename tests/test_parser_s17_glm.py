"""GLM's call form inside ``<tool_call>`` (``parser.xml_glm``), read in ``hermes``
and ``am_xml`` as Qwen3-Coder's is: ``<tool_call>NAME<arg_key>K</arg_key>
<arg_value>V</arg_value></tool_call>``, which GLM-4.5 and later write in their
template's special tokens whatever the prompt teaches (lablup/mlxcel#765 states
the grammar; zai-org/GLM-4.5#40 found the hermes parser reading none of it;
osaurus-ai/vmlx-swift#228 the call without parameters). Each case whole, a
character at a time and at random cuts, with ``run_checked``'s invariants; then
hypothesis over generated calls and over the form's pieces."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from parser_cases import F, call, every_chunking, run_checked
from test_parser import SchemaCatalog
from test_parser_s16b_properties import SETTINGS, ends, fragments_hold, runs

from streamtools.events import CallEnd, CallError

TOOLS = ["get_weather", "list_mailboxes", "search"]
DIALECTS = ["hermes", "am_xml"]
PARIS = ("<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
         "</tool_call>")

CASES: dict[str, tuple[str, list[tuple[Any, ...]], str | None]] = {
    "laid-out": (PARIS, [call("get_weather", city="Paris"), F], None),
    "one-line-two-values": (
        "Checking.<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value>"
        "<arg_key>days</arg_key><arg_value>3</arg_value></tool_call> ok",
        [("text", "Checking."), call("get_weather", city="Paris", days="3"), ("text", " ok"),
         F], None),
    "no-parameters": ("<tool_call>list_mailboxes</tool_call>", [call("list_mailboxes"), F], None),
    "no-parameters-newline": ("<tool_call>list_mailboxes\n</tool_call>",
                              [call("list_mailboxes"), F], None),
    "tags-in-a-value": (
        "<tool_call>search\n<arg_key>q</arg_key>\n<arg_value>a </arg_key> <b> </tool_call> c"
        "</arg_value>\n</tool_call>", [call("search", q="a </arg_key> <b> </tool_call> c"), F],
        None),
    # the provider removed </tool_call>, its stop string
    "closing-tag-removed": (PARIS[: -len("</tool_call>")], [call("get_weather", city="Paris"),
                                                            F], "stop"),
    "cut-off": (PARIS[: -len("</tool_call>")], [("error", "get_weather", "unterminated"), F],
                None),
    "unknown-tool": ("<tool_call>nope\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n"
                     "</tool_call>", [("error", "nope", "unknown_tool"), F], None),
    # not this form: as before, malformed with the raw text
    "prose-after-the-tag": ("I will use the <tool_call> tag.",
                            [("text", "I will use the "), ("error", None, "malformed"), F], None),
    "a-function-call": ('<tool_call>search(q="x")</tool_call>',
                        [("error", None, "malformed"), F], None),
    "text-where-a-value-is-due": (
        "<tool_call>search\n<arg_key>q</arg_key> x <arg_value>y</arg_value></tool_call>",
        [("error", "search", "malformed"), F], None),
    "another-tag-between": ("<tool_call>search\n<parameter=q>x</parameter>\n</tool_call>",
                            [("error", "search", "malformed"), F], None),
}


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_glm_form(dialect: str, case: str) -> None:
    text, expect, finish = CASES[case]
    every_chunking(dialect, text, TOOLS, expect, finish_reason=finish)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_values_are_typed_by_the_schema_and_raw_is_the_block(dialect: str) -> None:
    text = ("<tool_call>calc\n<arg_key>a</arg_key>\n<arg_value>1.5</arg_value>\n"
            "<arg_key>b</arg_key>\n<arg_value>2</arg_value>\n</tool_call>")
    events = run_checked(dialect, list(text), SchemaCatalog())
    (end,) = [e for e in events if isinstance(e, CallEnd)]
    assert end.arguments == {"a": 1.5, "b": 2} and end.raw == text


def test_a_string_value_streams_as_it_grows() -> None:
    from streamtools.events import ArgsDelta
    from streamtools.parser import Parser

    parser = Parser("hermes", TOOLS)
    parser.feed("<tool_call>search\n<arg_key>q</arg_key>\n<arg_value>ca")
    got = parser.feed("ts and")
    assert [e.delta for e in got if isinstance(e, ArgsDelta)] == ["ts and"]


def test_an_error_in_it_keeps_the_raw_text() -> None:
    text = "<tool_call>search\n<arg_key>q</arg_key> x <arg_value>y</arg_value></tool_call>"
    (error,) = [e for e in run_checked("hermes", [text], TOOLS) if isinstance(e, CallError)]
    assert error.raw == text and "<arg_value>" in error.message


WORD = st.from_regex(r"[A-Za-z0-9 _./-]{0,10}", fullmatch=True)


def test_generated_glm_calls_at_any_cut() -> None:
    @SETTINGS
    @given(st.lists(st.tuples(st.sampled_from(["", "Checking.\n", "ok "]),
                              st.sampled_from(TOOLS),
                              st.dictionaries(st.sampled_from(["q", "city", "n"]), WORD,
                                              max_size=3),
                              st.sampled_from(["", "\n"])), min_size=1, max_size=3),
           st.sampled_from(DIALECTS), st.lists(st.integers(0, 10_000), max_size=20))
    def prop(calls: list[tuple[str, str, dict[str, str], str]], dialect: str,
             points: list[int]) -> None:
        text = "".join(
            f"{prose}<tool_call>{name}{sp}"
            + "".join(f"<arg_key>{k}</arg_key>{sp}<arg_value>{v}</arg_value>{sp}"
                      for k, v in args.items())
            + "</tool_call>"
            for prose, name, args, sp in calls
        ) + " end"
        assert ends(runs(dialect, text, points, TOOLS)) == [(n, a) for _, n, a, _ in calls]

    prop()


PIECES = ["<tool_call>", "</tool_call>", "search", "get_weather", "<arg_key>", "</arg_key>",
          "<arg_value>", "</arg_value>", "<arg_", "</arg", "q", "x y", "\n", " ", "<", ">",
          "{", "(", "<|im_end|>"]


def test_fragments_of_the_form_chunking_invariance() -> None:
    fragments_hold(PIECES, DIALECTS, TOOLS)
