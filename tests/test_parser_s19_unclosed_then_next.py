"""``hermes`` (and ``am_xml``'s ``<tool_call>``): a call complete but for its
``</tool_call>``, the model's next ``<tool_call>`` after it. Models leave the
closing tag out (minpeter/ai-sdk-tool-call-middleware#295, JustVugg/colibri#505),
and a call so left before prose already ran (``test_parser_s18b_prose_after_call``),
as did ``json_action``'s block before the next fence and an ``<invoke>`` before the
next; before the next call it was ``CallError(unterminated)``, the first call
lost. It now ends complete where the next begins; a call broken before that is
still an error."""

from __future__ import annotations

from typing import Any

import pytest
from parser_cases import F, call, every_chunking, run_checked

from streamtools.events import CallEnd

TOOLS = ["search", "calc"]
FIRST = '<tool_call>\n{"name": "search", "arguments": {"q": "a"}}\n'
QWEN_FIRST = "<tool_call>\n<function=search>\n<parameter=q>\na\n</parameter>\n</function>\n"
NEXT = '<tool_call>\n{"name": "calc", "arguments": {"a": 1}}\n</tool_call>'

CASES: dict[str, tuple[str, list[str], list[tuple[Any, ...]], str | None]] = {
    "json-then-next": (FIRST + NEXT + " ok", ["hermes"],
                       [call("search", q="a"), call("calc", a=1), ("text", " ok"), F], None),
    "three-in-a-row": (FIRST + FIRST + NEXT, ["hermes"],
                       [call("search", q="a"), call("search", q="a"), call("calc", a=1), F],
                       None),
    "the-last-one-unclosed-too": (FIRST + NEXT[:-12], ["hermes"],
                                  [call("search", q="a"), call("calc", a=1), F], "stop"),
    "qwen-form-then-next": (QWEN_FIRST + NEXT, ["hermes", "am_xml"],
                            [call("search", q="a"), call("calc", a=1), F], None),
    # still errors: a broken object, a function not closed, a call cut before it
    "invalid-json-then-next": ('<tool_call>{"name": "search", "arguments": {q: 1}}\n' + NEXT,
                               ["hermes"], [("error", "search", "invalid_json"), F], None),
    "function-not-closed": (
        "<tool_call>\n<function=search>\n<parameter=q>a</parameter>\n" + NEXT,
        ["hermes", "am_xml"], [("error", "search", "unterminated"), call("calc", a=1), F],
        None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_call_whose_close_was_left_out_before_the_next(case: str) -> None:
    text, dialects, expect, finish = CASES[case]
    for dialect in dialects:
        every_chunking(dialect, text, TOOLS, expect, finish_reason=finish)


def test_each_keeps_its_own_text_as_raw() -> None:
    ends = [e for e in run_checked("hermes", list(FIRST + NEXT), TOOLS)
            if isinstance(e, CallEnd)]
    assert [e.raw for e in ends] == [FIRST, NEXT]
