"""A server whose ``tools/list`` hands back a cursor that does not move on (the
same ``nextCursor`` on its last or only page, page after page, or ``""``)
failed to load: the client followed it, as the spec asks, 100 times, then
gave up with 'lists tools in more than 100 pages', and none of the server's
tools was usable (codebase-memory-mcp did so: DeusData/codebase-memory-mcp
#1247, where Claude Code listed its 8 tools 20 times over). A cursor already
followed now ends the listing, with a warning; pages that do move on are all
read. An SDK low-level ``Server`` over stdio."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from streamtools.mcp import mcp_tools

pytestmark = pytest.mark.anyio

SERVER = '''
import sys
from typing import Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.types import (
    CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams, TextContent,
    Tool,
)

MODE = sys.argv[1]
NONE = {"type": "object", "properties": {}}
# cursor -> (tools of that page, next cursor)
PAGES = {
    "stuck": {None: (["a", "b"], "more"), "more": (["a", "b"], "more")},
    "empty": {None: (["a", "b"], ""), "": (["a", "b"], "")},
    "cycle": {None: (["a"], "p2"), "p2": (["b"], "p3"), "p3": (["c"], "p2")},
    "paged": {None: (["a"], "p2"), "p2": (["b"], "p3"), "p3": (["c"], None)},
}[MODE]


async def list_tools(
    ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
) -> ListToolsResult:
    names, after = PAGES[params.cursor if params is not None else None]
    tools = [Tool(name=name, input_schema=NONE) for name in names]
    return ListToolsResult(tools=tools, next_cursor=after)


async def call_tool(
    ctx: ServerRequestContext[Any], params: CallToolRequestParams
) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=params.name)])


async def main() -> None:
    server = Server("paging", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
'''


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the listing is the same on trio
@pytest.mark.parametrize(
    ("mode", "names", "warned"),
    [
        ("stuck", ["a", "b"], True),
        ("empty", ["a", "b"], True),
        ("cycle", ["a", "b", "c"], True),
        ("paged", ["a", "b", "c"], False),
    ],
)
async def test_a_cursor_that_does_not_move_on_ends_the_listing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, mode: str, names: list[str], warned: bool
) -> None:
    script = tmp_path / "paging_server.py"
    script.write_text(SERVER)
    with caplog.at_level(logging.WARNING, logger="streamtools.mcp"):
        async with mcp_tools(f"{sys.executable} {script} {mode}", load_timeout=20) as registry:
            assert sorted(registry) == names
            last = registry.get(names[-1])
            assert last is not None
            assert await last.invoke({}) == names[-1]
    said = [r.getMessage() for r in caplog.records if "cursor" in r.getMessage()]
    assert bool(said) is warned
    assert not any("twice" in r.getMessage() for r in caplog.records)  # not "listed twice"
