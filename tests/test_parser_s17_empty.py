"""``am_xml`` and the Qwen3-Coder form: an empty element for a parameter the
schema types as an array (``<tags></tags>``, ``<tags/>``, ``<tags>\\n</tags>``)
is the empty list, for an object the empty object; it was the string ``""``,
which the schema refused. A string stays ``""``; a number stays ``""`` (no
number is meant, and the schema check names it); without a schema an empty
element is ``""`` as before. Each case whole, a character at a time and at
random cuts (``run_checked``)."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from parser_cases import chunkings, run_checked, summary

from streamtools import tool
from streamtools.events import ArgsDelta, CallEnd, CallError
from streamtools.tools import ToolRegistry


class Config(msgspec.Struct):
    name: str
    tags: list[str]


@tool
def label(
    title: str,
    tags: list[str],
    meta: dict[str, int],
    maybe: list[int] | None = None,
    note: str = "x",
    count: int = 0,
) -> str:
    """Label a thing."""
    return "ok"


@tool
def configure(config: Config, level: int = 0) -> str:
    """Configure."""
    return "ok"


REGISTRY = ToolRegistry([label, configure])
EMPTY = {"title": "a", "tags": [], "meta": {}, "maybe": [], "note": ""}

TEXTS = {
    "am_xml-pair": '<am:tool_call name="label"><title>a</title><tags></tags><meta></meta>'
                   "<maybe></maybe><note></note></am:tool_call>",
    "am_xml-self-closing": '<am:tool_call name="label"><title>a</title><tags/><meta />'
                           "<maybe/><note/></am:tool_call>",
    "am_xml-layout": '<am:tool_call name="label">\n<title>a</title>\n<tags>\n</tags>\n'
                     "<meta>  </meta>\n<maybe>\r\n</maybe>\n<note></note>\n</am:tool_call>",
    "am_xml-parameter": '<am:tool_call name="label"><parameter name="title">a</parameter>'
                        '<parameter name="tags"></parameter><parameter name="meta"/>'
                        '<parameter name="maybe">\n</parameter>'
                        '<parameter name="note"></parameter></am:tool_call>',
    "am_xml-attributes": '<am:tool_call name="label" title="a" tags="" meta="" maybe="" '
                         'note=""/>',
    "hermes-qwen": "<tool_call>\n<function=label>\n<parameter=title>\na\n</parameter>\n"
                   "<parameter=tags>\n</parameter>\n<parameter=meta></parameter>\n"
                   "<parameter=maybe>\n\n</parameter>\n<parameter=note></parameter>\n"
                   "</function>\n</tool_call>",
    "am_xml-qwen": "<tool_call>\n<function=label>\n<parameter=title>\na\n</parameter>\n"
                   "<parameter=tags>\n</parameter>\n<parameter=meta></parameter>\n"
                   "<parameter=maybe>\n\n</parameter>\n<parameter=note></parameter>\n"
                   "</function>\n</tool_call>",
}


@pytest.mark.parametrize("case", sorted(TEXTS))
def test_an_empty_element_is_the_empty_array_or_object_the_schema_says(case: str) -> None:
    for how, chunks in chunkings(TEXTS[case]):
        events = run_checked(case.split("-")[0], chunks, REGISTRY)
        assert summary(events)[0] == ("call", "label", EMPTY), how
        args = "".join(e.delta for e in events if isinstance(e, ArgsDelta))
        assert json.loads(args) == EMPTY


def test_an_empty_array_inside_nested_elements_is_the_empty_list() -> None:
    text = (
        '<am:tool_call name="configure"><config><name>x</name><tags></tags></config>'
        '</am:tool_call> <am:tool_call name="configure"><config><name>y</name><tags/>'
        "</config></am:tool_call>"
    )
    for how, chunks in chunkings(text):
        events = run_checked("am_xml", chunks, REGISTRY)
        ends = [e.arguments for e in events if isinstance(e, CallEnd)]
        assert ends == [
            {"config": {"name": "x", "tags": []}},
            {"config": {"name": "y", "tags": []}},
        ], how


def test_an_empty_number_is_still_refused_by_the_schema() -> None:
    text = '<am:tool_call name="label"><title>a</title><tags/><meta/><count></count></am:tool_call>'
    events = run_checked("am_xml", [text], REGISTRY)
    (error,) = [e for e in events if isinstance(e, CallError)]
    assert error.reason == "invalid_arguments"
    assert "$.count" in error.message


@pytest.mark.parametrize("tools", [["label"], None])
def test_without_a_schema_an_empty_element_is_the_empty_string(tools: Any) -> None:
    text = '<am:tool_call name="label"><tags></tags><meta/></am:tool_call>'
    events = run_checked("am_xml", [text], tools)
    assert summary(events)[0] == ("call", "label", {"tags": "", "meta": ""})


def test_an_empty_object_missing_its_required_fields_names_them() -> None:
    """``<config></config>`` is ``{}``: the schema check names what it lacks
    (it said ``got str``, which told the model nothing about the fields)."""
    text = '<am:tool_call name="configure"><config></config></am:tool_call>'
    events = run_checked("am_xml", [text], REGISTRY)
    (error,) = [e for e in events if isinstance(e, CallError)]
    assert error.reason == "invalid_arguments" and error.raw == text
    assert "missing required field `name`" in error.message
