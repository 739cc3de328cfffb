"""An MCP tool whose name a tool name cannot hold (``files/read``, ``get
weather``: servers written before the spec's naming rules, SEP-986) is offered
under the name with those characters as ``_`` and called by its own name; it
was left out, with a warning, and the model could not use it. A renamed tool
gives way to a tool that already has the name. The server is the official
SDK's (``MCPServer``) over stdio; runs on asyncio and trio."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from streamtools.mcp import mcp_tools

pytestmark = pytest.mark.anyio

SERVER = '''
from typing import Any

from mcp.server.mcpserver import MCPServer

server: MCPServer[Any] = MCPServer("names")


@server.tool(name="files/read")
def read(path: str) -> str:
    """Read a file."""
    return f"read {path}"


@server.tool(name="get weather")
def spaced(city: str) -> str:
    """Weather, by a name with a space."""
    return f"spaced {city}"


@server.tool(name="get_weather")
def proper(city: str) -> str:
    """Weather, by a proper name."""
    return f"proper {city}"


server.run("stdio")
'''


async def test_tools_with_names_a_tool_cannot_have_are_renamed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    script = tmp_path / "names_server.py"
    script.write_text(SERVER)
    with caplog.at_level(logging.WARNING, logger="streamtools.mcp"):
        async with mcp_tools(f"{sys.executable} {script}", namespace="fs") as registry:
            assert sorted(registry) == ["fs.files_read", "fs.get_weather"]
            results = {}
            for name, arguments in [
                ("fs.files_read", {"path": "a.txt"}),
                ("fs.get_weather", {"city": "Oslo"}),
            ]:
                found = registry.get(name)
                assert found is not None
                results[name] = await found.invoke(arguments)
    assert results == {
        "fs.files_read": "read a.txt",
        "fs.get_weather": "proper Oslo",
    }
    said = [r.getMessage() for r in caplog.records if r.name == "streamtools.mcp"]
    assert any("'get weather'" in m and "fs.get_weather" in m and "left out" in m for m in said)
