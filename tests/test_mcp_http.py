"""Tools from a real MCP server over streamable HTTP on 127.0.0.1 (a subprocess).

Runs on asyncio and trio: the SDK's HTTP client (httpx2) is anyio throughout.
"""

from __future__ import annotations

import socket
from typing import Any

import anyio
import pytest
from mcp_servers.harness import asgi_server, memory_http_server
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from streamtools.mcp import MCPHttp, MCPLoadError, MCPToolError, mcp_tools
from streamtools.tools import ToolRegistry

pytestmark = pytest.mark.anyio


async def call(registry: ToolRegistry, name: str, **arguments: Any) -> Any:
    found = registry.get(name)
    assert found is not None, name
    return await found.invoke(found.validate(arguments))


async def test_tools_over_http_are_loaded_and_called() -> None:
    with memory_http_server() as (url, _):
        async with mcp_tools(MCPHttp(url, namespace="memory")) as registry:
            assert "memory.search_memory" in registry
            search = registry.get("memory.search_memory")
            assert search is not None and search.description == "Search stored notes for a word."
            assert await call(registry, "memory.search_memory", query="tuna") == "Miso likes tuna"
            assert await call(registry, "memory.snapshot") == "[image: image/png, 1032 bytes]"
            with pytest.raises(MCPToolError, match="refused: over http"):
                await call(registry, "memory.fail", reason="over http")


async def test_http_server_exiting_mid_call_is_a_tool_error() -> None:
    with memory_http_server() as (url, proc):
        async with mcp_tools(url) as registry:
            with pytest.raises(MCPToolError, match="closed the connection during the call"):
                await call(registry, "crash")
            assert proc.wait(timeout=10) == 7
            # nothing listens any more: the restart fails, and that is the tool error
            with pytest.raises(MCPToolError, match="restarting a stopped MCP server failed: .* "
                               "could not be loaded: ConnectError"):
                await call(registry, "add", a=1, b=2)


async def test_nothing_listening_is_a_load_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(MCPLoadError, match=f"127.0.0.1:{port}/mcp' could not be loaded"):
        async with mcp_tools(f"http://127.0.0.1:{port}/mcp", load_timeout=5.0):
            pass


async def not_mcp(request: Request) -> HTMLResponse:
    return HTMLResponse("<html>a web page, not MCP</html>")


async def test_a_web_page_instead_of_mcp_is_a_load_error() -> None:
    def app() -> Starlette:
        return Starlette(routes=[Route("/mcp", not_mcp, methods=["GET", "POST", "DELETE"])])

    with asgi_server(app) as base:
        with pytest.raises(MCPLoadError, match="/mcp'"):
            async with mcp_tools(base + "/mcp", load_timeout=3.0):
                pass


async def unauthorized(request: Request) -> JSONResponse:
    body = {"error": "invalid_token", "error_description": "missing bearer token"}
    return JSONResponse(body, status_code=401, headers={"www-authenticate": "Bearer"})


async def test_a_refused_token_is_a_load_error_that_says_the_status_and_why() -> None:
    """The SDK reports any status but 404 as "Server returned an error response":
    a missing or wrong token read the same as a crashed server."""

    def app() -> Starlette:
        return Starlette(routes=[Route("/mcp", unauthorized, methods=["GET", "POST", "DELETE"])])

    with asgi_server(app) as base:
        with pytest.raises(MCPLoadError) as caught:
            async with mcp_tools(MCPHttp(base + "/mcp", headers={"x": "y"}), load_timeout=5.0):
                pass
    message = str(caught.value)
    assert message.startswith(f"MCP server '{base}/mcp' could not be loaded: ")
    assert message.endswith(
        'the server answered HTTP 401 Unauthorized: {"error":"invalid_token",'
        '"error_description":"missing bearer token"}'
    )


def refusing_calls() -> Any:
    """The SDK's server for ``registry``, behind a gate that answers each
    ``tools/call`` with 403 (a token without the right scope, say)."""
    from mcp_servers.registry_tools import registry

    from streamtools.mcp import http_app

    inner = http_app(registry)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await inner(scope, receive, send)
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        if b'"tools/call"' in body:
            refused = JSONResponse({"error": "insufficient_scope"}, status_code=403)
            return await refused(scope, receive, send)
        replayed = False

        async def again() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await inner(scope, again, send)

    return app


async def test_a_refused_call_says_the_status_and_why() -> None:
    with asgi_server(refusing_calls) as base:
        async with mcp_tools(base + "/mcp", load_timeout=10.0) as tools:
            with pytest.raises(MCPToolError) as caught:
                await call(tools, "add", a=1, b=2)
    assert str(caught.value).endswith(
        'the server answered HTTP 403 Forbidden: {"error":"insufficient_scope"}'
    )


async def test_cancelling_mid_call_ends_the_session_and_the_server_lives_on() -> None:
    with memory_http_server() as (url, proc):
        with anyio.CancelScope() as scope:
            async with mcp_tools(url) as registry:
                scope.deadline = anyio.current_time() + 0.3
                await call(registry, "slow", seconds=60)
        assert scope.cancelled_caught
        assert proc.poll() is None
        async with mcp_tools(url) as registry:
            assert await call(registry, "slow", seconds=0) == "slept 0.0"
