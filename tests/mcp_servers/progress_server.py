"""An MCP server (the official SDK's ``MCPServer``, stdio) whose tools report
progress or stay silent: ``build`` works for ``seconds`` reporting progress all
along, ``steps`` reports ``count`` steps with a message each, ``endless``
reports progress for ever, ``silent`` says nothing and writes ``cancelled`` to
the file named by its first argument when it is cancelled.
``progress_server.py http-fd FD`` serves streamable HTTP at ``/mcp`` on the
listening socket FD instead (``harness.http_server_processes``)."""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer

server: MCPServer[Any] = MCPServer("progress")


@server.tool()
async def build(seconds: float, ctx: Context) -> str:
    """Works for ``seconds``, reporting progress all along."""
    start = anyio.current_time()
    while (done := anyio.current_time() - start) < seconds:
        await ctx.report_progress(done, seconds)
        await anyio.sleep(0.05)
    return "built"


@server.tool()
async def steps(count: int, ctx: Context) -> str:
    """Reports ``count`` steps with a message each, then answers."""
    for step in range(1, count + 1):
        await ctx.report_progress(step, count, f"step {step} of {count}")
        await anyio.sleep(0.05)
    return f"{count} steps"


@server.tool()
async def endless(ctx: Context) -> str:
    """Reports progress for ever."""
    step = 0
    while True:
        step += 1
        await ctx.report_progress(step)
        await anyio.sleep(0.05)


@server.tool()
async def silent() -> str:
    """Says nothing for a long time; notes it when it is cancelled."""
    try:
        await anyio.sleep(60)
    except anyio.get_cancelled_exc_class():
        # (blocking, on purpose: an await here would be cancelled at once)
        with open(sys.argv[1], "w") as marker:  # noqa: ASYNC230
            marker.write("cancelled")
        raise
    return "late"


if sys.argv[1:2] == ["http-fd"]:
    import uvicorn

    app = server.streamable_http_app()
    uvicorn.run(app, fd=int(sys.argv[2]), log_level="warning", timeout_graceful_shutdown=1)
else:
    server.run("stdio")
    # stdin closed, all answered: skip the interpreter's slow teardown of the SDK
    # (memory_server.exit_at_once says why)
    sys.stdout.flush()
    os._exit(0)
