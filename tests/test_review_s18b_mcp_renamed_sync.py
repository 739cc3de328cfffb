"""A server that fixes a tool's name while mounted (``get weather``, offered as
``get_weather`` since 1c7e3bf, becomes ``get_weather`` itself, its description
and schema unchanged) left the registry's ``get_weather`` calling ``get
weather``: the sync compared descriptions and schemas only, not which of the
server's tools a registry tool calls, so every call after the change failed
('no longer offers the tool'). The SDK's ``MCPServer`` over stdio; asyncio
and trio."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from wait_support import until

from streamtools.mcp import mcp_tools

pytestmark = pytest.mark.anyio

SERVER = '''
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

server: MCPServer[Any] = MCPServer("renaming")


def weather(city: str) -> str:
    return "sunny in " + city


server.add_tool(weather, name="get weather", description="Weather.")


@server.tool()
async def rename(ctx: Context[Any, Any]) -> str:
    """Give the weather tool a proper name."""
    server.remove_tool("get weather")
    server.add_tool(weather, name="get_weather", description="Weather.")
    await ctx.notify_tools_changed()
    return "renamed"


server.run("stdio")
'''


async def test_a_tool_the_server_renames_is_called_by_its_new_name(tmp_path: Path) -> None:
    script = tmp_path / "renaming_server.py"
    script.write_text(SERVER)
    async with mcp_tools(f"{sys.executable} {script}") as registry:
        before = registry.get("get_weather")
        assert before is not None
        assert await before.invoke({"city": "Oslo"}) == "sunny in Oslo"
        rename = registry.get("rename")
        assert rename is not None
        assert await rename.invoke({}) == "renamed"
        await until(lambda: registry.get("get_weather") is not before)
        after = registry.get("get_weather")
        assert after is not None
        assert await after.invoke({"city": "Oslo"}) == "sunny in Oslo"
