"""A streamtools registry served as an MCP server (stdio or streamable HTTP).

Theory of operation
-------------------
``mcp_server(registry)`` builds the SDK's low-level ``Server`` with two
handlers. ``tools/list`` answers each tool's name, description and parameter
schema (the same JSON Schema the dialects render). ``tools/call`` runs a call
the way the agent runtime does: arguments validated by ``Tool.validate``
(strict: MCP clients send typed JSON, not XML text), then the executor's
``tool_value``: async functions awaited, sync ones run in a worker thread
(abandoned if the call is cancelled: a blocking tool must not hold the
handler), a returned coroutine awaited and a generator's items collected (the
client was sent ``<generator object … at 0x…>``); the value turned into text
by ``format_result``. A value that is a JSON object is also sent as
``structuredContent``, for clients that read it.

Failures stay inside the protocol, as MCP asks of tools: a tool's exception
(``SystemExit`` too: a wrapped command line's ``sys.exit`` ended a stdio
server), invalid arguments, or a call that outlives the tool's own ``timeout``
(``@tool(timeout=…)``, which the agent honours and this server ignored: the
call ran on until the client gave up, a sync tool's worker thread with it)
become a result with ``isError`` and a message the calling model can act on.
Only an unknown tool name is a JSON-RPC error (``INVALID_PARAMS``), as the spec
shows for it; its message lists the names that exist.

A tool that reports its progress (``call_progress().report``, as under an
agent: ``streamtools.runtime.progress``) has it sent to the client as
``notifications/progress``, when the client asked for progress (a
``progressToken``); the latest report when they come faster than they are sent.
The tool's own ``timeout`` stays a limit in all here: no agent's clock to start
again.

Only tools with a function are served: a registry may also hold tools known
by their schema alone (``add_schema`` without ``fn``), which this server
could list but never run. They are neither listed nor named as callable.

Transports: ``serve_stdio`` (any anyio backend) for clients that start the
server as a subprocess; ``http_app`` returns a Starlette ASGI app for any ASGI
server (its lifespan must run: it owns the session manager); ``serve_http``
runs that app with uvicorn, so it needs the asyncio backend.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable, Iterable
from typing import Any

import anyio
import anyio.lowlevel
import msgspec
import uvicorn
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
)
from mcp.types import Tool as MCPTool
from starlette.applications import Starlette

from streamtools import __version__
from streamtools.errors import describe_exception
from streamtools.events import CallEnd, ToolProgress
from streamtools.results import format_result
from streamtools.runtime.executor import tool_value
from streamtools.runtime.progress import CallProgress, reset_progress, set_progress
from streamtools.tools import Tool, ToolArgumentsError, ToolRegistry

__all__ = ["http_app", "mcp_server", "serve_http", "serve_stdio"]

Tools = ToolRegistry | Iterable[Tool | Callable[..., Any]]


def _registry(tools: Tools) -> ToolRegistry:
    return tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools)


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def _structured(value: Any, text: str) -> dict[str, Any] | None:
    """A JSON-object result as ``structuredContent``: its text decoded, so both
    say the same (keys as the text spells them, lone surrogates replaced)."""
    if isinstance(value, str | bytes | bytearray) or not text.startswith("{"):
        return None
    try:
        decoded = msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError):  # also: deeper than msgspec goes
        return None
    return decoded if isinstance(decoded, dict) else None


def mcp_server(
    tools: Tools,
    *,
    name: str = "streamtools",
    version: str = __version__,
    instructions: str | None = None,
) -> Server[Any]:
    """An MCP server (the SDK's low-level ``Server``) exposing ``tools``.

    The registry is read at each request, so tools added later are listed.
    """
    registry = _registry(tools)

    def runnable() -> ToolRegistry:
        return ToolRegistry(
            tool for name in registry if (tool := registry.get(name)) and tool.fn is not None
        )

    async def list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        served = runnable()
        listed = []
        for tool_name in served:
            tool = served.get(tool_name)
            assert tool is not None  # iterating the registry's own names
            listed.append(
                MCPTool(
                    name=tool.name, description=tool.description, input_schema=tool.parameters
                )
            )
        return ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        tool = registry.get(params.name)
        if tool is None or tool.fn is None:
            message = runnable().unknown_tool_message(params.name)
            raise MCPError(code=INVALID_PARAMS, message=message)
        try:
            kwargs = tool.validate(dict(params.arguments or {}))
        except ToolArgumentsError as exc:
            return _error(str(exc))
        try:
            with anyio.move_on_after(tool.timeout) as limit:  # None: no limit
                value = await _reporting(ctx, tool, kwargs)
        except (Exception, SystemExit) as exc:  # SystemExit: a wrapped command line's
            return _error(f"Tool `{tool.name}` failed: {describe_exception(exc)}")
        except anyio.get_cancelled_exc_class() as exc:
            # Raises again when the call is really cancelled; a tool that raised it
            # itself (asyncio's, from a future another task cancelled) failed.
            await anyio.lowlevel.checkpoint_if_cancelled()
            return _error(f"Tool `{tool.name}` failed: {describe_exception(exc)}")
        if limit.cancelled_caught:
            return _error(f"Tool `{tool.name}` timed out after {tool.timeout:g} s.")
        try:  # outside the tool's try: it did run (as the runtime's executor reports it)
            text = format_result(value)
        except Exception as exc:
            return _error(
                f"Tool `{tool.name}` ran, but its result could not be turned into text: "
                + describe_exception(exc)
            )
        return CallToolResult(
            content=[TextContent(type="text", text=text)],
            structured_content=_structured(value, text),
        )

    return Server(
        name,
        version=version,
        instructions=instructions,
        get_tool_input_schema=registry.schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def _reporting(ctx: ServerRequestContext[Any], tool: Tool, kwargs: dict[str, Any]) -> Any:
    """``tool_value``, with the progress the tool reports (``call_progress()``)
    sent to the client as ``notifications/progress`` (see the module docstring).
    What the tool raises is raised plain, not in this task group's group."""

    async def send(event: ToolProgress) -> None:
        await ctx.session.report_progress(event.progress, event.total, event.message)

    call = CallEnd(index=0, id=str(ctx.request_id), name=tool.name, arguments=kwargs, raw="")
    value: Any = None
    failure: BaseException | None = None
    async with anyio.create_task_group() as tasks:
        progress = CallProgress(call, tasks, send)
        token = set_progress(progress)
        try:
            value = await tool_value(tool, kwargs)
        except BaseException as exc:
            failure = exc
        finally:
            reset_progress(token)
            progress.close()
    if failure is not None:
        raise failure
    return value


async def serve_stdio(tools: Tools, *, name: str = "streamtools") -> None:
    """Serve ``tools`` over this process's stdin/stdout until stdin closes."""
    server = mcp_server(tools, name=name)
    async with stdio_server() as (read_stream, write_stream):
        try:
            await server.run(read_stream, write_stream, server.create_initialization_options())
        finally:
            # While serving, the SDK points fd 1 at stderr, so that a tool's print()
            # cannot corrupt the wire; but print() to a pipe is buffered, and what
            # is still in sys.stdout's buffer would be written to the client's
            # stdout once the SDK puts fd 1 back. Flushed now, it goes to stderr.
            sys.stdout.flush()


def http_app(
    tools: Tools,
    *,
    name: str = "streamtools",
    path: str = "/mcp",
    host: str = "127.0.0.1",
    json_response: bool = False,
    stateless: bool = False,
) -> Starlette:
    """A Starlette app serving ``tools`` over streamable HTTP at ``path``.

    ``host`` is where it will listen: for a loopback host the SDK turns on its
    DNS-rebinding protection (only local Host/Origin headers are accepted).
    """
    server = mcp_server(tools, name=name)
    path = path if path.startswith("/") else "/" + path  # Starlette refused "mcp"
    return server.streamable_http_app(
        streamable_http_path=path, json_response=json_response, stateless_http=stateless, host=host
    )


async def serve_http(
    tools: Tools,
    *,
    name: str = "streamtools",
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    log_level: str = "warning",
    on_listening: Callable[[str], None] | None = None,
) -> None:
    """Serve ``tools`` over streamable HTTP with uvicorn until cancelled (asyncio only).
    ``on_listening`` is called with the endpoint's URL once the socket listens
    (the real port for ``port=0``).

    The socket is bound first, so that an address that cannot be served (a port
    in use, a host not ours) raises ``OSError`` here: uvicorn would log it and
    call ``sys.exit``, which left this task group as an exception group.
    Cancelling stops the server gracefully (open sessions get a few seconds):
    uvicorn itself runs shielded and is told to exit, so its sockets are closed
    before this returns.
    """
    app = http_app(tools, name=name, path=path, host=host)
    config = uvicorn.Config(
        app, host=host, port=port, log_level=log_level, lifespan="on", timeout_graceful_shutdown=3
    )
    server = uvicorn.Server(config)
    sock = _listening_socket(host, port)
    with sock:
        if on_listening is not None:
            shown = f"[{host}]" if ":" in host else host
            slash = "" if path.startswith("/") else "/"  # as http_app serves it
            on_listening(f"http://{shown}:{sock.getsockname()[1]}{slash}{path}")
        async with anyio.create_task_group() as tg:

            async def serve() -> None:
                try:
                    with anyio.CancelScope(shield=True):
                        await server.serve(sockets=[sock])
                finally:
                    tg.cancel_scope.cancel()  # it stopped on its own: end the wait below

            tg.start_soon(serve)
            try:
                await anyio.sleep_forever()
            finally:
                server.should_exit = True


def _listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket listening on ``host:port`` (an IPv6 host: an IPv6 socket, as
    uvicorn makes one); ``OSError`` saying why not."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock
