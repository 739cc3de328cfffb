"""A registry for the MCP tests that says when it changes, so tests wait on events."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar, overload

import anyio

from streamtools.tools import FunctionTool, Tool, ToolRegistry

_F = TypeVar("_F", bound=Callable[..., Any])


class WatchedRegistry(ToolRegistry):
    """A registry that says when a tool was added or removed."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self.changed = anyio.Event()
        super().__init__(tools)

    # ToolRegistry.add's overloads, which an override repeats (mypy: incompatible otherwise)
    @overload
    def add(self, tool_or_fn: FunctionTool[_F]) -> FunctionTool[_F]: ...
    @overload
    def add(self, tool_or_fn: Tool) -> Tool: ...  # type: ignore[overload-overlap]
    @overload
    def add(self, tool_or_fn: _F) -> FunctionTool[_F]: ...
    def add(self, tool_or_fn: Tool | Callable[..., Any]) -> Tool:
        added = super().add(tool_or_fn)
        self._signal()
        return added

    def remove(self, name: str) -> Tool | None:
        removed = super().remove(name)
        self._signal()
        return removed

    def _signal(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()


async def until(registry: WatchedRegistry, condition: Callable[[], bool]) -> None:
    """Wait (bounded) for the connection's task to change the registry so. The
    bound is generous: a list change over HTTP on trio took over 10 s once on a
    loaded shared machine; a change that never comes still fails the test."""
    with anyio.fail_after(30):
        while not condition():
            await registry.changed.wait()
