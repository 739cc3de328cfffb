"""Tools from MCP servers: connect, list, call, and convert results to text.

Theory of operation
-------------------
``mcp_tools(*servers)`` is an async context manager. Entering it starts one
``MCPConnection`` per server (a stdio command or a streamable HTTP URL),
lists each server's tools and adds them to a ``ToolRegistry`` through
``add_schema``: the name (prefixed ``namespace.`` when asked), the
description and the ``inputSchema`` as the server gave them. Each tool's
function forwards the call to its server and returns the result as text.
Leaving the block (normally, by an exception or by cancellation) closes every
session: stdin is closed and the process stopped, or the HTTP session ended.

Each connection lives in a task of its own, inside a task group that the
context manager owns. The SDK's ``Client`` enters task groups of its own; a
dedicated task keeps their cancel scopes nested in order whatever the caller
does, lets a load deadline cover the whole handshake, and keeps the caller's
code outside the SDK's task groups, so that a transport failing later cannot
cancel the caller. The connection task never raises once loaded: a server
that dies mid-session only turns later calls into tool errors.

Failures, by when they happen:

- At load (command not found, process exits, garbage on stdout, no answer,
  HTTP refused): ``MCPLoadError`` naming the server, within ``load_timeout``.
- At call: the function raises ``MCPToolError``, which the runtime reports to
  the model as a tool error and then goes on: ``isError`` results (with the
  server's own text), a connection closed mid-call (crash), no answer within
  ``call_timeout``, a JSON-RPC error.

Servers load concurrently; the first load error cancels the others. Tools are
added to the registry only once every server is loaded, and only if no name
clashes (all or none), so a failed load leaves a caller's registry as it was.

Results become text with ``streamtools.mcp.results.result_text``.
"""

from __future__ import annotations

import logging
import math
import shlex
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TextIO

import anyio
import anyio.lowlevel
import httpx2
from anyio.abc import TaskStatus
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.session import IncomingMessage
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT, Implementation, Tool

from streamtools import __version__
from streamtools.errors import StreamtoolsError, ToolDefinitionError
from streamtools.mcp.results import result_text
from streamtools.tools import ToolRegistry

__all__ = [
    "MCPConnection",
    "MCPHttp",
    "MCPLoadError",
    "MCPStdio",
    "MCPToolError",
    "add_tools",
    "mcp_tools",
    "parse_server",
]

logger = logging.getLogger(__name__)

# Bounds a listing that never ends (a server handing out cursors forever).
_MAX_LIST_PAGES = 100


class MCPLoadError(StreamtoolsError):
    """An MCP server could not be started, connected to, or listed."""


class MCPToolError(StreamtoolsError):
    """A call to an MCP tool failed; the message is what the model is told."""


@dataclass(frozen=True)
class MCPStdio:
    """An MCP server run as a subprocess, spoken to over its stdin/stdout.

    ``env`` is merged over the SDK's small safe default environment; the
    server's stderr goes to ``errlog`` (the caller's stderr by default).
    """

    command: str
    args: Sequence[str] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    namespace: str | None = None
    errlog: TextIO | None = None

    @property
    def label(self) -> str:
        return shlex.join([self.command, *self.args])


