"""What the MCP server makes of tools that do more than return a value: the
same as the agent's executor makes of them (``runtime.executor.tool_value``)."""

from __future__ import annotations

import itertools
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Iterator

import anyio
import pytest
from mcp import Client, MCPError
from mcp.types import TextContent

from streamtools.mcp import mcp_server
from streamtools.tools import ToolRegistry, tool

pytestmark = pytest.mark.anyio


async def _greeting() -> str:
    return "hello"


@tool
def squares(n: int) -> Iterator[int]:
    """The first n squares, one at a time."""
    return (i * i for i in range(n))


@tool
def deferred() -> Awaitable[str]:
    """A sync function handing back a coroutine."""
    return _greeting()


@tool
async def streamed() -> AsyncIterator[str]:
    """An async generator's items."""

    async def items() -> AsyncIterator[str]:
        yield "a"
        yield "b"

    return items()


@tool
def command_line(code: int) -> str:
    """A tool wrapping a command line whose parser gave up."""
    sys.exit(code)


TOOLS = ToolRegistry([squares, deferred, streamed, command_line])


async def call(name: str, arguments: dict[str, object]) -> tuple[bool, str]:
    async with Client(mcp_server(TOOLS)) as client:
        result = await client.call_tool(name, arguments)
        assert len(result.content) == 1 and isinstance(result.content[0], TextContent)
        return bool(result.is_error), result.content[0].text


@pytest.mark.parametrize(
    ("name", "arguments", "text"),
    [
        ("squares", {"n": 4}, "[0,1,4,9]"),
        ("deferred", {}, "hello"),
        ("streamed", {}, '["a","b"]'),
    ],
)
async def test_generators_and_coroutines_are_their_values_not_their_reprs(
    name: str, arguments: dict[str, object], text: str
) -> None:
    """The client was sent ``<generator object … at 0x…>``."""
    assert await call(name, arguments) == (False, text)


async def test_a_tool_that_exits_is_a_tool_error_not_the_end_of_the_server() -> None:
    """``sys.exit`` in a tool (argparse refusing its arguments) left the handler
    as SystemExit: over stdio, the server process ended."""
    async with Client(mcp_server(TOOLS)) as client:
        failed = await client.call_tool("command_line", {"code": 2})
        after = await client.call_tool("squares", {"n": 2})
    assert failed.is_error
    assert isinstance(failed.content[0], TextContent)
    assert failed.content[0].text == "Tool `command_line` failed: SystemExit: 2"
    assert not after.is_error


async def test_an_endless_generator_stops_when_its_call_is_cancelled() -> None:
    """Its items are taken in a worker thread: a call the client gave up on must
    not go on draining it into memory."""
    closed = threading.Event()

    @tool
    def ticks() -> Iterator[int]:
        """Counts for ever."""

        def count() -> Iterator[int]:
            try:
                yield from itertools.count()
            finally:
                closed.set()

        return count()

    async with Client(mcp_server(ToolRegistry([ticks]))) as client:
        with pytest.raises(MCPError, match="Timed out"):
            await client.call_tool("ticks", {}, read_timeout_seconds=0.3)
    assert await anyio.to_thread.run_sync(closed.wait, 10)
