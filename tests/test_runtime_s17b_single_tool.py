"""``Agent(model, add)``: one tool where a list is expected failed deep in
``ToolRegistry`` with "TypeError: 'Tool' object is not iterable". It is a
``UsageError`` that says to pass a list, as the Agent SDKs take."""

from __future__ import annotations

from typing import Any

import pytest

from streamtools.errors import UsageError
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel
from streamtools.tools import ToolRegistry, tool

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def test_a_single_tool_is_a_usage_error_that_says_pass_a_list() -> None:
    with pytest.raises(UsageError) as caught:
        Agent(ScriptedModel(["5"]), add)  # type: ignore[arg-type]
    assert str(caught.value) == (
        "tools is a list of tools or functions (or a ToolRegistry), got the single tool "
        "'add': pass [add]"
    )


def test_a_single_function_is_a_usage_error_too() -> None:
    with pytest.raises(UsageError, match=r"single function 'multiply': pass \[multiply\]$"):
        Agent(ScriptedModel(["6"]), multiply)  # type: ignore[arg-type]


async def test_a_list_and_a_registry_still_work() -> None:
    call = '<am:tool_call name="add"><a>2</a><b>3</b></am:tool_call>'
    choices: list[ToolRegistry | list[Any] | tuple[Any, ...]] = [
        [add, multiply], ToolRegistry([add]), (add,)
    ]
    for tools in choices:
        agent = Agent(ScriptedModel([call, "5"]), tools)
        assert "add" in agent.registry
        assert (await agent.run("What is 2 + 3?")).text == "5"


def test_hybrid_agent_and_the_registry_say_the_same() -> None:
    """The check lives in ``ToolRegistry``, which ``Agent`` and ``HybridAgent``
    build from their ``tools``: both failed with the TypeError before."""
    from streamtools.runtime.hybrid import HybridAgent

    message = r"single tool 'add': pass \[add\]$"
    with pytest.raises(UsageError, match=message):
        HybridAgent(ScriptedModel(["5"]), add)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=message):
        ToolRegistry(add)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"single function 'multiply'"):
        ToolRegistry(multiply)  # type: ignore[arg-type]
