"""A server that stopped is restarted on the next call of one of its tools.

Real SDK servers (``mcp_servers/``) over stdio and over streamable HTTP on
127.0.0.1; their ``crash`` tool kills the process mid-call. Runs on asyncio
and trio.
"""

from __future__ import annotations

import os
import signal
from typing import Any

import anyio
import pytest
from mcp_servers.harness import (
    CHANGING_SERVER,
    MEMORY_SERVER,
    changing_command,
    http_server_processes,
    memory_command,
)
from mcp_servers.registries import WatchedRegistry, until

from streamtools.mcp import MCPConnection, MCPToolError, mcp_tools
from streamtools.tools import ToolRegistry

pytestmark = pytest.mark.anyio


async def call(registry: ToolRegistry, name: str, /, **arguments: Any) -> Any:
    found = registry.get(name)
    assert found is not None, name
    return await found.invoke(found.validate(arguments))


async def test_the_call_that_meets_a_crash_fails_and_the_next_runs_in_a_fresh_process() -> None:
    async with mcp_tools(memory_command()) as registry:
        first = int(await call(registry, "pid"))
        with pytest.raises(MCPToolError, match="closed the connection during the call to 'crash'"):
            await call(registry, "crash")
        # two calls meet the stopped server at once: they share one restart
        pids: list[int] = []

        async def pid() -> None:
            pids.append(int(await call(registry, "pid")))

        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                tg.start_soon(pid)
                tg.start_soon(pid)
        assert pids[0] == pids[1] != first
        assert await call(registry, "add", a=2, b=2) == '{\n  "sum": 4\n}'
        with pytest.raises(ProcessLookupError):
            os.kill(first, 0)


async def test_when_the_restarts_are_used_up_the_server_is_gone() -> None:
    async with mcp_tools(memory_command(), max_restarts=1) as registry:
        with pytest.raises(MCPToolError, match="closed the connection"):
            await call(registry, "crash")
        assert int(await call(registry, "pid")) > 0  # restart 1 of 1
        with pytest.raises(MCPToolError, match="closed the connection"):
            await call(registry, "crash")
        for _ in range(2):  # and it stays gone
            with pytest.raises(
                MCPToolError,
                match=r"is gone: it stopped \(it closed the connection during a call to 'crash'\) "
                r"and was restarted 1 times already, the most allowed",
            ):
                await call(registry, "pid")


async def test_a_restart_relists_the_tools() -> None:
    registry = WatchedRegistry()
    async with mcp_tools(changing_command(), registry=registry):
        await call(registry, "grow", name="blue")
        await until(registry, lambda: "blue" in registry)
        with pytest.raises(MCPToolError, match="closed the connection"):
            await call(registry, "crash")
        # the fresh process has only the tools it starts with
        assert await call(registry, "echo", text="back") == "back"
        await until(registry, lambda: "blue" not in registry)
        assert set(registry) == {"grow", "shrink", "reshape", "pid", "crash", "echo"}


async def test_a_server_killed_while_idle_is_restarted_without_failing_a_call() -> None:
    # On a 2026-07-28 connection the listen stream drops with the process, so the
    # connection knows before any call is made.
    connection = MCPConnection(changing_command())
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            await tg.start(connection.run)
            first = int(await connection.call("pid", {}))
            os.kill(first, signal.SIGKILL)
            for _ in range(1000):  # bounded by fail_after too
                if connection.failure is not None:
                    break
                await anyio.sleep(0.01)
            assert connection.failure is not None and "dropped" in connection.failure
            second = int(await connection.call("pid", {}))
            assert second != first and connection.restarts == 1
            connection.close()


async def test_an_http_server_that_came_back_gets_a_new_session() -> None:
    with http_server_processes(MEMORY_SERVER) as (url, spawn, _):
        old = spawn()
        async with mcp_tools(url) as registry:
            with pytest.raises(MCPToolError, match="closed the connection"):
                await call(registry, "crash")
            assert old.wait(timeout=10) == 7
            new = spawn()
            assert int(await call(registry, "pid")) == new.pid


async def test_failed_restarts_count_and_then_the_server_is_gone() -> None:
    with http_server_processes(MEMORY_SERVER) as (url, spawn, unlisten):
        old = spawn()
        async with mcp_tools(url, max_restarts=2) as registry:
            with pytest.raises(MCPToolError, match="closed the connection"):
                await call(registry, "crash")
            assert old.wait(timeout=10) == 7
            unlisten()  # the port refuses connections now: each restart fails at once
            for _ in range(2):
                with pytest.raises(
                    MCPToolError, match="restarting a stopped MCP server failed: .* ConnectError"
                ):
                    await call(registry, "pid")
            with pytest.raises(MCPToolError, match="is gone: .* restarted 2 times already"):
                await call(registry, "pid")


async def test_a_legacy_http_server_that_forgot_the_session_is_reconnected(
    anyio_backend: str,
) -> None:
    if anyio_backend == "trio":
        pytest.skip("SDK leaks httpx2 generators of the legacy GET stream on trio")
    with http_server_processes(CHANGING_SERVER, "legacy") as (url, spawn, _):
        old = spawn()
        async with mcp_tools(url) as registry:
            assert int(await call(registry, "pid")) == old.pid
            old.kill()
            old.wait(timeout=10)
            new = spawn()  # knows nothing of the old session: it answers 404
            # a new session, and the call in it (test_mcp_s18_session_expiry)
            assert int(await call(registry, "pid")) == new.pid
