"""``am_xml``: a ``[`` or ``{`` written as a character reference where a value
whose kind is undecided begins (``&#91;1, 2]``) says "text": the value is the
string ``[1, 2]`` under any schema that allows a string, where bare (or in
CDATA) it is the array. The render side writes a past call's string of JSON
array text so (``test_parser_s16_roundtrip``). Whole, a character at a time and
at random cuts, with ``run_checked``'s invariants."""

from __future__ import annotations

from typing import Any

import pytest
from parser_cases import chunkings, run_checked, summary

from streamtools import tool
from streamtools.tools import ToolRegistry


@tool
def put(auto: list[int] | str = "", nullable: str | None = None, text: str = "",
        items: list[int] | None = None) -> str:
    """Put."""
    return "ok"


REGISTRY = ToolRegistry([put])


def _call(param: str, value: str) -> str:
    return f'<am:tool_call name="put"><{param}>{value}</{param}></am:tool_call>'


@pytest.mark.parametrize("tools", [REGISTRY, ["put"]], ids=["schema", "names"])
@pytest.mark.parametrize("param", ["auto", "nullable", "text", "untyped"])
@pytest.mark.parametrize(("value", "want"), [
    ("&#91;1, 2]", "[1, 2]"),
    ("&#x5B;1, 2]", "[1, 2]"),
    ('&#123;"a": 1}', '{"a": 1}'),
    ("\n&#91;1]\n", "[1]"),  # the layout newlines are still layout
    ('<![CDATA[ ]]>&#91;<![CDATA["a<b"]]]>', ' ["a<b"]'),
])
def test_a_bracket_written_as_a_reference_is_text(
    tools: Any, param: str, value: str, want: str
) -> None:
    if param == "untyped" and tools is REGISTRY:
        return  # (the registry refuses a parameter it does not declare; names cover it)
    for how, chunks in chunkings(_call(param, value)):
        events = run_checked("am_xml", chunks, tools)
        assert summary(events)[0] == ("call", "put", {param: want}), how


@pytest.mark.parametrize(("param", "value", "want"), [
    ("auto", "[1, 2]", [1, 2]),  # bare: the array, as before
    ("auto", "<![CDATA[[1, 2]]]>", [1, 2]),
    ("auto", "[1, &#50;]", [1, 2]),  # after the start a reference is only its character
    ("items", "&#91;1, 2]", [1, 2]),  # the schema says array: no string is meant
    ("auto", "&lt;[1]", "<[1]"),
])
def test_elsewhere_a_reference_is_its_character(param: str, value: str, want: Any) -> None:
    for how, chunks in chunkings(_call(param, value)):
        events = run_checked("am_xml", chunks, REGISTRY)
        assert summary(events)[0] == ("call", "put", {param: want}), how
