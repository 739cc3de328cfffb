"""One MCP server's tool listing, as the connection keeps it: ``list_tools``.

Theory of operation
-------------------
``list_tools(client, label)`` follows ``tools/list`` page by page, and mends
three things servers get wrong, each of which cost more than its fault:

- A cursor handed back again (on the last page, or ``""`` for none): followed,
  it listed the same tools for ever, and the load failed at the cap. The
  listing ends there, with a warning. A listing that never ends otherwise is
  cut at ``_MAX_LIST_PAGES`` (100) pages, an ``MCPLoadError``.
- A name listed twice failed the whole load as a clash, with advice (a
  namespace) that prefixes both. The first is kept; only a second, different
  definition is worth a warning.
- A tool the server runs only as a task (``taskSupport: "required"``, spec
  2025-11-25), which this client does not make: a plain call of one is
  refused, so the model was offered a tool that always failed. It is left out,
  with a warning.

Moved out of ``streamtools.mcp.connection``, which uses it for the first
listing and each re-listing, when that module reached its size limit.
"""

from __future__ import annotations

import logging

from mcp import Client
from mcp.types import Tool

from streamtools.mcp.servers import MCPLoadError

__all__ = ["list_tools"]

logger = logging.getLogger("streamtools.mcp")

# Bounds a listing that never ends (a server handing out cursors forever).
_MAX_LIST_PAGES = 100


async def list_tools(client: Client, label: str) -> list[Tool]:
    """The tools of the server ``label`` that ``client`` speaks to (see the module
    docstring); ``MCPLoadError`` for a listing of more than 100 pages."""
    tools: list[Tool] = []
    cursor: str | None = None
    followed: set[str] = set()
    for _ in range(_MAX_LIST_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return _callable(label, _first_of_each_name(label, tools))
        if cursor in followed:
            logger.warning(
                "MCP server %r hands back a tools/list cursor it gave before (%r); "
                "the listing ends there", label, cursor[:40],
            )
            return _callable(label, _first_of_each_name(label, tools))
        followed.add(cursor)
    raise MCPLoadError(f"MCP server {label!r} lists tools in more than 100 pages")


def _first_of_each_name(label: str, tools: list[Tool]) -> list[Tool]:
    """The listing with one tool per name, the first (see the module docstring)."""
    kept: dict[str, Tool] = {}
    for tool in tools:
        if tool.name in kept:
            if tool == kept[tool.name]:
                continue  # the same again (a page listed twice): nothing to choose
            logger.warning(
                "MCP server %r lists the tool %r twice; the first is used", label, tool.name
            )
        else:
            kept[tool.name] = tool
    return list(kept.values())


def _callable(label: str, tools: list[Tool]) -> list[Tool]:
    """``tools`` without those the server runs only as tasks (see the module docstring)."""
    kept = []
    for tool in tools:
        if tool.execution is not None and tool.execution.task_support == "required":
            logger.warning(
                "MCP server %r: tool %r left out: it runs only as a task, which "
                "streamtools does not call", label, tool.name,
            )
        else:
            kept.append(tool)
    return kept
