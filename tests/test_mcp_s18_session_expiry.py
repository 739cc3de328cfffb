"""A streamable HTTP server that no longer knows the session (404: it expired
the session, or restarted) gets a new session, and the call that met the 404
runs in it: the spec says a client MUST start a new session then, and the
server never ran the call. The call failed instead ("ended the HTTP session;
the call did not run"), so the model was told a tool had failed that had not
been tried, the failure users of MCP clients report (Claude Code, mcpo, the
Python SDK itself); and each such renewal counted as a restart of the server,
so a server expiring idle sessions was "gone" after three. The server is the
SDK's (``MCPServer.streamable_http_app``, speaking the 2025 protocol, which
has sessions) in a thread on 127.0.0.1, behind a gate that answers 404 for
the sessions the test has expired. Runs on asyncio (the SDK leaks the legacy
GET stream's generators on trio)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp_servers.changing_server import build, refusing_discover
from mcp_servers.harness import asgi_server
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from streamtools.mcp import MCPConnection

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("anyio_backend", ["asyncio"])]


class Expiring:
    """The server, with the sessions named in ``expired`` answered 404."""

    def __init__(self) -> None:
        self.seen: set[bytes] = set()
        self.expired: set[bytes] = set()
        self.refused = 0

    def app(self) -> Any:
        inner = refusing_discover(build().streamable_http_app())

        async def gate(scope: Scope, receive: Receive, send: Send) -> None:
            session = dict(scope.get("headers", [])).get(b"mcp-session-id")
            if session is not None and scope["type"] == "http":
                self.seen.add(session)
                if session in self.expired:
                    self.refused += 1
                    gone = {"jsonrpc": "2.0", "id": None,
                            "error": {"code": -32600, "message": "Session not found"}}
                    await JSONResponse(gone, status_code=404)(scope, receive, send)
                    return
            await inner(scope, receive, send)

        return gate


async def test_an_expired_session_is_renewed_and_the_call_runs() -> None:
    server = Expiring()
    with asgi_server(server.app) as base:
        connection = MCPConnection(base + "/mcp", max_restarts=1)
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                await tg.start(connection.run)
                assert await connection.call("echo", {"text": "one"}) == "one"
                for n in range(3):  # more renewals than restarts allowed
                    server.expired |= server.seen
                    assert await connection.call("echo", {"text": f"again {n}"}) == f"again {n}"
                connection.close()
    assert server.refused >= 3  # each call met the 404 first
    assert connection.restarts == 0
