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

from pathlib import Path

import anyio
import pytest
from mcp_servers.harness import progress_command
from wait_support import until

from streamtools.mcp import MCPToolError, mcp_tools

pytestmark = pytest.mark.anyio


@pytest.fixture
def server(tmp_path: Path) -> tuple[str, Path]:
    marker = tmp_path / "cancelled"
    return progress_command(marker), marker


async def test_progress_keeps_a_long_call_alive(server: tuple[str, Path]) -> None:
    command, _marker = server
    async with mcp_tools(command, call_timeout=0.4) as registry:
        steady = registry.get("build")
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
