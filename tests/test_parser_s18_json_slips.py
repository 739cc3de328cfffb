"""A JSON call with one closing brace too many (``{"name": …, "arguments":
{…}}}``, as Qwen and QwQ models write it: langchain-qwq#30) was
``CallError(malformed)`` ("Expected </tool_call> right after the JSON object"),
the call lost for a slip that changes nothing it says. The object was complete:
the brace is markup before the closing marker (``jsoncall``'s SUFFIX)."""

from __future__ import annotations

import pytest
from parser_cases import F, call, every_chunking

TOOLS = ["search"]


@pytest.mark.parametrize(
    ("dialect", "text"),
    [
        ("hermes", '<tool_call>\n{"name": "search", "arguments": {"q": "a}"}}}\n</tool_call>ok'),
        ("hermes", '<tool_call>{"name": "search", "arguments": {"q": "a}"}}} }</tool_call>ok'),
        ("am_xml", '<tool_call>{"name": "search", "arguments": {"q": "a}"}}}</tool_call>ok'),
        ("json_action", '```json action\n{"tool": "search", "parameters": {"q": "a}"}}}\n```ok'),
    ],
    ids=["hermes", "hermes-two", "am_xml", "json_action"],
)
def test_a_brace_too_many_after_the_object_is_markup(dialect: str, text: str) -> None:
    every_chunking(dialect, text, TOOLS, [call("search", q="a}"), ("text", "ok"), F])


def test_a_brace_too_many_before_a_marker_the_provider_removed() -> None:
    text = '<tool_call>{"name": "search", "arguments": {"q": "a"}}}\n'
    every_chunking("hermes", text, TOOLS, [call("search", q="a"), F], finish_reason="stop")


def test_other_text_after_the_object_is_still_malformed() -> None:
    text = '<tool_call>{"name": "search", "arguments": {"q": "a"}}} x</tool_call>'
    every_chunking("hermes", text, TOOLS, [("error", "search", "malformed"), F])
