"""The MCP options of ``streamtools chat`` and ``streamtools ui``, in one place.

Theory of operation
-------------------
``add_mcp_options(parser)`` adds ``--mcp COMMAND`` and ``--mcp-url URL`` (both
repeatable; ``NAME=COMMAND`` and ``NAME=URL`` put a server's tools under
``NAME.``, its namespace, for two servers with the same tool names; a
``--mcp-url`` that is no http(s) URL with a host is a usage error),
``--mcp-header 'NAME: VALUE'`` (repeatable, sent to each HTTP server, for a
token) and ``--mcp-timeout SECONDS`` (default 60, as ``mcp_tools``: a first
``npx -y`` or ``uvx`` run downloads the server). A call is bounded by the
agent's ``--tool-timeout`` alone: silence for it cuts the call, progress the
server reports starts it again, up to ten times it in all. Both commands take them with
the same meaning, because both parse them here and load them with
``mcp_session``.

``mcp_session(args, registry)`` is an async context manager: with no server
named it yields ``registry`` as it is and imports nothing; else it loads the
servers' tools into ``registry`` (``mcp_tools``) and keeps their sessions
open until the block ends, when they are closed (the subprocesses stopped,
the HTTP sessions ended). A server that cannot be loaded raises
``MCPNotLoaded``, whose message is the one line the command prints.

In ``chat`` at a terminal, a server that asks the user something mid-call
(MCP elicitation: a form to fill in, a page to open) is asked there
(``streamtools.mcp.ask_in_terminal``); elsewhere (``ui``, a pipe) it is
declined, and the tool goes on.

A command runs with the user's whole environment (the SDK passes a stdio
server a few variables only), as it would typed in the shell: an exported
token reaches it. The SDK's log records print as one line each, without a
traceback; a line a stdio server writes to stdout that is not JSON-RPC is
reported once, by ``streamtools.mcp``, and skipped.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from streamtools.cli import http_url, positive_number
from streamtools.errors import UsageError
from streamtools.tools import ToolRegistry

__all__ = ["MCPNotLoaded", "add_mcp_options", "mcp_session", "wants_mcp"]


def add_mcp_options(parser: argparse._ActionsContainer) -> None:
    """Add ``--mcp``, ``--mcp-url``, ``--mcp-header`` and ``--mcp-timeout`` to
    ``parser`` (a parser or an argument group of one)."""
    parser.add_argument(
        "--mcp",
        action="append",
        default=[],
        metavar="COMMAND",
        help="start an MCP server (a command line) and give the model its tools; "
        "NAME=COMMAND puts them under NAME.; repeatable",
    )
    parser.add_argument(
        "--mcp-url",
        action="append",
        default=[],
        type=_url,
        metavar="URL",
        help="give the model the tools of a streamable HTTP MCP server; NAME=URL puts "
        "them under NAME.; repeatable",
    )
    parser.add_argument(
        "--mcp-header",
        action="append",
        default=[],
        type=_header,
        metavar="'NAME: VALUE'",
        help="an HTTP header for the HTTP MCP servers (--mcp-url, or a URL given to --mcp), "
        "such as 'Authorization: Bearer …'; repeatable",
    )
    parser.add_argument(
        "--mcp-timeout",
        type=positive_number,
        default=None,
        metavar="SECONDS",
        help="how long an MCP server may take to start and list its tools (default 60: "
        "a first npx -y or uvx run downloads the server)",
    )


def wants_mcp(args: argparse.Namespace) -> bool:
    """Whether the command line names any MCP server. A ``UsageError`` for
    ``--mcp-header`` with no HTTP server to send it to, or ``--mcp-timeout``
    with no server at all: each was ignored without a word (a token meant for
    a server the user thought was remote never sent)."""
    http = args.mcp_url or any(
        _named(given)[1].startswith(("http://", "https://")) for given in args.mcp
    )
    if args.mcp_header and not http:
        raise UsageError(
            "--mcp-header is for HTTP MCP servers (--mcp-url URL, or a URL given to --mcp)"
        )
    if args.mcp_timeout is not None and not (args.mcp or args.mcp_url):
        raise UsageError("--mcp-timeout is for MCP servers (--mcp, --mcp-url)")
    return bool(args.mcp or args.mcp_url)


class MCPNotLoaded(Exception):
    """An MCP server the command line names could not be loaded (``MCPLoadError``):
    the message is the line the command prints (exit status 1). A class of its
    own so that a command catches it without importing the MCP SDK."""


@asynccontextmanager
async def mcp_session(
    args: argparse.Namespace, registry: ToolRegistry, command: str
) -> AsyncIterator[ToolRegistry]:
    """``registry`` with the tools of the MCP servers ``args`` names, for the block.
    ``MCPNotLoaded`` for a server that cannot be loaded, said as ``streamtools COMMAND``."""
    if not wants_mcp(args):
        yield registry
        return
    from streamtools.mcp import MCPLoadError, ask_in_terminal, mcp_tools

    _quiet_sdk_logs()
    timeout = args.mcp_timeout or 60.0
    try:
        servers = _servers(args)  # MCPLoadError for a command line shlex cannot read
        if sys.stderr is not None and sys.stderr.isatty():
            # Someone waits at a terminal: a first npx -y or uvx run downloads its
            # server first, and nothing was said for up to a minute.
            count = f"{len(servers)} MCP server{'s' if len(servers) > 1 else ''}"
            print(
                f"streamtools {command}: starting {count} (up to {timeout:g}s; --mcp-timeout)…",
                file=sys.stderr, flush=True,
            )
        # No call_timeout of their own: the agent's --tool-timeout bounds a call's
        # silence, progress starting it again up to ten times it in all
        # (streamtools.runtime.progress); the MCP client's 60 s, which no flag
        # sets, cut a silent call at 60 s whatever --tool-timeout said.
        # A server's question for the user (elicitation) is asked at the terminal
        # in ``chat`` when there is one; else it is declined (streamtools.mcp.elicit).
        asking = ask_in_terminal if command == "chat" and sys.stdin.isatty() else None
        async with mcp_tools(
            *servers, registry=registry, load_timeout=timeout, call_timeout=None,
            on_elicit=asking,
        ) as tools:
            yield tools
    except MCPLoadError as exc:
        hint = f" (streamtools {command}: --mcp NAME=COMMAND)" if "a namespace" in str(exc) else ""
        if "FileNotFoundError" in str(exc):  # a command not found: was it a variable?
            hint += _env_hint(args)
        raise MCPNotLoaded(f"streamtools {command}: {exc}{hint}") from exc


_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # GITHUB_TOKEN, API_KEY


def _env_hint(args: argparse.Namespace) -> str:
    """A word for ``--mcp "GITHUB_TOKEN=… npx server"``, as a shell line sets a
    variable for a command: here ``NAME=`` is a namespace, so the value was run
    as the command, which failed with a puzzling 'No such file' naming it."""
    for given in args.mcp:
        name, _ = _named(given)
        if name is not None and _ENV_NAME.fullmatch(name):
            return (
                f"; {name}= before a --mcp command names a namespace for its tools, "
                "it does not set a variable: export it instead (the command runs with "
                "your environment)"
            )
    return ""


def _servers(args: argparse.Namespace) -> list[Any]:
    from streamtools.mcp.servers import MCPHttp, MCPStdio, parse_server

    # A command typed here runs with this shell's environment, as it would
    # typed at the prompt: the SDK passes a few variables only (HOME, PATH…),
    # and a server never saw the token the user had exported.
    servers: list[Any] = []
    headers = dict(args.mcp_header)
    for given in args.mcp:
        namespace, command = _named(given)
        server = parse_server(command, namespace=namespace)
        if isinstance(server, MCPStdio):
            server = dataclasses.replace(server, env=dict(os.environ))
        else:  # a URL given to --mcp is served as --mcp-url would
            server = dataclasses.replace(server, headers=headers)
        servers.append(server)
    for given in args.mcp_url:
        namespace, url = _named(given)
        servers.append(MCPHttp(url, headers=headers, namespace=namespace))
    return servers


class _SDKLogFilter(logging.Filter):
    """For the MCP SDK's loggers in a command: each record one line, with no
    traceback, and none for a line a server wrote that is not JSON-RPC (a stdio
    server printing debug output): ``streamtools.mcp`` already says that, once,
    naming the server. Otherwise every such line prints a pydantic traceback in
    the middle of the conversation."""

    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith("Failed to parse JSONRPC message"):
            return False
        record.exc_info, record.exc_text = None, None
        return True


_FILTER = _SDKLogFilter()


def _quiet_sdk_logs() -> None:
    # mcp.client.sse: the older HTTP+SSE transport (tried for a URL that refuses
    # streamable HTTP), whose reader logs a traceback when its stream drops
    for name in (
        "mcp.client.stdio", "mcp.client.streamable_http", "mcp.client.sse", "mcp.client.session"
    ):
        logging.getLogger(name).addFilter(_FILTER)  # once: adding the same filter is a no-op


_NAMED = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)=(?=\S)")


def _named(text: str) -> tuple[str | None, str]:
    """``NAME=COMMAND`` or ``NAME=URL`` (``--mcp``, ``--mcp-url``): the server's
    tools are then ``NAME.tool``, so that two servers with the same tool names
    can be used together; any other text is the command or URL, with no name."""
    named = _NAMED.match(text)
    if named is None:
        return None, text
    return named[1], text[named.end() :]


def _url(text: str) -> str:
    """An ``argparse`` type: ``URL`` or ``NAME=URL`` (``--mcp-url``), kept as given,
    the URL an http(s) one with a host (``http_url``); ``localhost:8000/mcp`` was
    tried as a server and failed after start-up, in httpx's words."""
    http_url(_named(text)[1])
    return text


_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # a header name (RFC 9110)


def _header(text: str) -> tuple[str, str]:
    """An ``argparse`` type: ``NAME: VALUE``, an HTTP header (``--mcp-header``)."""
    name, colon, value = text.partition(":")
    bad = not colon or not _TOKEN.fullmatch(name) or any(c in value for c in "\r\n\0")
    if bad:
        raise argparse.ArgumentTypeError(f"expected 'NAME: VALUE', got {text!r}")
    return name, value.strip()
