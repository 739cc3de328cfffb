"""A named ``tool_choice`` is checked against the registry when a run starts,
not when the agent is made: a registry may be filled later (an MCP server's
tools loaded after the agent is built, a HybridAgent's work agent)."""

from __future__ import annotations

import pytest

from streamtools.errors import UsageError
from streamtools.events import Event, Final, ToolResult
from streamtools.model import UseTool
from streamtools.runtime import Agent
from streamtools.runtime.hybrid import HybridAgent
from streamtools.testing import ScriptedModel
from streamtools.tools import ToolRegistry, tool

pytestmark = pytest.mark.anyio

CALL = '<am:tool_call name="search"><query>otters</query></am:tool_call>'


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"3 pages about {query}"


@pytest.mark.parametrize("choice", ["search", UseTool("search")])
async def test_a_tool_added_after_the_agent_is_made_can_be_the_choice(
    choice: str | UseTool,
) -> None:
    """``Agent(model, registry, tool_choice="search")`` raised ``UsageError`` when
    ``search`` was not yet in the registry, so an agent made before its MCP tools
    were loaded could not require one of them. The choice is taken as given now."""
    registry = ToolRegistry()
    model = ScriptedModel([CALL, "Otters hold hands."])
    agent = Agent(model, registry, tool_choice=choice)
    registry.add(search)
    async with agent.stream("otters?") as stream:
        events: list[Event] = [e async for e in stream]
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["3 pages about otters"]
    assert events[-1] == Final(text="Otters hold hands.", turns=2)
    # the forced choice was said to the model (in words: a prompt dialect)
    assert "must call the tool `search`" in str(model.requests[0].messages[-1].content)


async def test_a_choice_missing_when_the_run_starts_is_a_usage_error_before_any_request() -> None:
    """The tool was removed again (``ToolRegistry.remove``) before the run: the
    run raises at once, rather than ask the model for a call to no tool."""
    registry = ToolRegistry([search])
    model = ScriptedModel([CALL, "unused"])
    agent = Agent(model, registry, tool_choice="search")
    registry.remove("search")
    events: list[Event] = []
    with pytest.raises(UsageError, match=r"no tool is named 'search'.*\(tools: none\)"):
        async with agent.stream("otters?") as stream:
            async for event in stream:
                events.append(event)
    assert events == [] and model.requests == []  # not even a TurnStart
    registry.add(search)  # back again: the same agent runs
    assert (await agent.run("otters?")).text == "unused"


async def test_a_hybrid_agent_s_named_choice_is_checked_at_the_run_too() -> None:
    registry = ToolRegistry()
    agent = HybridAgent(ScriptedModel(["unused"]), registry, tool_choice="search")
    with pytest.raises(UsageError, match="no tool is named 'search'"):
        await agent.run("otters?")
