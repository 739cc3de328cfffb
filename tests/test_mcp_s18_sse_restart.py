"""A server of the older HTTP+SSE transport that restarts, or forgets the
session, in the middle of a block: the next call works or fails at once,
saying why; it never waits.

A restarted process drops the event stream, which the SDK notices: the next
call opens a new session (a new process id), or, sent before the SDK noticed,
fails saying the connection closed, and the one after does. But a POST answered with an
error status (404 "Could not find session", as a server restarted behind a
proxy that kept the stream, or another worker, answers; a 503) stops the SDK's
writer for good while the request it carried waits for an answer: the call
hung for its whole ``call_timeout`` (for ever without one), and a handshake
refused so waited out its ``load_timeout``. A 404 now gets a new session, in
which the call is made (the server never ran it); another status fails the
call at once, saying what the server answered. The servers are the SDK's own
(``MCPServer.sse_app``) under uvicorn, on 127.0.0.1; runs on asyncio and trio.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import MCPServer
from mcp_servers.harness import asgi_server
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from streamtools.mcp import MCPHttp, MCPLoadError, MCPToolError, mcp_tools

pytestmark = pytest.mark.anyio

SERVER = """
import os
import socket
import sys
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer

server: MCPServer[Any] = MCPServer("legacy")


@server.tool()
def pid() -> int:
    \"\"\"The server's process id.\"\"\"
    return os.getpid()


sock = socket.socket(fileno=int(sys.argv[1]))
uvicorn.Server(uvicorn.Config(server.sse_app(), log_level="critical")).run(sockets=[sock])
"""


async def test_a_restarted_server_is_called_in_a_new_session(tmp_path: Path) -> None:
    script = tmp_path / "legacy_pid_server.py"
    script.write_text(SERVER)
    # held open across both processes, so the restart serves the same port
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)

        def spawn() -> subprocess.Popen[bytes]:
            argv = [sys.executable, str(script), str(sock.fileno())]
            return subprocess.Popen(argv, pass_fds=[sock.fileno()], stdin=subprocess.DEVNULL)

        first = spawn()
        second: subprocess.Popen[bytes] | None = None
        try:
            url = f"http://127.0.0.1:{sock.getsockname()[1]}/sse"
            with anyio.fail_after(60):
                async with mcp_tools(url, load_timeout=30, call_timeout=None) as registry:
                    pid = registry.get("pid")
                    assert pid is not None
                    assert await pid.invoke({}) == str(first.pid)
                    first.kill()
                    first.wait(timeout=10)
                    second = spawn()
                    try:  # sent before the SDK noticed the drop, it says so
                        assert await pid.invoke({}) == str(second.pid)
                    except MCPToolError as exc:
                        assert "closed the connection during the call to 'pid'" in str(exc)
                    assert await pid.invoke({}) == str(second.pid)
                    assert await pid.invoke({}) == str(second.pid)
        finally:
            for proc in (first, second):
                if proc is not None:
                    proc.kill()
                    proc.wait(timeout=10)


class Refusing:
    """The SDK's HTTP+SSE app, with its message POSTs answered ``status`` while
    ``refusing`` is set, or for the sessions in ``forgotten`` (404 "Could not
    find session", what a server says of a session it does not know)."""

    def __init__(self, status: int, body: str) -> None:
        self.status, self.body = status, body
        self.refusing = False
        self.seen: set[bytes] = set()  # the session ids of the messages POSTed
        self.forgotten: set[bytes] = set()

    def app(self) -> Any:
        server: MCPServer[Any] = MCPServer("legacy")

        @server.tool()
        def greet(name: str) -> str:
            """Greet someone."""
            return f"hello {name}"

        inner = server.sse_app()

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http" and scope["method"] == "POST":
                if scope["path"].startswith("/messages"):
                    session = scope["query_string"]
                    self.seen.add(session)
                    if session in self.forgotten:
                        gone = Response("Could not find session", status_code=404)
                        await gone(scope, receive, send)
                        return
                    if self.refusing:
                        await Response(self.body, status_code=self.status)(scope, receive, send)
                        return
            await inner(scope, receive, send)

        return app


async def test_a_call_the_server_refuses_fails_at_once_and_the_next_works() -> None:
    server = Refusing(503, "overloaded, try later")
    with asgi_server(server.app) as base:
        async with mcp_tools(base + "/sse", load_timeout=30, call_timeout=None) as registry:
            greet = registry.get("greet")
            assert greet is not None
            assert await greet.invoke({"name": "Ada"}) == "hello Ada"
            server.refusing = True
            with anyio.fail_after(20), pytest.raises(MCPToolError) as refused:
                await greet.invoke({"name": "Bob"})
            server.refusing = False
            with anyio.fail_after(20):
                assert await greet.invoke({"name": "Cy"}) == "hello Cy"
    assert str(refused.value) == (
        f"MCP server '{base}/sse' refused the call to 'greet': it answered "
        "HTTP 503 Service Unavailable: overloaded, try later (the next call opens a new session)"
    )


async def test_a_call_in_a_session_the_server_forgot_runs_in_a_new_one() -> None:
    """404 says the server does not know the session, so the call never ran: as
    for streamable HTTP, a new session, and the call made in it."""
    server = Refusing(404, "unused")
    with asgi_server(server.app) as base:
        async with mcp_tools(base + "/sse", load_timeout=30, call_timeout=None) as registry:
            greet = registry.get("greet")
            assert greet is not None
            assert await greet.invoke({"name": "Ada"}) == "hello Ada"
            for name in ("Bob", "Cy", "Di", "Ed"):  # more than the restarts allowed
                server.forgotten |= server.seen
                with anyio.fail_after(20):
                    assert await greet.invoke({"name": name}) == f"hello {name}"
    assert len(server.forgotten) >= 4  # a new session each time


async def test_a_refused_handshake_is_a_load_error_at_once() -> None:
    server = Refusing(401, '{"error": "token required"}')
    server.refusing = True
    with asgi_server(server.app) as base:
        with anyio.fail_after(20), pytest.raises(MCPLoadError) as refused:
            async with mcp_tools(base + "/sse", load_timeout=60):
                pass
    assert str(refused.value).endswith(
        "; nor does it answer as a server of the older HTTP+SSE transport: it refused the "
        'handshake, answering HTTP 401 Unauthorized: {"error": "token required"}'
    )


async def test_the_headers_reach_every_request_of_the_older_transport() -> None:
    """The legacy transport's HTTP client is ours now (to hear refusals): the
    server's headers (a token) still go with the event stream and each message."""

    def app() -> Any:
        server: MCPServer[Any] = MCPServer("legacy")

        @server.tool()
        def greet(name: str) -> str:
            """Greet someone."""
            return f"hello {name}"

        inner = server.sse_app()

        async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http":
                if dict(scope["headers"]).get(b"authorization") != b"Bearer t0k":
                    await Response("no token", status_code=401)(scope, receive, send)
                    return
            await inner(scope, receive, send)

        return guarded

    with asgi_server(app) as base:
        server = MCPHttp(base + "/sse", headers={"Authorization": "Bearer t0k"})
        with anyio.fail_after(30):
            async with mcp_tools(server, load_timeout=20) as registry:
                greet = registry.get("greet")
                assert greet is not None
                assert await greet.invoke({"name": "Ada"}) == "hello Ada"
