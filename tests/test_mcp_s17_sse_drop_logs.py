"""``streamtools chat`` and ``ui``: an older HTTP+SSE server that drops mid-call is
a tool error and one log line, not a traceback.

The commands print the MCP SDK's log records one line each, without a traceback
(``mcp_options._quiet_sdk_logs``), but the older transport's reader
(``mcp.client.sse``, used since such servers are tried for a URL that refuses
streamable HTTP) was not among the loggers so quieted: a server that went away
mid-call printed a traceback in the middle of the conversation. The server is
the SDK's own ``MCPServer.sse_app`` under uvicorn, in a process serving a socket
the test bound on 127.0.0.1, killed during a call; runs on asyncio and trio.
"""

from __future__ import annotations

import argparse
import logging
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from streamtools.cli.mcp_options import mcp_session
from streamtools.mcp import MCPToolError, mcp_tools
from streamtools.tools import ToolRegistry

pytestmark = pytest.mark.anyio

SERVER = """
import socket
import sys
from typing import Any

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer

server: MCPServer[Any] = MCPServer("legacy")


@server.tool()
async def slow() -> str:
    \"\"\"Takes its time.\"\"\"
    await anyio.sleep(30)
    return "late"


sock = socket.socket(fileno=int(sys.argv[1]))
uvicorn.Server(uvicorn.Config(server.sse_app(), log_level="critical")).run(sockets=[sock])
"""


@contextmanager
def sse_server(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    script = tmp_path / "legacy_sse_server.py"
    script.write_text(SERVER)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(sock.fileno())],
        pass_fds=[sock.fileno()],
        stdin=subprocess.DEVNULL,
    )
    port = sock.getsockname()[1]
    sock.close()  # the child serves it; connections wait in its backlog meanwhile
    try:
        yield f"http://127.0.0.1:{port}/sse", proc
    finally:
        proc.kill()
        proc.wait(timeout=10)


async def _call_while_the_server_dies(
    registry: ToolRegistry, proc: subprocess.Popen[bytes]
) -> None:
    """Call ``slow`` and kill its server half a second in: the call fails so."""
    slow = registry.get("slow")
    assert slow is not None

    async def kill_server() -> None:
        await anyio.sleep(0.5)
        proc.kill()

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            tg.start_soon(kill_server)
            with pytest.raises(MCPToolError, match="closed the connection during the call"):
                await slow.invoke({})


async def test_a_dropped_sse_server_logs_lines_without_tracebacks(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    args = argparse.Namespace(mcp=[], mcp_url=[], mcp_header=[], mcp_timeout=30.0)
    with sse_server(tmp_path) as (url, proc), caplog.at_level(logging.WARNING):
        args.mcp_url = [url]
        async with mcp_session(args, ToolRegistry(), "chat") as registry:
            await _call_while_the_server_dies(registry, proc)
    sdk = [r for r in caplog.records if r.name.startswith("mcp.client")]
    assert any(r.name == "mcp.client.sse" for r in sdk), [r.name for r in caplog.records]
    assert [r.name for r in sdk if r.exc_info or r.exc_text] == []


async def test_the_dropped_connection_is_not_called_something_the_server_sent(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The SSE reader hands the broken connection (httpx2.RemoteProtocolError) to
    the client's message handler, which took it for a line the server wrote and
    warned 'sent something that is not MCP JSON-RPC (ignored): RemoteProtocolError…'."""
    with sse_server(tmp_path) as (url, proc), caplog.at_level(logging.WARNING):
        async with mcp_tools(url, load_timeout=30) as registry:
            await _call_while_the_server_dies(registry, proc)
    ours = [r.getMessage() for r in caplog.records if r.name == "streamtools.mcp"]
    assert not [m for m in ours if "not MCP JSON-RPC" in m], ours
