"""An MCP call that reports progress outlives the agent's ``tool_timeout``; one
that says nothing is cut at it, and the server is told to stop.

Since ed80258 each progress notification starts the MCP client's
``call_timeout`` again, but the agent ran every tool under its own
``tool_timeout`` (30 s) as a hard limit, so a 2-minute MCP build or search
reporting progress all along still failed at 30 s (``streamtools chat --mcp``).
The agent's timeout now bounds silence too: progress the tool reports starts
it again, up to the MCP client's limit in all (ten times ``call_timeout``), or
ten times ``tool_timeout`` for a tool with no limit of its own. The calls go
through the agent's ``Executor``; the server is the official SDK's
(``MCPServer``) over stdio.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import anyio
import pytest
from mcp_servers.harness import progress_command
from wait_support import until

from streamtools.cli.mcp_options import mcp_session
from streamtools.events import CallEnd, ToolFailed, ToolResult
from streamtools.mcp import mcp_tools
from streamtools.runtime.executor import Executor
from streamtools.runtime.progress import call_clock
from streamtools.tools import ToolRegistry, tool

pytestmark = pytest.mark.anyio


@pytest.fixture
def server(tmp_path: Path) -> tuple[str, Path]:
    marker = tmp_path / "cancelled"
    return progress_command(marker), marker


def _call(name: str, **arguments: object) -> CallEnd:
    return CallEnd(index=0, id="call_1", name=name, arguments=dict(arguments), raw="")


async def test_progress_outlives_the_tool_timeout_and_silence_is_cut(
    server: tuple[str, Path],
) -> None:
    command, marker = server
    async with mcp_tools(command, call_timeout=0.5) as registry:
        executor = Executor(registry, timeout=0.3)
        with anyio.fail_after(30):
            built = await executor.execute(_call("build", seconds=1.2))
            silent = await executor.execute(_call("silent"))
        await until(marker.exists)  # the server heard notifications/cancelled
    assert isinstance(built, ToolResult), built
    assert built.content == "built"
    assert isinstance(silent, ToolFailed), silent
    assert silent.kind == "timeout"
    assert silent.message == "Tool 'silent' timed out after 0.3 s."  # the agent's, not 0.5


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # one is enough: it takes 3 s
async def test_the_mcp_limit_in_all_counts_past_ten_tool_timeouts(
    server: tuple[str, Path],
) -> None:
    # ten times tool_timeout is 2.5 s; the MCP client allows ten times 0.5 s
    command, _marker = server
    async with mcp_tools(command, call_timeout=0.5) as registry:
        executor = Executor(registry, timeout=0.25)
        with anyio.fail_after(30):
            outcome = await executor.execute(_call("build", seconds=3.0))
    assert isinstance(outcome, ToolResult), outcome
    assert outcome.content == "built"


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # one is enough: it takes 2 s
async def test_chat_and_ui_bound_mcp_calls_by_tool_timeout_alone(
    server: tuple[str, Path],
) -> None:
    """``streamtools chat/ui --mcp``: the MCP client's own 60 s, which no flag
    sets, bounded a call too: a silent call was cut at 60 s whatever
    ``--tool-timeout`` said, and one reporting progress ran ten times 60 s. Now
    ``--tool-timeout`` alone bounds it (seen here from its limit in all)."""
    command, _marker = server
    args = argparse.Namespace(mcp=[command], mcp_url=[], mcp_header=[], mcp_timeout=None)
    async with mcp_session(args, ToolRegistry(), "chat") as registry:
        executor = Executor(registry, timeout=0.2)  # --tool-timeout 0.2
        with anyio.fail_after(20):
            outcome = await executor.execute(_call("endless"))
    assert isinstance(outcome, ToolFailed), outcome
    assert outcome.message == (
        "Tool 'endless' timed out: it reported progress, but did not finish within 2 s, "
        "the most a call may take while it does."
    )


async def test_a_tool_reporting_progress_for_ever_ends_at_ten_timeouts() -> None:
    @tool
    async def tail() -> str:
        """Says it is working, for ever."""
        clock = call_clock()
        assert clock is not None
        while True:
            clock.progressed()
            await anyio.sleep(0.02)

    executor = Executor(ToolRegistry([tail]), timeout=0.1)
    with anyio.fail_after(15):
        outcome = await executor.execute(_call("tail"))
    assert isinstance(outcome, ToolFailed), outcome
    assert outcome.message == (
        "Tool 'tail' timed out: it reported progress, but did not finish within 1 s, "
        "the most a call may take while it does."
    )


async def test_a_plain_tool_may_report_progress_and_then_go_quiet() -> None:
    @tool
    async def crawl(pages: int) -> str:
        """Fetches pages, saying so after each; then hangs."""
        clock = call_clock()
        assert clock is not None
        for _ in range(pages):
            await anyio.sleep(0.05)
            clock.progressed()
        await anyio.sleep(30)
        return "never"

    executor = Executor(ToolRegistry([crawl]), timeout=0.3)
    with anyio.fail_after(15):
        outcome = await executor.execute(_call("crawl", pages=12))  # 0.6 s of pages
    assert isinstance(outcome, ToolFailed), outcome
    assert outcome.message == (
        "Tool 'crawl' timed out: it reported progress, then nothing for 0.3 s."
    )
    assert call_clock() is None  # the call's clock is not left behind
