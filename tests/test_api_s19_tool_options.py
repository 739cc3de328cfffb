"""``tool(a_tool, ...)`` on a tool already made. It returned the tool itself:
a new ``name`` or ``description`` was dropped without a word (the "copy" kept
the old name, so registering it beside the original was a name clash), and the
options were set on the original, those not given reset to their defaults
(``tool(t)`` of a ``@tool(timeout=600)`` tool took its timeout away), in every
registry and agent that held it. Now a tool with nothing asked of it is
returned as it is, and one with something asked is a copy that has what was
asked and keeps the rest; the original is unchanged."""

from __future__ import annotations

import math

import pytest

from streamtools import ToolRegistry, tool
from streamtools.errors import ToolDefinitionError


@tool(timeout=600, sequential=True)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_a_tool_with_nothing_asked_is_itself_with_its_options() -> None:
    assert tool(add) is add
    assert (add.timeout, add.sequential, add.repeatable) == (600, True, False)


def test_a_new_name_makes_a_copy_beside_the_original() -> None:
    plus = tool(add, name="plus", description="Add, by another name.", repeatable=True)
    assert plus is not add and plus(2, 3) == 5
    assert (plus.name, plus.description) == ("plus", "Add, by another name.")
    assert (plus.repeatable, plus.timeout, plus.sequential) == (True, 600, True)  # kept
    assert plus.parameters == add.parameters
    assert plus.validate({"a": "2", "b": 3}, lenient=True) == {"a": 2, "b": 3}
    # the original is as it was, and both register
    assert (add.name, add.description, add.repeatable) == ("add", "Add two integers.", False)
    assert list(ToolRegistry([add, plus])) == ["add", "plus"]


def test_options_given_change_the_copy_only() -> None:
    slow = tool(add, timeout=math.inf, sequential=False)
    assert (slow.name, slow.timeout, slow.sequential) == ("add", math.inf, False)
    assert (add.timeout, add.sequential) == (600, True)
    # a schema tool stays one
    registry = ToolRegistry()
    echo = registry.add_schema("echo", "Echo.", {"type": "object", "properties": {}})
    loud = tool(echo, name="echo2", isolated=True)
    assert type(loud) is type(echo) and (loud.name, loud.isolated) == ("echo2", True)
    assert (echo.name, echo.isolated) == ("echo", False)


def test_a_bad_name_or_timeout_is_refused() -> None:
    with pytest.raises(ToolDefinitionError, match="invalid tool name 'a b'"):
        tool(add, name="a b")
    with pytest.raises(ToolDefinitionError, match="timeout must be a positive number"):
        tool(add, timeout=0)
    assert add.name == "add" and add.timeout == 600
