"""A tool served over MCP (``mcp_server``) that reports its progress has it sent
to the client as ``notifications/progress``.

A tool reports through ``call_progress()`` under an agent (``ToolProgress``);
served over MCP, ``call_progress()`` was None, so a tool written for the agent
failed (``None.report``), and the client (the SDK's ``Client``, as Claude Code
or an agent of ours would call it) heard nothing of a long call. The SDK's own
client reads the notifications through ``progress_callback``.
"""

from __future__ import annotations

import time

import anyio
import pytest
from mcp import Client

from streamtools.mcp import mcp_server
from streamtools.runtime.progress import call_progress
from streamtools.tools import ToolRegistry, tool

pytestmark = pytest.mark.anyio


@tool
async def build(steps: int) -> str:
    """Build in steps, saying how far it has come."""
    reporter = call_progress()
    assert reporter is not None
    for step in range(1, steps + 1):
        reporter.report(step, steps, f"step {step}")
        await anyio.sleep(0.01)
    return "built"


@tool
def copy(files: int) -> str:
    """Copy files in a worker thread, saying how far it has come."""
    reporter = call_progress()
    assert reporter is not None
    reporter.report(files, files, "copied")
    time.sleep(0.05)  # still at work: the report goes out meanwhile
    return "copied"


@tool
async def broken() -> str:
    """Fail."""
    raise ValueError("no luck")


TOOLS = ToolRegistry([build, copy, broken])


async def test_a_served_tool_s_progress_reaches_the_client() -> None:
    heard: list[tuple[float, float | None, str | None]] = []

    async def progressed(progress: float, total: float | None, message: str | None) -> None:
        heard.append((progress, total, message))

    with anyio.fail_after(10):
        async with Client(mcp_server(TOOLS)) as client:
            result = await client.call_tool("build", {"steps": 3}, progress_callback=progressed)
    assert not result.is_error
    assert heard == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]


async def test_a_sync_tool_reports_from_its_thread_and_a_failure_stays_plain() -> None:
    heard: list[tuple[float, float | None, str | None]] = []

    async def progressed(progress: float, total: float | None, message: str | None) -> None:
        heard.append((progress, total, message))

    with anyio.fail_after(10):
        async with Client(mcp_server(TOOLS)) as client:
            copied = await client.call_tool("copy", {"files": 2}, progress_callback=progressed)
            failed = await client.call_tool("broken", {})
    assert not copied.is_error
    assert heard == [(2.0, 2.0, "copied")]
    assert failed.is_error
    assert failed.content[0].text == "Tool `broken` failed: ValueError: no luck"  # type: ignore[union-attr]
