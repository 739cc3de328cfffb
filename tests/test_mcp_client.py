"""Tools from a real MCP server (the SDK test server, a subprocess over stdio).

Runs on asyncio and trio: the SDK's stdio client is anyio throughout.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

import anyio
import pytest
from mcp.types import Tool
from mcp_servers.harness import MEMORY_SERVER, broken_command, memory_command, raw_command

from streamtools.errors import ToolDefinitionError
from streamtools.mcp import MCPConnection, MCPLoadError, MCPStdio, MCPToolError, mcp_tools
from streamtools.mcp.client import add_tools
from streamtools.tools import ToolRegistry, tool

pytestmark = pytest.mark.anyio

MEMORY_TOOLS = {"search_memory", "add", "snapshot", "fail", "pid", "crash", "slow"}


async def call(registry: ToolRegistry, name: str, **arguments: Any) -> Any:
    found = registry.get(name)
    assert found is not None, name
    return await found.invoke(found.validate(arguments))


async def test_tools_are_loaded_namespaced_with_schema_and_description() -> None:
    async with mcp_tools(memory_command(), namespace="memory") as registry:
        assert set(registry) == {f"memory.{name}" for name in MEMORY_TOOLS}
        search = registry.get("memory.search_memory")
        assert search is not None
        assert search.description == "Search stored notes for a word."
        assert search.parameters["properties"]["query"]["type"] == "string"
        assert search.parameters["properties"]["limit"]["default"] == 5
        assert search.parameters["required"] == ["query"]
        assert registry.check_arguments("memory.search_memory", {"limit": 2}) is not None


async def test_calls_go_to_the_server_and_results_become_text() -> None:
    async with mcp_tools(memory_command()) as registry:
        assert await call(registry, "search_memory", query="miso") == (
            "the cat is called Miso\nMiso likes tuna"
        )
        # structured content that the server also sent as JSON text: shown once
        assert await call(registry, "add", a=2, b=3) == '{\n  "sum": 5\n}'
        assert await call(registry, "snapshot") == "[image: image/png, 1032 bytes]"


async def test_is_error_raises_a_tool_error_with_the_servers_text() -> None:
    async with mcp_tools(memory_command()) as registry:
        with pytest.raises(MCPToolError, match="refused: not today"):
            await call(registry, "fail", reason="not today")
        # the session is still usable after a tool error
        assert await call(registry, "add", a=1, b=1) == '{\n  "sum": 2\n}'


async def test_server_exiting_mid_call_is_a_tool_error_not_a_crash() -> None:
    async with mcp_tools(memory_command(), max_restarts=0) as registry:
        with pytest.raises(MCPToolError, match="closed the connection during the call to 'crash'"):
            await call(registry, "crash")
        with pytest.raises(MCPToolError, match=r"is gone: it stopped \(it closed the connection "):
            await call(registry, "add", a=1, b=2)
    # leaving the block after the crash raised nothing


async def test_a_call_that_takes_too_long_is_a_tool_error_and_the_session_survives() -> None:
    async with mcp_tools(memory_command(), call_timeout=0.5) as registry:
        with pytest.raises(MCPToolError, match=r"did not answer the call to 'slow' within 0\.5s"):
            await call(registry, "slow", seconds=30)
        assert await call(registry, "slow", seconds=0.01) == "slept 0.01"


@pytest.mark.parametrize(
    ("command", "load_timeout", "message"),
    [
        ("no-such-mcp-server-command --flag", 10.0, "could not be loaded: FileNotFoundError"),
        (broken_command("exit"), 10.0, "closed the connection before the handshake completed"),
        (broken_command("garbage"), 1.0, r"not MCP JSON-RPC: 'this is not JSON-RPC \{\{\{'"),
        (broken_command("silent"), 0.5, r"did not answer the handshake .* within 0\.5s"),
    ],
    ids=["missing", "exits", "garbage", "silent"],
)
async def test_a_server_that_does_not_start_is_a_clear_load_error(
    command: str, load_timeout: float, message: str
) -> None:
    entered = False
    with pytest.raises(MCPLoadError, match=message):
        async with mcp_tools(command, load_timeout=load_timeout):
            entered = True
    assert not entered


async def test_a_server_that_starts_slowly_is_waited_for_by_default(
    anyio_backend: str,
) -> None:
    """The README's own example, ``mcp_tools("npx -y …")``, gave a first run
    10 s, which npm's download of the server often exceeds."""
    if anyio_backend != "asyncio":
        pytest.skip("eleven seconds once is enough")
    script = (
        f"import runpy, sys, time; time.sleep(11); sys.argv = [sys.argv[0]]; "
        f"runpy.run_path({MEMORY_SERVER!r}, run_name='__main__')"
    )
    async with mcp_tools(MCPStdio(sys.executable, ("-c", script))) as tools:
        assert await call(tools, "add", a=1, b=2) == '{\n  "sum": 3\n}'


async def test_cancelling_the_block_stops_the_server_process() -> None:
    pid = -1
    with anyio.CancelScope() as scope:
        async with mcp_tools(memory_command()) as registry:
            pid = await call(registry, "pid")
            scope.deadline = anyio.current_time() + 0.3  # lands during the next call
            await call(registry, "slow", seconds=60)
    assert scope.cancelled_caught
    assert int(pid) > 0
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid), 0)


