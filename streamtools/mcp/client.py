"""Tools from MCP servers in a ``ToolRegistry``, kept in step with the servers.

Theory of operation
-------------------
``mcp_tools(*servers)`` is an async context manager. Entering it starts one
``MCPConnection`` (``streamtools.mcp.connection``) per server, a stdio command
or a streamable HTTP URL, each in a task of a task group that the context
manager owns. Servers load concurrently; the first load error cancels the
others. Once every server is loaded, their tools are added to the registry
through ``add_schema``: the name (prefixed ``namespace.`` when asked), the
description and the ``inputSchema`` as the server gave them; all or, on a
name clash, none, so a failed load leaves a caller's registry as it was. A
name a tool name cannot be (``files/read``, ``get weather``: servers from
before the spec's naming rules) is offered with those characters as ``_``,
unless a tool already has that name (it was left out, and the model could not
use the tool at all); calls name the tool as the server does. Each
tool's function forwards the call to its connection and returns text.

After that, the registry follows the servers. A ``MountedTools`` remembers
which registry entries each connection put there; whenever a connection
re-lists its tools (the server said they changed, or it was restarted), it
brings that server's entries in line: new tools are added, tools that are
gone are removed, tools whose description or schema changed are replaced. A
new tool whose name another server's (or the caller's) tool already holds is
logged and left out; a name a server's tool stops holding is offered to the
other servers' tools that gave way to it. Nothing here awaits, so the
registry never shows a half-done update; the agent re-reads
``registry.specs()`` at every turn, so the model sees the change at its next
turn.

A ``Tool`` taken out of the registry still forwards to its connection (the
agent may hold one mid-turn); the connection refuses a tool the server no
longer lists, which the model hears as a tool error.

Leaving the block (normally, by an exception or by cancellation) closes every
connection: stdin is closed and the process stopped, or the HTTP session
ended. The tools stay in a caller's registry; calling them then is a tool
error.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import lru_cache
from typing import Any

import anyio
from mcp.types import Tool as RemoteTool

from streamtools.errors import ToolDefinitionError
from streamtools.mcp.connection import MCPConnection
from streamtools.mcp.elicit import OnElicit
from streamtools.mcp.servers import (
    MCPHttp,
    MCPLoadError,
    MCPStdio,
    MCPToolError,
    ServerLike,
    parse_server,
)
from streamtools.tools import Tool, ToolRegistry

__all__ = [
    "MCPConnection",
    "MCPHttp",
    "MCPLoadError",
    "MCPStdio",
    "MCPToolError",
    "MountedTools",
    "add_tools",
    "mcp_tools",
    "parse_server",
]

logger = logging.getLogger("streamtools.mcp")


def _tool_function(connection: MCPConnection, remote_name: str) -> Any:
    async def call_mcp_tool(**arguments: Any) -> str:
        return await connection.call(remote_name, arguments)

    call_mcp_tool.__name__ = remote_name
    return call_mcp_tool


def _parameters(tool: RemoteTool) -> dict[str, Any]:
    schema = dict(tool.input_schema)
    # inputSchema is required to be an object schema; be forgiving about the keys
    # a sloppy server leaves out, since every dialect renders from "properties".
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


def _description(tool: RemoteTool) -> str:
    return tool.description or tool.title or ""


_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]")


def _local_name(connection: MCPConnection, remote: RemoteTool) -> str:
    """The registry name of a server's tool: its own, prefixed ``namespace.`` when
    asked; one the registry would refuse (``files/read``, ``get weather``: a
    server's from before the spec's naming rules) with each character a tool
    name cannot hold as ``_`` (calls still name the tool as the server does)."""
    namespace = connection.server.namespace
    name = f"{namespace}.{remote.name}" if namespace else remote.name
    if _valid(name):
        return name
    safe = _UNSAFE.sub("_", remote.name)
    if not namespace and safe[:1] in ("-", "."):
        safe = "_" + safe
    return f"{namespace}.{safe}"[:128] if namespace else safe[:128]


@lru_cache(maxsize=1024)
def _valid(name: str) -> bool:
    try:
        ToolRegistry().add_schema(name, "", {"type": "object", "properties": {}})
    except ToolDefinitionError:
        return False
    return True


def _renamed(connection: MCPConnection, remote: RemoteTool) -> bool:
    namespace = connection.server.namespace
    return _local_name(connection, remote) != (
        f"{namespace}.{remote.name}" if namespace else remote.name
    )


def _in_order(connection: MCPConnection) -> list[RemoteTool]:
    """The server's tools, those that keep their names first: a renamed tool gives
    way to one whose own name it took (``get weather`` to ``get_weather``)."""
    return sorted(connection.tools, key=lambda remote: _renamed(connection, remote))


def _all_in_order(
    connections: Sequence[MCPConnection],
) -> list[tuple[MCPConnection, RemoteTool]]:
    """Every server's tools, those that keep their names first, whichever server
    they come from: a renamed tool gives way to another server's own name too."""
    pairs = [(connection, remote) for connection in connections for remote in connection.tools]
    return sorted(pairs, key=lambda pair: _renamed(*pair))


