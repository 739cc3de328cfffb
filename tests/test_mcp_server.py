"""A streamtools registry served over MCP, used from the SDK's own client.

In process, over stdio (``python -m streamtools.mcp`` as a subprocess) and over
streamable HTTP (``http_app`` under uvicorn in a thread, on 127.0.0.1).
Runs on asyncio and trio: the SDK client is anyio throughout, and the HTTP
server runs in its own thread and loop.
"""

from __future__ import annotations

import logging
import socket
import sys
import threading
from collections.abc import Sequence
from functools import partial

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.types import TextContent
from mcp_servers.harness import HERE, asgi_server
from mcp_servers.registry_tools import add, registry

from streamtools.mcp import http_app, mcp_server, mcp_tools, serve_http
from streamtools.tools import ToolRegistry, tool

pytestmark = pytest.mark.anyio


def text_of(content: Sequence[object]) -> str:
    assert len(content) == 1 and isinstance(content[0], TextContent)
    return content[0].text


async def test_tools_are_listed_with_the_registry_schemas() -> None:
    async with Client(mcp_server(registry)) as client:
        listed = (await client.list_tools()).tools
    assert [t.name for t in listed] == list(registry)
    for item in listed:
        assert item.input_schema == registry.schema(item.name)
    search = next(t for t in listed if t.name == "kom.memory.v1.search_memory")
    assert search.description == "Search the notes."
    assert search.input_schema["properties"]["query"]["description"] == "a word to look for"


async def test_results_errors_and_unknown_tools() -> None:
    async with Client(mcp_server(registry)) as client:
        added = await client.call_tool("add", {"a": 2, "b": 3})
        assert (text_of(added.content), added.is_error, added.structured_content) == (
            "5",
            False,
            None,
        )
        weather = await client.call_tool("weather", {"city": "Oslo"})
        assert text_of(weather.content) == '{"city":"Oslo","temp_c":21}'
        assert weather.structured_content == {"city": "Oslo", "temp_c": 21}

        failed = await client.call_tool("divide", {"a": 1, "b": 0})
        assert failed.is_error
        assert text_of(failed.content) == (
            "Tool `divide` failed: ZeroDivisionError: float division by zero"
        )
        invalid = await client.call_tool("add", {"a": "x", "b": 1})
        assert invalid.is_error
        assert text_of(invalid.content).startswith(
            "Invalid arguments for tool `add`: Expected `int`, got `str` - at `$.a`"
        )
        with pytest.raises(MCPError, match="Unknown tool `nope`") as caught:
            await client.call_tool("nope", {})
        assert caught.value.code == -32602


async def test_tools_known_by_schema_alone_are_not_served() -> None:
    """A tool without a function was listed, then refused as unknown by a message
    that named it among the tools one may call."""

    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    mixed = ToolRegistry([echo])
    mixed.add_schema("remote_only", "Runs elsewhere.", {"type": "object", "properties": {}})
    async with Client(mcp_server(mixed)) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["echo"]
        with pytest.raises(MCPError) as caught:
            await client.call_tool("remote_only", {})
    assert caught.value.message == (
        "Unknown tool `remote_only`. The only tools you may call are: `echo`."
    )


async def test_a_result_that_cannot_be_written_is_a_tool_error() -> None:
    @tool
    def loop() -> list[object]:
        """A list that contains itself."""
        items: list[object] = []
        items.append(items)
        return items

    async with Client(mcp_server(ToolRegistry([loop]))) as client:
        result = await client.call_tool("loop", {})
    assert result.is_error and result.structured_content is None
    assert text_of(result.content).startswith(
        "Tool `loop` ran, but its result could not be turned into text: RecursionError"
    )


