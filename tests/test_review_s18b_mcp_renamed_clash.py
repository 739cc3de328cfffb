"""A renamed MCP tool (``get weather`` offered as ``get_weather``, 1c7e3bf)
gives way to a tool that has that name as its own on ANOTHER server too, as it
does to one on its own server: the rename ran server by server, so the first
server's renamed tool took the name and the second server's own
``get_weather`` then failed the whole load ('clashes with another tool of that
name'), where before 1c7e3bf the unusable name was only left out. Two of the
SDK's ``MCPServer``s over stdio; asyncio and trio."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest
from wait_support import until

from streamtools.mcp import mcp_tools

pytestmark = pytest.mark.anyio

SERVER = '''
from typing import Any

from mcp.server.mcpserver import MCPServer

server: MCPServer[Any] = MCPServer("{label}")


@server.tool(name="{name}")
def weather(city: str) -> str:
    """Weather."""
    return "{label} " + city


server.run("stdio")
'''


async def test_a_renamed_tool_gives_way_to_another_servers_own_name(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spaced = tmp_path / "spaced_server.py"
    spaced.write_text(SERVER.format(label="spaced", name="get weather"))
    proper = tmp_path / "proper_server.py"
    proper.write_text(SERVER.format(label="proper", name="get_weather"))
    with caplog.at_level(logging.WARNING, logger="streamtools.mcp"):
        async with mcp_tools(
            f"{sys.executable} {spaced}", f"{sys.executable} {proper}"
        ) as registry:
            assert list(registry) == ["get_weather"]
            found = registry.get("get_weather")
            assert found is not None
            result = await found.invoke({"city": "Oslo"})
    assert result == "proper Oslo"
    said = [r.getMessage() for r in caplog.records if r.name == "streamtools.mcp"]
    assert any("'get weather'" in m and "left out" in m for m in said)


GROWING = '''
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

server: MCPServer[Any] = MCPServer("growing")


@server.tool(name="get weather")
def spaced(city: str) -> str:
    """Weather, by a name with a space."""
    return "spaced " + city


@server.tool()
async def grow(name: str, ctx: Context[Any, Any]) -> str:
    """Add a tool called NAME."""

    def named() -> str:
        return name

    server.add_tool(named, name=name, description="The tool " + name + ".")
    await ctx.notify_tools_changed()
    return "added " + name


server.run("stdio")
'''


async def test_a_callers_own_tool_is_not_taken_for_the_renamed_one(tmp_path: Path) -> None:
    """The caller's registry has its own ``get_weather``; the server's ``get
    weather`` is left out for it. The mounted tools then counted the caller's
    tool as the server's, so the server's next tool-list change replaced it by
    the server's (its description differed): the caller's own tool was gone."""
    from streamtools.tools import ToolRegistry, tool

    @tool
    def get_weather(city: str) -> str:
        """The caller's own weather."""
        return "own " + city

    own = ToolRegistry([get_weather])
    mine = own.get("get_weather")
    script = tmp_path / "growing_server.py"
    script.write_text(GROWING)
    async with mcp_tools(f"{sys.executable} {script}", registry=own) as registry:
        grow = registry.get("grow")
        assert grow is not None
        assert await grow.invoke({"name": "later"}) == "added later"
        await until(lambda: "later" in registry)
        assert registry.get("get_weather") is mine
