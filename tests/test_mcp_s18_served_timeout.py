"""A tool served over MCP keeps to its own ``timeout`` (``@tool(timeout=…)``).

The agent cuts a call off at the tool's timeout; the MCP server ran it on
until the client gave up (60 s for many), holding a sync tool's worker thread
all that time. A call past it is now a tool error (``isError``) saying so, and
the server answers the next call. In process, with the SDK's own client; runs
on asyncio and trio."""

from __future__ import annotations

import threading

import anyio
import pytest
from mcp import Client
from mcp.types import TextContent

from streamtools.mcp import mcp_server
from streamtools.tools import ToolRegistry, tool

pytestmark = pytest.mark.anyio


async def test_a_call_past_the_tools_timeout_is_a_tool_error() -> None:
    gate = threading.Event()

    @tool(timeout=0.3)
    def block() -> str:
        """Wait for the gate."""
        gate.wait(10)
        return "done"

    @tool(timeout=0.3)
    async def nap() -> str:
        """Sleep a long time."""
        await anyio.sleep(10)
        return "rested"

    @tool(timeout=5)
    async def quick() -> str:
        """Answer at once."""
        return "quick"

    try:
        async with Client(mcp_server(ToolRegistry([block, nap, quick]))) as client:
            with anyio.fail_after(20):
                for name in ("block", "nap"):
                    result = await client.call_tool(name, {})
                    assert result.is_error
                    [content] = result.content
                    assert isinstance(content, TextContent)
                    assert content.text == f"Tool `{name}` timed out after 0.3 s."
                answered = await client.call_tool("quick", {})
            assert not answered.is_error
            [content] = answered.content
            assert isinstance(content, TextContent) and content.text == "quick"
    finally:
        gate.set()
