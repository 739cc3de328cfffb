"""A tool call that reports progress is not cut off by ``call_timeout``; one
that says nothing is, and the server is told to stop.

``call_timeout`` was a hard deadline, and calls asked for no progress (no
``progressToken``), so a server could not even say it was still working: a
tool that runs longer than it (a build, a crawl) failed with "did not answer
within 60s" while it went on, the failure clients of MCP (Claude Code,
opencode, the TypeScript SDK's ``resetTimeoutOnProgress``) have met. Calls now
ask for progress, and each progress notification starts ``call_timeout``
again; as the spec asks, there is still a limit in all, ten times it. The
server is the official SDK's (``MCPServer``) over stdio; runs on asyncio and trio.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from wait_support import until

from streamtools.mcp import MCPToolError, mcp_tools

pytestmark = pytest.mark.anyio

SERVER = '''
import sys
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer

server: MCPServer[Any] = MCPServer("progress")


@server.tool()
async def steady(seconds: float, ctx: Context) -> str:
    """Works for ``seconds``, reporting progress all along."""
    start = anyio.current_time()
    while (done := anyio.current_time() - start) < seconds:
        await ctx.report_progress(done, seconds)
        await anyio.sleep(0.05)
    return "built"


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
        with open(sys.argv[1], "w") as marker:
            marker.write("cancelled")
        raise
    return "late"


server.run("stdio")
'''


@pytest.fixture
def server(tmp_path: Path) -> tuple[str, Path]:
    script = tmp_path / "progress_server.py"
    script.write_text(SERVER)
    marker = tmp_path / "cancelled"
    return f"{sys.executable} {script} {marker}", marker


async def test_progress_keeps_a_long_call_alive(server: tuple[str, Path]) -> None:
    command, _marker = server
    async with mcp_tools(command, call_timeout=0.4) as registry:
        steady = registry.get("steady")
        assert steady is not None
        with anyio.fail_after(30):
            assert await steady.invoke({"seconds": 1.2}) == "built"


async def test_a_silent_call_still_times_out_and_is_cancelled(server: tuple[str, Path]) -> None:
    command, marker = server
    async with mcp_tools(command, call_timeout=0.4) as registry:
        silent = registry.get("silent")
        assert silent is not None
        with anyio.fail_after(30), pytest.raises(MCPToolError) as timed_out:
            await silent.invoke({})
        await until(marker.exists)
    assert str(timed_out.value).endswith("did not answer the call to 'silent' within 0.4s")


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # one is enough: it takes 4 s
async def test_progress_for_ever_ends_at_ten_times_the_timeout(server: tuple[str, Path]) -> None:
    command, _marker = server
    async with mcp_tools(command, call_timeout=0.4) as registry:
        endless = registry.get("endless")
        assert endless is not None
        with anyio.fail_after(30), pytest.raises(MCPToolError) as too_long:
            await endless.invoke({})
    assert str(too_long.value).endswith(
        "did not finish the call to 'endless' within 4s, the most a call may take "
        "while it reports progress (ten times call_timeout)"
    )
