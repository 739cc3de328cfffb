"""A result that does not match its tool's ``outputSchema`` still reaches the model.

Many servers declare an ``outputSchema`` and answer with text only, or with
structured content that strays from it. The SDK's client raised for such a result
("Tool X has an output schema but did not return structured content"), so the
model was told that a tool failed which had run, with its answer thrown away, and
tried it again. The answer is now used as it is, with one warning per tool in the
log. A real server over stdio (the SDK's low-level ``Server``, written to a
temporary directory); runs on asyncio and trio.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from streamtools.events import Event, ToolFailed, ToolResult
from streamtools.mcp import mcp_tools
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel

pytestmark = pytest.mark.anyio

SERVER = '''
from typing import Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.types import (
    CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams, TextContent,
    Tool,
)

OUT = {"type": "object", "properties": {"temp": {"type": "number"}}, "required": ["temp"]}
NONE = {"type": "object", "properties": {}}


async def list_tools(
    ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
) -> ListToolsResult:
    return ListToolsResult(tools=[
        Tool(name="text_only", input_schema=NONE, output_schema=OUT),
        Tool(name="off_schema", input_schema=NONE, output_schema=OUT),
        Tool(name="conforming", input_schema=NONE, output_schema=OUT),
    ])


async def call_tool(
    ctx: ServerRequestContext[Any], params: CallToolRequestParams
) -> CallToolResult:
    if params.name == "text_only":
        return CallToolResult(content=[TextContent(type="text", text="18 degrees in Oslo")])
    if params.name == "off_schema":
        return CallToolResult(
            content=[TextContent(type="text", text="warm")], structured_content={"temp": "warm"}
        )
    return CallToolResult(content=[TextContent(type="text", text="{\\"temp\\": 18}")],
                          structured_content={"temp": 18})


async def main() -> None:
    server = Server("sloppy", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
'''


def hermes_call(name: str) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": {}}) + "</tool_call>"


async def test_results_off_their_schema_reach_the_model_with_one_warning_per_tool(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    script = tmp_path / "sloppy_server.py"
    script.write_text(SERVER)
    calls = ["text_only", "off_schema", "conforming"]
    first = "".join(hermes_call(name) for name in calls)
    model = ScriptedModel([first, "done"])
    events: list[Event] = []
    with caplog.at_level(logging.WARNING, logger="streamtools.mcp"):
        async with mcp_tools(f"{sys.executable} {script}") as registry:
            agent = Agent(model, tools=registry, dialect="hermes")
            async with agent.stream("go") as stream:
                async for event in stream:
                    events.append(event)
            again = registry.get("text_only")
            assert again is not None
            assert await again.invoke({}) == "18 degrees in Oslo"  # and no second warning
    assert not [e for e in events if isinstance(e, ToolFailed)]
    results = [(e.name, e.content) for e in events if isinstance(e, ToolResult)]
    assert results == [
        ("text_only", "18 degrees in Oslo"),
        ("off_schema", "warm"),
        ("conforming", '{"temp": 18}'),
    ]
    assert "18 degrees in Oslo" in "\n".join(m.content for m in model.requests[-1].messages)
    warnings = [r.getMessage() for r in caplog.records if r.name == "streamtools.mcp"]
    assert len(warnings) == 2, warnings
    assert "'text_only' does not match its output schema" in warnings[0]
    assert "did not return structured content" in warnings[0]
    assert "'off_schema' does not match its output schema" in warnings[1]
    assert "'warm' is not of type 'number'" in warnings[1]
