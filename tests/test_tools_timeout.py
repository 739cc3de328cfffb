"""A tool's own timeout, in place of the agent's tool_timeout."""

from __future__ import annotations

import math

import anyio
import pytest

from streamtools.errors import ToolDefinitionError
from streamtools.events import CallEnd, ToolFailed, ToolResult
from streamtools.runtime.executor import Executor
from streamtools.tools import ToolRegistry, tool

pytestmark = pytest.mark.anyio


def call(name: str) -> CallEnd:
    return CallEnd(index=0, id="c0", name=name, arguments={}, raw="")


@tool(timeout=5)
async def build() -> str:
    """A build that takes longer than the other tools may."""
    await anyio.sleep(0.2)
    return "built"


@tool(timeout=0.05)
async def ping() -> str:
    """A check that must answer at once."""
    await anyio.sleep(5)
    return "pong"


async def test_a_tools_own_timeout_replaces_the_agents() -> None:
    """One slow tool made every tool wait as long (tool_timeout is per agent)."""
    executor = Executor(ToolRegistry([build, ping]), timeout=0.1)
    assert await executor.execute(call("build")) == ToolResult(
        index=0, id="c0", name="build", content="built"
    )
    short = await Executor(ToolRegistry([build, ping]), timeout=30).execute(call("ping"))
    assert isinstance(short, ToolFailed) and short.kind == "timeout"
    assert short.message == "Tool 'ping' timed out after 0.05 s."


def test_a_tools_timeout_is_checked_when_it_is_made() -> None:
    for bad in (0, -1, math.nan):
        with pytest.raises(ToolDefinitionError, match="timeout"):
            tool(lambda: None, name="t", timeout=bad)
    assert tool(lambda: None, name="t", timeout=math.inf).timeout == math.inf
    assert tool(lambda: None, name="t").timeout is None
