"""Registries for the MCP tests: they say when they change, so tests wait on events.

``RemovingRegistry`` also has the ``remove(name)`` that ``ToolRegistry`` does not
have yet (streamtools.mcp uses it when a registry has it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import anyio

from streamtools.tools import Tool, ToolRegistry


class WatchedRegistry(ToolRegistry):
    """A registry that says when a tool was added, so tests wait on an event."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self.changed = anyio.Event()
        super().__init__(tools)

    def add(self, tool_or_fn: Tool | Callable[..., Any]) -> Tool:
        added = super().add(tool_or_fn)
        self.changed.set()
        self.changed = anyio.Event()
        return added


class RemovingRegistry(WatchedRegistry):
    """Also the ``remove(name)`` that ``ToolRegistry`` does not have yet, built on
    its public API only (rebuilt without the tool, order kept)."""

    def remove(self, name: str) -> Tool | None:
        found = self.get(name)
        if found is not None:
            kept = [t for t in (self.get(n) for n in self if n != name) if t is not None]
            ToolRegistry.__init__(self, kept)
            self.changed.set()
            self.changed = anyio.Event()
        return found


async def until(registry: WatchedRegistry, condition: Callable[[], bool]) -> None:
    """Wait (bounded) for the connection's task to change the registry so."""
    with anyio.fail_after(10):
        while not condition():
            await registry.changed.wait()