@dataclass(frozen=True)
class MCPHttp:
    """An MCP server reached over streamable HTTP at ``url`` (e.g. ``http://host/mcp``)."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    namespace: str | None = None

    @property
    def label(self) -> str:
        return self.url


ServerLike = str | MCPStdio | MCPHttp


def parse_server(server: ServerLike, *, namespace: str | None = None) -> MCPStdio | MCPHttp:
    """A URL (``http://``/``https://``) means streamable HTTP; any other string
    is a command line, split as a POSIX shell would (no shell runs it)."""
    if isinstance(server, MCPStdio | MCPHttp):
        return server
    if server.startswith(("http://", "https://")):
        return MCPHttp(server, namespace=namespace)
    argv = shlex.split(server)
    if not argv:
        raise MCPLoadError("empty MCP server command")
    return MCPStdio(argv[0], tuple(argv[1:]), namespace=namespace)


def _unwrap(exc: BaseException) -> BaseException:
    # The SDK's task groups wrap a single failure in exception groups, sometimes twice.
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    """One line for an error that may arrive wrapped in exception groups."""
    exc = _unwrap(exc)
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _offending_input(exc: Exception) -> str:
    # A pydantic ValidationError knows the line it could not parse: show that, short.
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
        except Exception:  # not pydantic's errors(): fall back to the message
            first = None
        if isinstance(first, dict) and "input" in first:
            return repr(first["input"])[:120]
    return _describe(exc).splitlines()[0][:120]


class MCPConnection:
    """One live session with one MCP server (used through ``mcp_tools``).

    ``tools`` holds the server's tools once loaded; ``call`` forwards a call and
    returns its text or raises ``MCPToolError``. ``failure`` says why a session
    ended early (None while it is up or after a normal close).
    """

    def __init__(
        self,
        server: ServerLike,
        *,
        load_timeout: float = 10.0,
        call_timeout: float | None = 60.0,
    ) -> None:
        self.server = parse_server(server)
        self.load_timeout = load_timeout
        self.call_timeout = call_timeout
        self.tools: list[Tool] = []
        self.server_name: str | None = None
        self.failure: str | None = None
        self._client: Client | None = None
        self._closing = anyio.Event()
        self._garbage: str | None = None  # the first line the server sent that was not JSON-RPC

    async def _on_message(self, message: IncomingMessage) -> None:
        # The SDK hands undecodable lines to this hook and otherwise drops them;
        # remember one so that a load timeout can say what the server did send.
        if isinstance(message, Exception) and self._garbage is None:
            self._garbage = _offending_input(message)
        await anyio.lowlevel.checkpoint()

    @property
    def label(self) -> str:
        return self.server.label

    def _open_client(self) -> tuple[Client, httpx2.AsyncClient | None]:
        info = Implementation(name="streamtools", version=__version__)
        server = self.server
        if isinstance(server, MCPHttp):
            # Our own httpx2 client only to pass headers; the timeouts follow the SDK's
            # advice (a long read timeout: the server may hold an event stream open).
            http = httpx2.AsyncClient(
                headers=dict(server.headers), timeout=httpx2.Timeout(30.0, read=300.0)
            )
            transport = streamable_http_client(server.url, http_client=http)
            return Client(transport, client_info=info, message_handler=self._on_message), http
        params = StdioServerParameters(
            command=server.command,
            args=list(server.args),
            env=dict(server.env) if server.env is not None else None,
            cwd=server.cwd,
        )
        stdio = stdio_client(params, errlog=server.errlog or sys.stderr)
        return Client(stdio, client_info=info, message_handler=self._on_message), None

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Connect, list the tools, report ``started``, then hold the session open
        until ``close()``. Raises ``MCPLoadError`` before ``started`` only."""
        started = False
        http_client: httpx2.AsyncClient | None = None
        try:
            # The deadline covers spawn + handshake + listing; once loaded it is lifted,
            # since a cancel scope cannot be left while the SDK's task groups stay open.
            deadline = anyio.current_time() + self.load_timeout
            with anyio.CancelScope(deadline=deadline) as load_scope:
                client, http_client = self._open_client()
                async with client:
                    self.tools = await self._list_tools(client)
                    info = client.server_info
                    self.server_name = info.name if info is not None else None
                    load_scope.deadline = math.inf
                    self._client = client
                    started = True
                    task_status.started()
                    await self._closing.wait()
            if load_scope.cancelled_caught and not started:
                if self._garbage is not None:
                    raise MCPLoadError(
                        f"MCP server {self.label!r} answered with something that is not "
                        f"MCP JSON-RPC: {self._garbage}"
                    )
                raise MCPLoadError(
                    f"MCP server {self.label!r} did not answer the handshake and tool "
                    f"listing within {self.load_timeout:g}s"
                )
        except MCPLoadError:
            raise
        except Exception as exc:
            if not started:
                inner = _unwrap(exc)
                if isinstance(inner, MCPError) and inner.code == CONNECTION_CLOSED:
                    sent = f"; it wrote {self._garbage}, not JSON-RPC" if self._garbage else ""
                    raise MCPLoadError(
                        f"MCP server {self.label!r} closed the connection before the "
                        f"handshake completed (did the command exit? see its stderr){sent}"
                    ) from exc
                raise MCPLoadError(
                    f"MCP server {self.label!r} could not be loaded: {_describe(exc)}"
                ) from exc
            # After loading, a failing transport must not cancel the caller: record it,
            # and later calls become tool errors.
            self.failure = _describe(exc)
        finally:
            self._client = None
            if http_client is not None:
                with anyio.CancelScope(shield=True):
                    await http_client.aclose()

    async def _list_tools(self, client: Client) -> list[Tool]:
        tools: list[Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_LIST_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                return tools
        raise MCPLoadError(f"MCP server {self.label!r} lists tools in more than 100 pages")

    def close(self) -> None:
        """Ask the session to end; ``run`` returns once the server is stopped."""
        self._closing.set()

    async def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        """Call the server's tool ``name`` and return the result text."""
        client = self._client
        if client is None or self.failure is not None:
            why = f" ({self.failure})" if self.failure else ""
            raise MCPToolError(f"MCP server {self.label!r} is not connected{why}")
        try:
            result = await client.call_tool(
                name, dict(arguments), read_timeout_seconds=self.call_timeout
            )
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self.failure = f"it closed the connection during a call to {name!r}"
                raise MCPToolError(
                    f"MCP server {self.label!r} closed the connection during the call "
                    f"to {name!r} (it may have crashed)"
                ) from exc
            if exc.code == REQUEST_TIMEOUT:
                raise MCPToolError(
                    f"MCP server {self.label!r} did not answer the call to {name!r} "
                    f"within {self.call_timeout}s"
                ) from exc
            raise MCPToolError(f"MCP tool {name!r} failed: {exc}") from exc
        except Exception as exc:  # a malformed answer, a transport error
            raise MCPToolError(f"MCP tool {name!r} failed: {_describe(exc)}") from exc
        text = result_text(result)
        if result.is_error:
            raise MCPToolError(text or f"MCP tool {name!r} reported an error")
        return text


def _tool_function(connection: MCPConnection, remote_name: str) -> Any:
    async def call_mcp_tool(**arguments: Any) -> str:
        return await connection.call(remote_name, arguments)

    call_mcp_tool.__name__ = remote_name
    return call_mcp_tool


def _parameters(tool: Tool) -> dict[str, Any]:
    schema = dict(tool.input_schema)
    # inputSchema is required to be an object schema; be forgiving about the keys
    # a sloppy server leaves out, since every dialect renders from "properties".
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


def add_tools(registry: ToolRegistry, connections: Sequence[MCPConnection]) -> list[str]:
    """Add loaded connections' tools to ``registry`` (all or, on a name clash, none).

    A tool the registry cannot take (a name it refuses, such as one starting with
    a digit) is left out with a logged warning rather than failing the others.
    """
    planned = ToolRegistry()  # built apart first, so a clash leaves ``registry`` untouched
    for connection in connections:
        namespace = connection.server.namespace
        for remote in connection.tools:
            name = f"{namespace}.{remote.name}" if namespace else remote.name
            if name in registry or name in planned:
                raise MCPLoadError(
                    f"tool {name!r} of MCP server {connection.label!r} clashes with another "
                    "tool of that name; give the server a namespace"
                )
            description = remote.description or remote.title or ""
            fn = _tool_function(connection, remote.name)
            try:
                planned.add_schema(name, description, _parameters(remote), fn)
            except ToolDefinitionError as exc:
                logger.warning("MCP server %r: tool %r left out: %s", connection.label, name, exc)
    for name in planned:
        tool = planned.get(name)
        assert tool is not None  # iterating its own names
        registry.add(tool)
    return list(planned)


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


@asynccontextmanager
async def mcp_tools(
    *servers: ServerLike,
    registry: ToolRegistry | None = None,
    namespace: str | None = None,
    load_timeout: float = 10.0,
    call_timeout: float | None = 60.0,
) -> AsyncIterator[ToolRegistry]:
    """Load the tools of MCP servers into a registry, for the duration of the block.

    ``servers``: command lines, URLs, ``MCPStdio`` or ``MCPHttp``. ``namespace``
    prefixes the tools of servers that do not name their own. ``registry``: add
    to an existing registry (its own tools stay) instead of a new one; the MCP
    tools stay in it after the block, but calling them then raises ``MCPToolError``.
    """
    target = registry if registry is not None else ToolRegistry()
    connections = [
        MCPConnection(parse_server(s, namespace=namespace), load_timeout=load_timeout,
                      call_timeout=call_timeout)
        for s in servers
    ]
    try:
        async with anyio.create_task_group() as tg:
            try:
                # Servers start concurrently; the first load error cancels the others.
                async with anyio.create_task_group() as loading:
                    for connection in connections:
                        loading.start_soon(tg.start, connection.run)
                add_tools(target, connections)
                yield target
            finally:
                for connection in connections:
                    connection.close()
    except BaseExceptionGroup as group:
        # Connection tasks never raise once loaded, so a group carries the caller's
        # own exception or load errors: give them back unwrapped.
        leaves = _leaves(group)
        if len(leaves) == 1:
            raise leaves[0] from leaves[0].__cause__
        if all(isinstance(leaf, MCPLoadError) for leaf in leaves):
            raise MCPLoadError("; ".join(str(leaf) for leaf in leaves)) from group
        raise
