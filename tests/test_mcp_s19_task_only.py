"""A tool its server runs only as a task (``execution.taskSupport:
"required"``, spec 2025-11-25) is left out, with a warning: streamtools makes
plain calls, which such a server refuses (-32601, as the spec tells it to), so
the model was offered a tool that failed every time it was called (TanStack
AI's client was asked in review to refuse such calls rather than send them:
TanStack/ai#940). Tools whose tasks are optional or forbidden stay. An SDK
low-level ``Server`` over stdio, as a 2025-11-25 server (the SDK leaves
``execution`` out of a 2026-07-28 listing)."""

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
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, {here!r})

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import (
    METHOD_NOT_FOUND, CallToolRequestParams, CallToolResult, ListToolsResult,
    PaginatedRequestParams, TextContent, Tool, ToolExecution,
)

NONE = {"type": "object", "properties": {}}
SUPPORT = {"only_task": "required", "maybe_task": "optional", "never_task": "forbidden"}


async def list_tools(
    ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
) -> ListToolsResult:
    tools = [
        Tool(name=name, input_schema=NONE, execution=ToolExecution(task_support=support))
        for name, support in SUPPORT.items()
    ]
    return ListToolsResult(tools=[*tools, Tool(name="plain", input_schema=NONE)])


async def call_tool(
    ctx: ServerRequestContext[Any], params: CallToolRequestParams
) -> CallToolResult:
    if SUPPORT.get(params.name) == "required":
        raise MCPError(code=METHOD_NOT_FOUND, message="this tool must be called as a task")
    return CallToolResult(content=[TextContent(type="text", text=params.name)])


from changing_server import serve_legacy_stdio

server = Server("tasks", on_list_tools=list_tools, on_call_tool=call_tool)
# a server of 2025-11-25, where tools say how they run as tasks (a 2026-07-28
# connection leaves ``execution`` out: tasks are an extension there)
anyio.run(serve_legacy_stdio, SimpleNamespace(_lowlevel_server=server))
'''


async def test_a_tool_that_runs_only_as_a_task_is_left_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    script = tmp_path / "tasks_server.py"
    script.write_text(SERVER.replace("{here!r}", repr(str(HERE))))
    with caplog.at_level(logging.WARNING, logger="streamtools.mcp"):
        async with mcp_tools(f"{sys.executable} {script}") as registry:
            assert sorted(registry) == ["maybe_task", "never_task", "plain"]
            for name in registry:
                found = registry.get(name)
                assert found is not None
                assert await found.invoke({}) == name
    said = [r.getMessage() for r in caplog.records if r.name == "streamtools.mcp"]
    assert len(said) == 1
    assert "'only_task' left out: it runs only as a task" in said[0]
