"""A call whose markup is complete but whose closing marker never comes, prose
on the next line instead (``<tool_call>{"name": …, "arguments": {…}}\\nDone.``,
``</function>\\nDone.`` in Qwen3-Coder's form): models leave ``</tool_call>`` out
(minpeter/ai-sdk-tool-call-middleware#295: 0-16 % of calls through a hermes
prompt; JustVugg/colibri#505), and vLLM's hermes parser, which reads an unclosed
call to the end of the text, loses it once prose follows. It was
``CallError(malformed)``, the call lost. The call now completes at the end of
its markup (and its layout), and the prose is text; other text after the
object, or prose on the object's own line, is still an error."""

from __future__ import annotations

import pytest
from parser_cases import F, call, every_chunking, run_checked
from test_parser_s16b_properties import fragments_hold

from streamtools.events import CallEnd, TextDelta

TOOLS = ["search"]
JSON = '{"name": "search", "arguments": {"q": "a"}}'
QWEN = "<function=search>\n<parameter=q>\na\n</parameter>\n</function>"
SEARCH = call("search", q="a")


@pytest.mark.parametrize(
    ("dialect", "text"),
    [
        ("hermes", f"<tool_call>{JSON}\nDone."),
        ("hermes", f"<tool_call>\n{JSON} \r\n\n  Done, 2 hits."),
        ("hermes", f"<tool_call>\n{QWEN}\nDone."),
        ("am_xml", f"<tool_call>{JSON}\nDone."),
        ("am_xml", f"<tool_call>\n{QWEN}\n\nDone."),
        ("json_action", '```json action\n{"tool": "search", "parameters": {"q": "a"}}\nDone.'),
    ],
    ids=["hermes", "hermes-layout", "hermes-qwen", "am_xml", "am_xml-qwen", "json_action"],
)
@pytest.mark.parametrize("finish", [None, "stop"])
def test_prose_on_the_next_line_ends_a_complete_call(
    dialect: str, text: str, finish: str | None
) -> None:
    prose = text[text.rindex("D"):]
    every_chunking(dialect, text, TOOLS, [SEARCH, ("text", prose), F], finish_reason=finish,
                   with_finish=False)


def test_the_call_keeps_its_markup_and_layout_the_prose_is_text() -> None:
    text = f"Sure.\n<tool_call>\n{JSON}\n\nDone."
    events = run_checked("hermes", list(text), TOOLS)
    end = next(e for e in events if isinstance(e, CallEnd))
    assert end.raw == f"<tool_call>\n{JSON}\n\n"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Sure.\nDone."


def test_a_closing_tag_after_the_prose_is_text() -> None:
    every_chunking("hermes", f"<tool_call>{JSON}\nDone.</tool_call>", TOOLS,
                   [SEARCH, ("text", "Done.</tool_call>"), F])


def test_the_next_call_after_the_prose_is_read() -> None:
    text = f"<tool_call>{JSON}\nNow the next.\n<tool_call>{JSON}</tool_call>"
    every_chunking("hermes", text, TOOLS, [SEARCH, ("text", "Now the next.\n"), SEARCH, F])


@pytest.mark.parametrize(
    "text",
    [
        f"<tool_call>{JSON} Done.</tool_call>",  # on the object's line
        f"<tool_call>{JSON}\n- Done.</tool_call>",  # not a letter or digit
        f"<tool_call>{JSON}\n[Done]</tool_call>",
        f"<tool_call>\n{QWEN} Done.</tool_call>",
        f"<tool_call>\n{QWEN}\n* Done.</tool_call>",
    ],
)
def test_other_text_after_the_markup_is_still_malformed(text: str) -> None:
    every_chunking("hermes", text, TOOLS, [("error", "search", "malformed"), F])


def test_an_incomplete_object_is_still_an_error() -> None:
    text = '<tool_call>{"name": "search", "arguments": {"q": "a"}\nDone.'
    every_chunking("hermes", text, TOOLS, [("error", "search", "invalid_json"), F])


def test_an_unknown_tool_is_still_an_error_and_the_prose_text() -> None:
    text = '<tool_call>{"name": "nope", "arguments": {}}\nDone.'
    every_chunking("hermes", text, TOOLS, [("error", "nope", "unknown_tool"), ("text", "Done."), F])


def test_prose_after_calls_holds_the_invariants() -> None:
    pieces = [
        "<tool_call>", "</tool_call>", JSON, QWEN, "\n", " ", "Done.", "- x", "<", "}",
        '{"name": "search", "arguments": {"q": "', "<function=search>", "</function>",
    ]
    fragments_hold(pieces, ["hermes", "am_xml"], TOOLS)
