"""A server that sends notifications in the middle of a call (a resource
updated, the resource, prompt and tool lists changed, a log message, an
elicitation completed, progress) gets the call's answer through: clients
have hung on that (microsoft/agent-framework#4896: MCPStdioTool.call_tool
waited for ever when mongodb-mcp-server sent resources/updated beside its
result). The SDK's ``MCPServer`` over stdio, as a 2025 server (the
``initialize`` handshake, notifications sent unasked) and a 2026-07-28 one.
It passed when written: a guard, not a fix."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from mcp_servers.harness import HERE

from streamtools.mcp import mcp_tools

pytestmark = pytest.mark.anyio

SERVER = '''
import sys
from typing import Any

sys.path.insert(0, {here!r})

from mcp.server.mcpserver import Context, MCPServer

server: MCPServer[Any] = MCPServer("chatty")


@server.tool()
async def chatty(ctx: Context[Any, Any]) -> str:
    """Says a lot while it works."""
    session = ctx.session
    for step in range(3):
        await ctx.report_progress(step, 3, "working")
        await ctx.info("step " + str(step))
        await session.send_resource_updated("file:///notes.txt")
        await session.send_resource_list_changed()
        await session.send_prompt_list_changed()
        await session.send_elicit_complete("e-" + str(step))
    return "done"


if sys.argv[1:] == ["legacy"]:
    import anyio
    from changing_server import serve_legacy_stdio

    anyio.run(serve_legacy_stdio, server)
else:
    server.run("stdio")
'''


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the client's side is the same on trio
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_notifications_during_a_call_do_not_hold_up_its_answer(
    tmp_path: Path, era: str
) -> None:
    script = tmp_path / "chatty_server.py"
    script.write_text(SERVER.format(here=str(HERE)))
    command = f"{sys.executable} {script}" + (" legacy" if era == "legacy" else "")
    async with mcp_tools(command, call_timeout=20) as registry:
        chatty = registry.get("chatty")
        assert chatty is not None
        for _ in range(2):  # and the session is still good for the next call
            with anyio.fail_after(20):
                assert await chatty.invoke({}) == "done"
