"""The registry follows a server's tool list (``notifications/tools/list_changed``).

The server is ``mcp_servers/changing_server.py``, written with the SDK: over
stdio and over streamable HTTP it speaks the 2026-07-28 protocol (changes come
on a ``subscriptions/listen`` stream); ``legacy`` plays a server from before
it (changes come as plain notifications; over HTTP, on the session's GET
stream). Runs on asyncio and trio.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TypeVar

import pytest
from mcp_servers.harness import CHANGING_SERVER, changing_command, http_server_processes
from mcp_servers.registries import WatchedRegistry, until

from streamtools.mcp import MCPToolError, mcp_tools
from streamtools.tools import ToolRegistry, tool

pytestmark = pytest.mark.anyio

KINDS = ["stdio", "stdio-legacy", "http", "http-legacy"]


R = TypeVar("R", bound=ToolRegistry)


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest, anyio_backend: str) -> str:
    if request.param == "http-legacy" and anyio_backend == "trio":
        # The SDK's GET stream (legacy HTTP only) leaves httpx2 async generators to
        # the garbage collector on trio: a ResourceWarning, an error here.
        pytest.skip("SDK leaks httpx2 generators of the legacy GET stream on trio")
    return str(request.param)


@contextmanager
def changing_server(kind: str) -> Iterator[str]:
    if kind.startswith("http"):
        args = ["legacy"] if kind == "http-legacy" else []
        with http_server_processes(CHANGING_SERVER, *args) as (url, spawn, _):
            spawn()
            yield url
    else:
        yield changing_command("legacy") if kind == "stdio-legacy" else changing_command()


@asynccontextmanager
async def changing_tools(kind: str, registry: R) -> AsyncIterator[R]:
    with changing_server(kind) as server:
        async with mcp_tools(server, registry=registry) as loaded:
            assert loaded is registry
            yield registry


async def call(registry: ToolRegistry, name: str, /, **arguments: Any) -> Any:
    found = registry.get(name)
    assert found is not None, name
    return await found.invoke(found.validate(arguments))


async def test_a_tool_the_server_adds_joins_the_registry_and_works(kind: str) -> None:
    async with changing_tools(kind, WatchedRegistry()) as registry:
        assert "blue" not in registry
        assert await call(registry, "grow", name="blue") == "added blue"
        await until(registry, lambda: "blue" in registry)
        blue = registry.get("blue")
        assert blue is not None and blue.description == "The tool blue."
        assert await call(registry, "blue") == "blue"


async def test_gone_tools_leave_and_changed_tools_are_replaced(kind: str) -> None:
    async with changing_tools(kind, WatchedRegistry()) as registry:
        await call(registry, "grow", name="blue")
        await until(registry, lambda: "blue" in registry)
        assert await call(registry, "shrink", name="blue") == "removed blue"
        await until(registry, lambda: "blue" not in registry)

        old = registry.get("echo")
        assert old is not None and old.description == "Echo the text."
        assert await call(registry, "reshape") == "reshaped echo"
        await until(registry, lambda: registry.get("echo") is not old)
        new = registry.get("echo")
        assert new is not None
        assert new.description == "Echo the text in capitals, several times."
        assert new.parameters["required"] == ["text", "times"]
        assert await call(registry, "echo", text="hi", times=2) == "HI HI"
        assert set(registry) == {"grow", "shrink", "reshape", "pid", "crash", "echo"}


async def test_a_tool_held_after_the_server_withdrew_it_says_it_is_gone() -> None:
    # an agent may hold the Tool it looked up when the server withdraws it
    async with changing_tools("stdio", WatchedRegistry()) as registry:
        await call(registry, "grow", name="blue")
        await until(registry, lambda: "blue" in registry)
        blue = registry.get("blue")
        assert blue is not None
        await call(registry, "shrink", name="blue")
        await until(registry, lambda: "blue" not in registry)
        with pytest.raises(MCPToolError, match="no longer offers the tool 'blue'"):
            await blue.invoke({})
        assert registry.check_arguments("blue", {}) == registry.unknown_tool_message("blue")
        assert await call(registry, "echo", text="still here") == "still here"


async def test_a_new_tool_that_clashes_is_left_out_and_the_session_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    @tool
    async def blue() -> str:
        """The caller's own tool."""
        return "local blue"

    registry = WatchedRegistry([blue])
    caplog.set_level(logging.WARNING, logger="streamtools.mcp")
    async with changing_tools("stdio", registry):
        await call(registry, "grow", name="blue")
        await call(registry, "grow", name="green")
        await until(registry, lambda: "green" in registry)
        assert registry.get("blue") is blue
        assert "new tool 'blue' left out: another tool holds that name" in caplog.text
        assert await call(registry, "green") == "green"
        assert await call(registry, "blue") == "local blue"