async def test_the_blocks_own_exception_comes_out_unwrapped() -> None:
    with pytest.raises(KeyError, match="mine"):
        async with mcp_tools(memory_command()):
            raise KeyError("mine")


async def test_two_servers_need_namespaces_when_names_clash() -> None:
    with pytest.raises(MCPLoadError, match="'search_memory' of MCP server .* clashes"):
        async with mcp_tools(memory_command(), memory_command()):
            pass
    first = MCPStdio(sys.executable, (MEMORY_SERVER,), namespace="a")
    second = MCPStdio(sys.executable, (MEMORY_SERVER,), namespace="b")
    async with mcp_tools(first, second) as registry:
        assert len(registry) == 2 * len(MEMORY_TOOLS)
        assert await call(registry, "b.search_memory", query="tuna") == "Miso likes tuna"


async def test_tools_join_an_existing_registry() -> None:
    @tool
    def local_echo(text: str) -> str:
        """Echo."""
        return text

    registry = ToolRegistry([local_echo])
    async with mcp_tools(memory_command(), registry=registry, namespace="m") as loaded:
        assert loaded is registry
        assert "local_echo" in registry and "m.add" in registry


async def test_add_tools_is_all_or_none_and_renames_names_the_registry_refuses(
    caplog: pytest.LogCaptureFixture,
) -> None:
    connection = MCPConnection(MCPStdio("unused"))
    schema: dict[str, Any] = {"type": "object", "properties": {"q": {"type": "string"}}}
    connection.tools = [
        Tool(name="lookup", description="Look up.", input_schema=schema),
        Tool(name="my tool", input_schema={}),
    ]
    registry = ToolRegistry()
    # a name the registry refuses is offered with its space as "_" (test_mcp_s18_tool_names)
    assert add_tools(registry, [connection]) == ["lookup", "my_tool"]
    assert registry.schema("lookup") == schema
    assert "tool 'my tool' is offered as 'my_tool'" in caplog.text

    @tool
    def lookup(q: str) -> str:
        """A local tool of the same name."""
        return q

    local = ToolRegistry([lookup])
    with pytest.raises(MCPLoadError, match="'lookup' of MCP server 'unused' clashes"):
        add_tools(local, [connection])
    assert list(local) == ["lookup"] and local.get("lookup") is lookup


async def test_a_malformed_answer_fails_its_call_at_once_with_the_reason() -> None:
    # The SDK drops an answer it cannot validate; the call waited out call_timeout.
    async with mcp_tools(raw_command(), call_timeout=60) as registry:
        with anyio.fail_after(20):
            with pytest.raises(MCPToolError, match=r"not valid MCP JSON-RPC \(error\.message: "):
                await call(registry, "null_message")
            with pytest.raises(MCPToolError, match=r"\(result: Input should be an object\)"):
                await call(registry, "no_result")
            assert await call(registry, "ok") == "ok ran"  # the session is still fine


async def test_an_answer_under_an_unknown_id_is_a_warning_then_a_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Nothing says which request it meant; the log says why the call times out.
    caplog.set_level(logging.WARNING, logger="streamtools.mcp")
    async with mcp_tools(raw_command(), call_timeout=0.5) as registry:
        with pytest.raises(MCPToolError, match=r"did not answer the call to 'wrong_id' within"):
            await call(registry, "wrong_id")
    assert "sent an answer no request is waiting for (id 9999); ignored: lost track" in (
        caplog.text
    )


async def test_a_malformed_handshake_answer_is_a_load_error_at_once() -> None:
    with anyio.fail_after(20), pytest.raises(MCPLoadError, match=r"error\.message: Field required"):
        async with mcp_tools(raw_command("bad-handshake"), load_timeout=60):
            pass


async def test_tools_with_invalid_definitions_are_left_out_and_the_others_load(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="streamtools.mcp")
    async with mcp_tools(raw_command("invalid-tools")) as registry:
        assert set(registry) == {"ok", "null_message", "no_result", "wrong_id"}
        assert await call(registry, "ok") == "ok ran"
    assert "tool 'array_input' left out: its definition is not valid MCP (inputSchema.type: " in (
        caplog.text
    )
    assert "tool 'no_schema' left out" in caplog.text
    assert "tool without a valid name left out" in caplog.text


async def test_a_tool_listed_twice_by_its_server_is_loaded_once_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A server that lists one name twice failed the whole load, with advice that
    cannot help ("clashes with another tool of that name; give the server a
    namespace": the namespace prefixes both). The first listing is kept."""
    caplog.set_level(logging.WARNING, logger="streamtools.mcp")
    async with mcp_tools(raw_command("duplicate-tools"), namespace="raw") as registry:
        assert set(registry) == {"raw.ok", "raw.null_message", "raw.no_result", "raw.wrong_id"}
        ok = registry.get("raw.ok")
        assert ok is not None and ok.description == "Works."
        assert await call(registry, "raw.ok") == "ok ran"
    assert "MCP server" in caplog.text and "lists the tool 'ok' twice" in caplog.text


async def test_a_namespace_no_tool_name_can_start_with_is_refused_at_once() -> None:
    """Every tool was left out with a warning each, and the block began with none of
    the server's tools: the fault was the namespace, which the error now names."""
    refused = r"namespace 'my server' of MCP server .* invalid tool name"
    with pytest.raises(ToolDefinitionError, match=refused):
        async with mcp_tools(memory_command(), namespace="my server"):
            raise AssertionError("the block began")