async def test_a_cancelled_call_of_a_blocking_sync_tool_ends_at_once() -> None:
    """The worker thread of a sync tool could not be cancelled, so a call the client
    gave up on (its timeout, then notifications/cancelled) held the handler until
    the tool returned: an in-process client waited for it, timeout or not."""
    gate, finished = threading.Event(), threading.Event()

    @tool
    def block() -> str:
        """Wait for the gate."""
        gate.wait(5)
        finished.set()
        return "done"

    try:
        async with Client(mcp_server(ToolRegistry([block, add]))) as client:
            with pytest.raises(MCPError, match="Timed out"):
                await client.call_tool("block", {}, read_timeout_seconds=0.2)
            assert not finished.is_set()  # given up on while the tool still runs
            added = await client.call_tool("add", {"a": 1, "b": 2})
            assert text_of(added.content) == "3"
    finally:
        gate.set()


async def test_served_over_stdio_with_python_m_streamtools_mcp() -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "streamtools.mcp", "registry_tools:registry", "--name", "notes"],
        cwd=str(HERE),
    )
    async with Client(params) as client:
        assert client.server_info is not None and client.server_info.name == "notes"
        result = await client.call_tool("kom.memory.v1.search_memory", {"query": "miso"})
    assert text_of(result.content) == '["Miso is a cat","Miso likes tuna"]'


async def test_served_over_streamable_http() -> None:
    with asgi_server(lambda: http_app(registry, path="/tools")) as base:
        async with Client(base + "/tools") as client:
            names = [t.name for t in (await client.list_tools()).tools]
            result = await client.call_tool("add", {"a": 40, "b": 2})
    assert names == list(registry)
    assert text_of(result.content) == "42"


async def test_a_path_without_its_slash_is_served_at_slash_path() -> None:
    """``http_app(path="tools")`` raised Starlette's "Routed paths must start
    with '/'" from inside the server's startup."""
    with asgi_server(lambda: http_app(registry, path="tools")) as base:
        async with Client(base + "/tools") as client:
            names = [t.name for t in (await client.list_tools()).tools]
    assert names == list(registry)


async def test_round_trip_through_our_own_client_keeps_the_tools() -> None:
    """Serve a registry over HTTP and load it back: same names, schemas, results."""
    with asgi_server(lambda: http_app(registry)) as base:
        async with mcp_tools(base + "/mcp", registry=ToolRegistry()) as loaded:
            assert list(loaded) == list(registry)
            for name in registry:
                assert loaded.schema(name) == registry.schema(name)
            divide = loaded.get("divide")
            assert divide is not None
            assert await divide.invoke(divide.validate({"a": 1, "b": 4})) == "0.25"


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_serve_http_serves_until_cancelled(anyio_backend: str) -> None:
    """asyncio only: ``serve_http`` runs uvicorn, which is built on asyncio."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with anyio.create_task_group() as tg:
        tg.start_soon(partial(serve_http, registry, port=port, name="served"))
        with anyio.fail_after(10):
            while True:
                try:
                    stream = await anyio.connect_tcp("127.0.0.1", port)
                except OSError:
                    await anyio.sleep(0.05)
                else:
                    await stream.aclose()
                    break
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            result = await client.call_tool("add", {"a": 1, "b": 2})
        tg.cancel_scope.cancel()
    assert text_of(result.content) == "3"
    with pytest.raises(OSError):
        await anyio.connect_tcp("127.0.0.1", port)



async def test_a_tools_print_never_reaches_the_stdio_wire(caplog: pytest.LogCaptureFixture) -> None:
    """print() to a pipe is buffered: what a tool printed must not be written to
    the client's stdout when the server ends (it would read as a broken message)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "streamtools.mcp", "registry_tools:chatty_tools"],
        cwd=str(HERE),
    )
    with caplog.at_level(logging.ERROR, logger="mcp.client.stdio"):
        async with Client(params) as client:
            result = await client.call_tool("chatty", {"word": "hi"})
    assert text_of(result.content) == "HI"
    assert "Failed to parse JSONRPC message" not in caplog.text  # it went to stderr
