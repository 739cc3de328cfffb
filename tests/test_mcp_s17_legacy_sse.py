"""An MCP server of the older HTTP+SSE transport (protocol 2024-11-05) is loaded.

Many servers still offer only that transport (a GET on ``…/sse`` opens an event
stream that names where to POST). Given as a URL, such a server failed to load
with "HTTP 405 Method Not Allowed", which did not say what was wrong. As the
spec tells a client, one that refuses the first POST with 404 or 405 is now
tried over the older transport; a URL that is neither says both. The servers
are the SDK's own (``MCPServer.sse_app``, ``http_app``) under uvicorn in a
thread on 127.0.0.1; runs on asyncio and trio.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer
from mcp_servers.harness import asgi_server

from streamtools.mcp import MCPLoadError, http_app, mcp_tools
from streamtools.tools import tool

pytestmark = pytest.mark.anyio


def legacy_app() -> Any:
    server: MCPServer[Any] = MCPServer("legacy")

    @server.tool()
    def greet(name: str) -> str:
        """Greet someone."""
        return f"hello {name}"

    return server.sse_app()


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def test_a_server_of_the_older_sse_transport_is_loaded_and_called() -> None:
    with asgi_server(legacy_app) as base:
        async with mcp_tools(base + "/sse", load_timeout=30) as registry:
            assert set(registry) == {"greet"}
            greet = registry.get("greet")
            assert greet is not None and greet.description == "Greet someone."
            assert await greet.invoke({"name": "Ada"}) == "hello Ada"
            assert await greet.invoke({"name": "Bob"}) == "hello Bob"


async def test_a_url_that_is_neither_says_what_each_transport_met() -> None:
    with asgi_server(lambda: http_app([add])) as base:
        async with mcp_tools(base + "/mcp") as registry:  # streamable HTTP as before
            found = registry.get("add")
            assert found is not None
            assert await found.invoke({"a": 2, "b": 3}) == "5"
        with pytest.raises(MCPLoadError) as caught:
            async with mcp_tools(base + "/wrong", load_timeout=30):
                pass
    message = str(caught.value)
    assert "the server answered HTTP 404 Not Found" in message
    assert "; nor does it answer as a server of the older HTTP+SSE transport: " in message
    assert "\n" not in message
