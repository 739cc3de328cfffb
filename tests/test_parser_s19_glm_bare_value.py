"""GLM's call form with a value written without its opening ``<arg_value>``:
``<tool_call>search<arg_key>query</arg_key>how many vacation days left</arg_value>
</tool_call>``, which GLM-4.7-family models write under load (raw tokens in
vllm-project/vllm#49248, where vLLM's glm47 parser read it as no arguments). It
was ``malformed`` here, the call lost; the value is now read up to
``</arg_value>``. Each case whole, a character at a time and at random cuts,
with ``run_checked``'s invariants (conservation, append-only arguments, the
hold-back bound)."""

from __future__ import annotations

from typing import Any

import pytest
from parser_cases import F, call, every_chunking, run_checked
from test_parser import SchemaCatalog

from streamtools.events import ArgsDelta, CallEnd, CallError

TOOLS = ["search", "get_weather"]
DIALECTS = ["hermes", "am_xml"]
ISSUE = ("<tool_call>search<arg_key>query</arg_key>how many vacation days left</arg_value>"
         "</tool_call>")

CASES: dict[str, tuple[str, list[tuple[Any, ...]], str | None]] = {
    "as-in-the-issue": (ISSUE + " ok", [call("search", query="how many vacation days left"),
                                        ("text", " ok"), F], None),
    "laid-out-then-a-whole-pair": (
        "<tool_call>get_weather\n<arg_key>city</arg_key>\nParis\n</arg_value>\n"
        "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
        [call("get_weather", city="Paris", days="3"), F], None),
    "markup-in-the-value": (
        "<tool_call>search<arg_key>q</arg_key>a <b> c</arg_value></tool_call>",
        [call("search", q="a <b> c"), F], None),
    "closing-tag-removed": (ISSUE[: -len("</tool_call>")],
                            [call("search", query="how many vacation days left"), F], "stop"),
    "cut-off": (ISSUE[: -len("</arg_value></tool_call>")],
                [("error", "search", "unterminated"), F], None),
    # no value where one is due: still malformed, the raw text kept
    "no-closing-tag-either": ("<tool_call>get_weather\n<arg_key>city</arg_key>\nParis\n"
                              "</tool_call>", [("error", "get_weather", "malformed"), F], None),
    "the-next-key-first": (
        "<tool_call>search<arg_key>q</arg_key>x<arg_key>n</arg_key><arg_value>1</arg_value>"
        "</tool_call>", [("error", "search", "malformed"), F], None),
}


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_value_without_its_opening_tag(dialect: str, case: str) -> None:
    text, expect, finish = CASES[case]
    every_chunking(dialect, text, TOOLS, expect, finish_reason=finish)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_it_is_typed_by_the_schema_and_streams(dialect: str) -> None:
    text = ("<tool_call>calc<arg_key>a</arg_key>1.5</arg_value><arg_key>b</arg_key>"
            "2</arg_value></tool_call>")
    (end,) = [e for e in run_checked(dialect, list(text), SchemaCatalog())
              if isinstance(e, CallEnd)]
    assert end.arguments == {"a": 1.5, "b": 2} and end.raw == text

    from streamtools.parser import Parser

    parser = Parser(dialect, TOOLS)
    parser.feed("<tool_call>search<arg_key>q</arg_key>ca")
    got = parser.feed("ts and")
    assert [e.delta for e in got if isinstance(e, ArgsDelta)] == ["ts and"]


def test_the_error_tells_the_form() -> None:
    text = "<tool_call>search<arg_key>q</arg_key>x<arg_value>y</arg_value></tool_call>"
    (error,) = [e for e in run_checked("hermes", list(text), TOOLS)
                if isinstance(e, CallError)]
    assert error.raw == text
    assert error.message.startswith("Text where <arg_value> is due after </arg_key>")
