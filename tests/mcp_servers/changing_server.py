"""An MCP server whose tool list changes while it runs, for the list-changed tests.

``python changing_server.py`` serves stdio; ``python changing_server.py
http-fd FD`` serves streamable HTTP at ``/mcp`` on the listening socket FD.
Both speak the 2026-07-28 protocol, where changes travel on a
``subscriptions/listen`` stream. With ``legacy`` (either transport) it plays a
server from before it: ``server/discover`` is answered "method not found", so
clients fall back to the ``initialize`` handshake (over HTTP: a session with an
id), and changes are sent as ``notifications/tools/list_changed``.

Tools: ``echo``; ``grow(name)`` adds a tool ``name`` that answers its own name;
``shrink(name)`` removes a tool; ``reshape`` replaces ``echo`` by one with
another description and schema; each change is announced to the client.
``pid`` and ``crash`` tell a fresh process from an old one.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
from mcp.server.lowlevel import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import METHOD_NOT_FOUND, ErrorData, JSONRPCError, JSONRPCRequest
from mcp_types.version import MODERN_PROTOCOL_VERSIONS


def build() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("changing")

    async def announce(ctx: Context[Any, Any]) -> None:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            await ctx.notify_tools_changed()
        else:
            await ctx.session.send_tool_list_changed()

    def echo(text: str) -> str:
        """Echo the text."""
        return text

    def echo_loud(text: str, times: int) -> str:
        """Echo the text in capitals, several times."""
        return " ".join([text.upper()] * times)

    @server.tool()
    async def grow(name: str, ctx: Context[Any, Any]) -> str:
        """Add a tool called NAME."""

        def named() -> str:
            return name

        server.add_tool(named, name=name, description=f"The tool {name}.")
        await announce(ctx)
        return f"added {name}"

    @server.tool()
    async def shrink(name: str, ctx: Context[Any, Any]) -> str:
        """Remove the tool called NAME."""
        server.remove_tool(name)
        await announce(ctx)
        return f"removed {name}"

    @server.tool()
    async def reshape(ctx: Context[Any, Any]) -> str:
        """Replace echo by a louder echo."""
        server.remove_tool("echo")
        server.add_tool(echo_loud, name="echo")
        await announce(ctx)
        return "reshaped echo"

    @server.tool()
    def pid() -> int:
        """The server's process id."""
        return os.getpid()

    @server.tool()
    def crash() -> str:
        """Kill the server process in the middle of the call."""
        os._exit(7)

    server.add_tool(echo)
    return server


async def serve_legacy_stdio(server: MCPServer[Any]) -> None:
    """Serve stdio as a pre-2026 server would: refuse ``server/discover``.

    The SDK's server decides the era from the client's first request; keeping
    the discover probe from it makes the ``initialize`` that follows decide.
    """
    lowlevel = server._lowlevel_server
    async with stdio_server() as (read, write):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def refuse_discover() -> None:
            async with send:
                async for item in read:
                    request = item.message if isinstance(item, SessionMessage) else None
                    if isinstance(request, JSONRPCRequest) and request.method == "server/discover":
                        error = ErrorData(code=METHOD_NOT_FOUND, message="Method not found")
                        refusal = JSONRPCError(jsonrpc="2.0", id=request.id, error=error)
                        await write.send(SessionMessage(refusal))
                        continue
                    await send.send(item)

        options = lowlevel.create_initialization_options(NotificationOptions(tools_changed=True))
        async with anyio.create_task_group() as tg:
            tg.start_soon(refuse_discover)
            await lowlevel.run(receive, write, options)


def refusing_discover(app: Any) -> Any:
    """The ASGI app as a pre-2026 server: a ``server/discover`` POST gets "method
    not found", so clients fall back to ``initialize`` and an HTTP session."""

    async def legacy_app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if isinstance(request, dict) and request.get("method") == "server/discover":
            error = {"code": METHOD_NOT_FOUND, "message": "Method not found"}
            answer = {"jsonrpc": "2.0", "id": request.get("id"), "error": error}
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": json.dumps(answer).encode()})
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await app(scope, replay, send)

    return legacy_app


def main(argv: list[str]) -> None:
    legacy = "legacy" in argv
    if argv[:1] == ["http-fd"]:
        import uvicorn

        app = build().streamable_http_app()
        served = refusing_discover(app) if legacy else app
        uvicorn.run(served, fd=int(argv[1]), log_level="warning", timeout_graceful_shutdown=1)
    else:
        if legacy:
            anyio.run(serve_legacy_stdio, build())
        else:
            build().run("stdio")
        # stdin closed, all answered: skip the interpreter's slow teardown of the
        # SDK (memory_server.exit_at_once says why)
        sys.stdout.flush()
        os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
