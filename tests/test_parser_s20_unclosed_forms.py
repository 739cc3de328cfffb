"""``am_xml``'s own ``<am:tool_call>`` and GLM's ``<tool_call>NAME<arg_key>…``
form (in ``hermes`` and ``am_xml``), a call complete but for its closing tag,
the model's next call right after it: the first was ``CallError(unterminated)``,
lost for a missing tag, while ``hermes``' JSON form and Qwen3-Coder's already
ended complete there (50d101e; models leave the closing tag out:
minpeter/ai-sdk-tool-call-middleware#295, JustVugg/colibri#505; GLM-family
models drop their own tags under load, vllm-project/vllm#49248). It now ends
where the next begins, as its closing tag would; a call broken before that (a
tag not finished, a value not closed) is still an error."""

from __future__ import annotations

from typing import Any

import pytest
from parser_cases import F, call, every_chunking, run_checked

from streamtools.events import CallEnd

TOOLS = ["search", "calc"]
AM_FIRST = '<am:tool_call name="search"><q>a</q>\n'
AM_NEXT = '<am:tool_call name="calc"><a>1</a></am:tool_call>'
GLM_FIRST = "<tool_call>search\n<arg_key>q</arg_key>\n<arg_value>a</arg_value>\n"
GLM_NEXT = "<tool_call>calc\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>"
BOTH = [call("search", q="a"), call("calc", a="1")]

CASES: dict[str, tuple[str, list[str], list[tuple[Any, ...]], str | None]] = {
    "am-then-next": (AM_FIRST + AM_NEXT + " ok", ["am_xml"], [*BOTH, ("text", " ok"), F], None),
    "am-three": (AM_FIRST + AM_FIRST + AM_NEXT, ["am_xml"],
                 [call("search", q="a"), *BOTH, F], None),
    "am-no-layout": (AM_FIRST.strip() + AM_NEXT, ["am_xml"], [*BOTH, F], None),
    "am-the-last-cut-by-the-stop": (AM_FIRST + AM_NEXT[:-15], ["am_xml"], [*BOTH, F], "stop"),
    "glm-then-next": (GLM_FIRST + GLM_NEXT, ["hermes", "am_xml"], [*BOTH, F], None),
    "glm-name-only-then-next": ("<tool_call>search\n" + GLM_NEXT, ["hermes", "am_xml"],
                                [call("search"), call("calc", a="1"), F], None),
    # still errors: a tag not finished, a value not closed, text out of place
    "am-tag-broken": ('<am:tool_call name="search" ' + AM_NEXT, ["am_xml"],
                      [("error", None, "unterminated"), call("calc", a="1"), F], None),
    "am-value-open": ('<am:tool_call name="search"><q>a' + AM_NEXT, ["am_xml"],
                      [("error", "search", "unterminated"), F], None),
    "am-stray-text": ('<am:tool_call name="search"><q>a</q> oops ' + AM_NEXT, ["am_xml"],
                      [("error", "search", "malformed"), call("calc", a="1"), F], None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_call_whose_close_was_left_out_before_the_next(case: str) -> None:
    text, dialects, expect, finish = CASES[case]
    for dialect in dialects:
        every_chunking(dialect, text, TOOLS, expect, finish_reason=finish)


@pytest.mark.parametrize(("dialect", "first", "after"), [
    ("am_xml", AM_FIRST, AM_NEXT), ("hermes", GLM_FIRST, GLM_NEXT), ("am_xml", GLM_FIRST, GLM_NEXT),
])
def test_each_keeps_its_own_text_as_raw(dialect: str, first: str, after: str) -> None:
    ends = [e for e in run_checked(dialect, list(first + after), TOOLS) if isinstance(e, CallEnd)]
    assert [e.raw for e in ends] == [first, after]
