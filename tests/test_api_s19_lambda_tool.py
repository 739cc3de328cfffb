"""A lambda made a tool: the README's schema tool takes one as its ``fn``, so a
user tries ``tool(lambda path: ..., name="read")``. It was told to "annotate"
a parameter a lambda cannot annotate, and without a name that ``'<lambda>'``
was an invalid tool name. Each message now says what to do instead."""

from __future__ import annotations

import pytest

from streamtools import tool
from streamtools.errors import ToolDefinitionError


def test_a_lambda_without_a_name_is_told_to_give_one() -> None:
    with pytest.raises(ToolDefinitionError) as raised:
        tool(lambda: "hi")
    assert str(raised.value) == "a lambda has no name to call it by: tool(fn, name=...)"
    named = tool(lambda: "hi", name="hello")  # with one (and no parameters) it is a tool
    assert named.name == "hello" and named() == "hi"


def test_a_lambda_with_parameters_is_told_what_to_write_instead() -> None:
    with pytest.raises(ToolDefinitionError) as raised:
        tool(lambda path: path, name="read")
    assert str(raised.value) == (
        "tool 'read': parameter 'path' has no type annotation; a lambda's cannot have one: "
        "write the tool as a def, or give its JSON Schema "
        "(ToolRegistry.add_schema(name, description, schema, fn=...))"
    )


def test_a_def_without_annotations_is_still_told_to_annotate() -> None:
    def read(path):  # type: ignore[no-untyped-def]
        return path

    with pytest.raises(ToolDefinitionError, match="'path' has no type annotation; annotate it "):
        tool(read)