def add_tools(registry: ToolRegistry, connections: Sequence[MCPConnection]) -> list[str]:
    """Add loaded connections' tools to ``registry`` (all or, on a name clash, none).

    A tool the registry cannot take (a name it refuses, such as one starting with
    a digit) is left out with a logged warning rather than failing the others.
    """
    planned = ToolRegistry()  # built apart first, so a clash leaves ``registry`` untouched
    for connection, remote in _all_in_order(connections):
        name = _local_name(connection, remote)
        renamed = _renamed(connection, remote)
        if renamed and (name in registry or name in planned):
            logger.warning(
                "MCP server %r: tool %r left out: its name as a tool name, %r, is taken",
                connection.label, remote.name, name,
            )
            continue
        if name in registry or name in planned:
            raise MCPLoadError(
                f"tool {name!r} of MCP server {connection.label!r} clashes with another "
                "tool of that name; give the server a namespace"
            )
        fn = _tool_function(connection, remote.name)
        try:
            planned.add_schema(name, _description(remote), _parameters(remote), fn)
        except ToolDefinitionError as exc:
            logger.warning("MCP server %r: tool %r left out: %s", connection.label, name, exc)
            continue
        if renamed:
            logger.warning(
                "MCP server %r: tool %r is offered as %r (a tool name cannot hold "
                "its characters)", connection.label, remote.name, name,
            )
    for name in planned:
        tool = planned.get(name)
        assert tool is not None  # iterating its own names
        registry.add(tool)
    return list(planned)


