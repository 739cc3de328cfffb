"""``Parser(dialect, tools=[...])`` takes tool names (or a catalog such as a
``ToolRegistry``). A list of ``Tool`` objects was taken without a word and
failed only when a call named an unknown tool, with "TypeError: sequence item
0: expected str instance, Tool found" out of ``feed``: model text raising, which
the parser never does. It is a ``UsageError`` when the parser is made."""

from __future__ import annotations

import pytest

from streamtools import Parser, tool
from streamtools.errors import UsageError
from streamtools.events import CallEnd, CallError
from streamtools.tools import ToolRegistry


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_a_list_of_tool_objects_is_a_usage_error_at_once() -> None:
    advice = r"got (Function)?Tool .* pass ToolRegistry\(\[\.\.\.\]\) or the names"
    with pytest.raises(UsageError, match=advice):
        Parser("hermes", [add])  # type: ignore[list-item]


def test_names_and_a_registry_still_work() -> None:
    unknown = '<tool_call>{"name": "sub", "arguments": {}}</tool_call>'
    known = '<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>'
    for tools in (["add"], ("add",), {"add": 1}, ToolRegistry([add]), "add"):
        parser = Parser("hermes", tools)
        events = parser.feed(unknown + known) + parser.end()
        errors = [e for e in events if isinstance(e, CallError)]
        ends = [e for e in events if isinstance(e, CallEnd)]
        assert [e.reason for e in errors] == ["unknown_tool"], tools
        assert "add" in errors[0].message
        assert [(e.name, e.arguments) for e in ends] == [("add", {"a": 1, "b": 2})], tools
