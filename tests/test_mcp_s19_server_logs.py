"""What an MCP server logs to its client (``notifications/message``) reaches
our log, on the ``streamtools.mcp.server`` logger at the matching level and
naming the server: the SDK's client drops it without a callback, so a
misbehaving server's own account of what went wrong was lost
(NousResearch/hermes-agent#57416 forwarded it for that reason). A 2026-07-28
server sends it only when a request asks, at the level the logger lets
through. The SDK's ``MCPServer`` over stdio, as a 2025 and a 2026-07-28
server."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest
from mcp_servers.harness import HERE

from streamtools.mcp import mcp_tools

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("anyio_backend", ["asyncio"])]

SERVER = '''
import sys
from typing import Any

sys.path.insert(0, {here!r})

from mcp.server.mcpserver import Context, MCPServer

server: MCPServer[Any] = MCPServer("logging")


@server.tool()
async def work(ctx: Context[Any, Any]) -> str:
    """Logs as it works."""
    await ctx.debug("a detail")
    await ctx.info("starting")
    await ctx.warning("the cache is cold", logger_name="cache")
    await ctx.error({{"code": 7, "why": "disk"}})
    return "done"


if sys.argv[1:] == ["legacy"]:
    import anyio
    from changing_server import serve_legacy_stdio

    anyio.run(serve_legacy_stdio, server)
else:
    server.run("stdio")
'''


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_servers_log_reaches_ours(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, era: str
) -> None:
    script = tmp_path / "logging_server.py"
    script.write_text(SERVER.format(here=str(HERE)))
    command = f"{sys.executable} {script}" + (" legacy" if era == "legacy" else "")
    with caplog.at_level(logging.INFO, logger="streamtools.mcp.server"):
        async with mcp_tools(command) as registry:
            work = registry.get("work")
            assert work is not None
            assert await work.invoke({}) == "done"
    said = [
        (r.levelno, r.getMessage()) for r in caplog.records if r.name == "streamtools.mcp.server"
    ]
    assert said == [
        (logging.INFO, f"MCP server {command!r}: starting"),
        (logging.WARNING, f"MCP server {command!r} [cache]: the cache is cold"),
        (logging.ERROR, f'MCP server {command!r}: {{"code":7,"why":"disk"}}'),
    ]