class MountedTools:
    """The MCP tools in one registry, by the connection that put each there and
    the server's name of the tool each calls (a renamed tool's differs)."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self._owner: dict[str, tuple[MCPConnection, Tool, str]] = {}
        self._connections: list[MCPConnection] = []

    def record(self, connections: Sequence[MCPConnection], added: Sequence[str]) -> None:
        """Take note of the tools ``add_tools`` put in the registry for
        ``connections`` (``added``, the names it returned): a tool the registry
        had before, whose name a renamed tool would have taken, is not theirs."""
        self._connections = list(connections)
        added_names = set(added)
        # in ``add_tools``' order, so a name goes to the tool that took it
        for connection, remote in _all_in_order(connections):
            name = _local_name(connection, remote)
            found = self.registry.get(name)
            if found is not None and name in added_names and name not in self._owner:
                self._owner[name] = (connection, found, remote.name)

    def names(self, connection: MCPConnection) -> list[str]:
        """The registry names of the tools ``connection`` has in the registry now."""
        return [name for name, (owner, *_) in self._owner.items() if owner is connection]

    def sync(self, connection: MCPConnection) -> None:
        """Bring the registry in line with ``connection.tools`` (its latest listing).
        A name this frees is offered to the other servers' tools that gave way to it
        (a renamed tool left out for it): it stayed empty until their own servers
        changed their lists."""
        wanted = self._wanted(connection)
        freed = False
        for name in self.names(connection):
            _, tool, called = self._owner[name]
            remote = wanted.get(name)
            if remote is None:
                self._withdraw(name)  # gone
                freed = True
            elif (
                called != remote.name  # another of the server's tools now has the name
                or tool.description != _description(remote)
                or tool.parameters != _parameters(remote)
            ):
                self._withdraw(name)  # changed: added anew below
        self._offer(connection, wanted, warn=True)
        if freed:
            others = [other for other in self._connections if other is not connection]
            for other, remote in _all_in_order(others):
                name = _local_name(other, remote)
                if name not in self.registry and self._wanted(other).get(name) is remote:
                    self._offer(other, {name: remote}, warn=False)

    @staticmethod
    def _wanted(connection: MCPConnection) -> dict[str, RemoteTool]:
        wanted: dict[str, RemoteTool] = {}
        for offered in _in_order(connection):  # a renamed tool gives way (``_in_order``)
            wanted.setdefault(_local_name(connection, offered), offered)
        return wanted

    def _offer(
        self, connection: MCPConnection, wanted: dict[str, RemoteTool], *, warn: bool
    ) -> None:
        """Add the tools of ``wanted`` not in the registry yet (``warn``: log those
        whose name another tool holds; they were logged once already otherwise)."""
        for name, remote in wanted.items():
            if name in self._owner:
                continue
            if name in self.registry:
                if warn:
                    logger.warning(
                        "MCP server %r: new tool %r left out: another tool holds that name "
                        "(give the server a namespace)",
                        connection.label,
                        name,
                    )
                continue
            fn = _tool_function(connection, remote.name)
            try:
                tool = self.registry.add_schema(name, _description(remote), _parameters(remote), fn)
            except ToolDefinitionError as exc:
                if warn:
                    logger.warning(
                        "MCP server %r: tool %r left out: %s", connection.label, name, exc
                    )
                continue
            self._owner[name] = (connection, tool, remote.name)

    def _withdraw(self, name: str) -> None:
        self.registry.remove(name)
        del self._owner[name]


def _check_namespace(connection: MCPConnection) -> None:
    """``ToolDefinitionError`` for a namespace no tool name can start with ("my
    server"): each tool was left out with a warning, and the block began with
    none of the server's tools, though the fault was the caller's, not a tool's."""
    namespace = connection.server.namespace
    if not namespace:
        return
    try:
        ToolRegistry().add_schema(f"{namespace}.tool", "", {"type": "object", "properties": {}})
    except ToolDefinitionError as exc:
        raise ToolDefinitionError(
            f"namespace {namespace!r} of MCP server {connection.label!r} cannot prefix "
            f"a tool name: {exc}"
        ) from None


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


@asynccontextmanager
async def mcp_tools(
    *servers: ServerLike,
    registry: ToolRegistry | None = None,
    namespace: str | None = None,
    load_timeout: float = 60.0,
    call_timeout: float | None = 60.0,
    max_restarts: int = 3,
    on_elicit: OnElicit | None = None,
) -> AsyncIterator[ToolRegistry]:
    """Load the tools of MCP servers into a registry, for the duration of the block.

    ``servers``: command lines, URLs, ``MCPStdio`` or ``MCPHttp``. ``namespace``
    prefixes the tools of servers that do not name their own. ``registry``: add
    to an existing registry (its own tools stay) instead of a new one; the MCP
    tools stay in it after the block, but calling them then raises ``MCPToolError``.
    The registry follows each server's tool list while the block runs. A server
    that stopped (a crashed process, a broken HTTP session) is restarted on the
    next call of one of its tools, at most ``max_restarts`` times.
    ``load_timeout`` bounds a server's start, handshake and listing: 60 s, since a
    first ``npx -y`` or ``uvx`` run downloads the server (10 s often failed it).
    ``call_timeout`` bounds how long a call may go without a word from the server:
    each progress notification starts it again, up to ten times it in all. An
    agent's ``tool_timeout`` bounds an MCP call's silence likewise: progress
    starts it again, up to the same limit in all (``streamtools.runtime.progress``).
    ``on_elicit`` answers a server that asks the user something mid-call
    (``elicitation/create``): called with an ``Elicitation``, sync or async, it
    returns an ``ElicitAnswer``; without it such a question is declined
    (``streamtools.mcp.elicit``).
    """
    target = registry if registry is not None else ToolRegistry()
    mounted = MountedTools(target)
    connections = [
        MCPConnection(
            parse_server(s, namespace=namespace),
            load_timeout=load_timeout,
            call_timeout=call_timeout,
            max_restarts=max_restarts,
            on_elicit=on_elicit,
        )
        for s in servers
    ]
    for connection in connections:
        _check_namespace(connection)
    try:
        async with anyio.create_task_group() as tg:
            try:
                # Servers start concurrently; the first load error cancels the others.
                async with anyio.create_task_group() as loading:
                    for connection in connections:
                        loading.start_soon(tg.start, connection.run)
                mounted.record(connections, add_tools(target, connections))
                for connection in connections:
                    connection.on_tools = mounted.sync
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
