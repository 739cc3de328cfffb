"""MCP in both directions, with the official ``mcp`` SDK (the ``mcp`` extra).

Theory of operation
-------------------
``client``: ``mcp_tools(*servers)`` connects to MCP servers (stdio commands or
streamable HTTP URLs) and puts their tools in a ``ToolRegistry`` for the
duration of an ``async with`` block; calls go to the servers, and the registry
follows each server's tool list. ``connection`` drives one server: its
sessions, its list-changed notifications, its calls and its restarts
(``listing``, its tool listing); ``elicit``, a server's questions to the user
(``on_elicit``).

``server``: ``mcp_server(registry)`` exposes a registry's tools as an MCP
server, served with ``serve_stdio`` or over streamable HTTP (``http_app`` for
any ASGI server, ``serve_http`` with uvicorn), so the same ``@tool`` functions
work from any MCP client.

This package is named like the SDK (``mcp``); every import in it is absolute,
so ``import mcp`` always means the SDK.

Without the SDK, ``import streamtools.mcp`` raises ``ModuleNotFoundError``
(``name`` ``"mcp"``, as the SDK's own import raised it) saying what to install,
as the ``streamtools`` commands do; ``python -m streamtools.mcp`` (which
imports this package before its ``__main__``) says it in one line and exits
with status 2, instead of a traceback.
"""

from __future__ import annotations

import sys

try:
    import mcp  # noqa: F401  (the SDK: see above)
except ModuleNotFoundError as exc:
    if exc.name != "mcp":
        raise
    from streamtools.cli import _install_line

    _missing = (
        "missing optional dependency 'mcp' (the 'mcp' extra); "
        f"install it with: {_install_line('mcp')}"
    )
    if sys.argv[:1] == ["-m"] and "streamtools.mcp" in sys.orig_argv:
        # ``python -m streamtools.mcp``: sys.argv[0] is "-m" while the module is found
        print(f"python -m streamtools.mcp: error: {_missing}", file=sys.stderr)
        raise SystemExit(2) from None
    raise ModuleNotFoundError(f"streamtools.mcp: {_missing}", name="mcp") from exc

from streamtools.mcp.client import mcp_tools
from streamtools.mcp.connection import MCPConnection
from streamtools.mcp.elicit import ElicitAnswer, Elicitation, ask_in_terminal
from streamtools.mcp.results import result_text
from streamtools.mcp.server import http_app, mcp_server, serve_http, serve_stdio
from streamtools.mcp.servers import (
    MCPHttp,
    MCPLoadError,
    MCPStdio,
    MCPToolError,
    parse_server,
)

__all__ = [
    "ElicitAnswer",
    "Elicitation",
    "MCPConnection",
    "MCPHttp",
    "MCPLoadError",
    "MCPStdio",
    "MCPToolError",
    "ask_in_terminal",
    "http_app",
    "mcp_server",
    "mcp_tools",
    "parse_server",
    "result_text",
    "serve_http",
    "serve_stdio",
]
