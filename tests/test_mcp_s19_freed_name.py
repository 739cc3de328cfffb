"""A renamed MCP tool left out because its name as a tool name was taken
(``get weather``, offered as ``get_weather``, gives way to another server's own
``get_weather``) is offered once that other tool is gone: the registry was
brought in line for the server whose list changed only, so the freed name
stayed empty and the renamed tool was never offered again, until its own
server happened to change its list. Two of the SDK's ``MCPServer``s over
stdio; asyncio and trio."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from wait_support import until

from streamtools.mcp import mcp_tools

pytestmark = pytest.mark.anyio

SPACED = '''
from typing import Any

from mcp.server.mcpserver import MCPServer

server: MCPServer[Any] = MCPServer("spaced")


@server.tool(name="get weather")
def weather(city: str) -> str:
    """Weather, by a name with a space."""
    return "spaced " + city


server.run("stdio")
'''

PROPER = '''
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

server: MCPServer[Any] = MCPServer("proper")


@server.tool(name="get_weather")
def weather(city: str) -> str:
    """Weather."""
    return "proper " + city


@server.tool()
async def retire(ctx: Context[Any, Any]) -> str:
    """Stop offering get_weather."""
    server.remove_tool("get_weather")
    await ctx.notify_tools_changed()
    return "retired"


server.run("stdio")
'''


async def test_a_renamed_tool_is_offered_when_the_name_it_gave_way_to_is_freed(
    tmp_path: Path,
) -> None:
    spaced = tmp_path / "spaced_server.py"
    spaced.write_text(SPACED)
    proper = tmp_path / "proper_server.py"
    proper.write_text(PROPER)
    async with mcp_tools(f"{sys.executable} {spaced}", f"{sys.executable} {proper}") as registry:
        before = registry.get("get_weather")
        assert before is not None
        assert await before.invoke({"city": "Oslo"}) == "proper Oslo"
        retire = registry.get("retire")
        assert retire is not None
        assert await retire.invoke({}) == "retired"
        await until(lambda: registry.get("get_weather") not in (None, before))
        after = registry.get("get_weather")
        assert after is not None
        assert after.description == "Weather, by a name with a space."
        assert await after.invoke({"city": "Bergen"}) == "spaced Bergen"
        assert sorted(registry) == ["get_weather", "retire"]
