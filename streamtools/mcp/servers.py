"""Where an MCP server is, how to reach it, and how its failures read.

Theory of operation
-------------------
A server is either a command run as a subprocess and spoken to over its
stdin/stdout (``MCPStdio``) or a streamable HTTP endpoint (``MCPHttp``; one
of the older HTTP+SSE transport is spoken to so when ``connection`` finds it);
``parse_server`` reads the plain strings users write (a URL or a command
line). ``open_client`` builds the SDK's ``Client`` for one session with a
server: not yet entered, so that the caller decides in which task and under
which deadline the process starts or the HTTP session opens. Each restart
of a server opens a new client here. What the server sends passes a screen
first (``streamtools.mcp.screen``): a malformed answer fails its request at
once, and a tool with an invalid definition is left out of the listing
instead of failing the whole server.

The SDK reports failures wrapped in exception groups and pydantic errors;
``describe_failure`` and ``offending_input`` turn them into the one line that
our ``MCPLoadError`` and ``MCPToolError`` messages quote. Over HTTP it reports
every error status but 404 as "Server returned an error response", so a 401
(a token missing or refused) read like a crashed server: ``HTTPAnswers``
keeps the last error answer (status and the start of its body) for the
message.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.session import ElicitationFnT, MessageHandlerFnT
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation

from streamtools import __version__
from streamtools.errors import StreamtoolsError
from streamtools.mcp.screen import screened
from streamtools.mcp.server_logs import log_callback, wanted_level

__all__ = [
    "HTTPAnswers",
    "MCPHttp",
    "MCPLoadError",
    "MCPStdio",
    "MCPToolError",
    "ServerLike",
    "describe_failure",
    "offending_input",
    "open_client",
    "parse_server",
    "unwrap_group",
]


class MCPLoadError(StreamtoolsError):
    """An MCP server could not be started, connected to, or listed.

    The message says why. ``detail``: the exception underneath (the MCP SDK's),
    for debugging; it is not chained as ``__cause__``, which made an uncaught
    one print the SDK's whole ExceptionGroup (logged at debug level instead)."""

    detail: BaseException | None = None


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
    is a command line, split as a POSIX shell would (no shell runs it). A command
    line a shell could not split either (an unclosed quote) is an ``MCPLoadError``,
    like an empty one, so that ``streamtools chat --mcp`` reports it as such."""
    if isinstance(server, MCPStdio | MCPHttp):
        return server
    if server.startswith(("http://", "https://")):
        return MCPHttp(server, namespace=namespace)
    try:
        argv = shlex.split(server)
    except ValueError as exc:  # shlex's words: "No closing quotation", "No escaped character"
        raise MCPLoadError(f"cannot read the MCP server command {server!r}: {exc}") from None
    if not argv:
        raise MCPLoadError("empty MCP server command")
    return MCPStdio(argv[0], tuple(argv[1:]), namespace=namespace)


class HTTPAnswers:
    """An httpx response hook that keeps the last error answer of a session, in
    words: ``HTTP 401 Unauthorized: {"error": …}`` (its body cut short)."""

    def __init__(self) -> None:
        self.last_error: str | None = None
        self.last_status: int | None = None
        self.errors = 0  # how many so far: a call compares before and after
        self.on_error: Callable[[], None] | None = None  # told of each, once recorded

    async def __call__(self, response: httpx2.Response) -> None:
        # POSTs only: the messages; a GET (the listen stream) and a DELETE (the
        # session's end) may get 405 from a server that offers neither, as allowed
        if response.status_code < 400 or response.request.method != "POST":
            return
        try:  # read once here; the SDK's own read gets the same bytes
            body = (await response.aread()).decode("utf-8", "replace")
        except httpx2.HTTPError:
            body = ""
        said = " ".join(body.split())
        said = said if len(said) <= 300 else said[:300] + "…"
        status = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
        self.last_error = f"{status}: {said}" if said else status
        self.last_status = response.status_code
        self.errors += 1
        if self.on_error is not None:
            self.on_error()


def open_client(
    server: MCPStdio | MCPHttp,
    message_handler: MessageHandlerFnT,
    *,
    legacy_sse: bool = False,
    elicitation: ElicitationFnT | None = None,
    form_only: bool = False,
) -> tuple[Client, httpx2.AsyncClient | None, HTTPAnswers | None]:
    """A client for one session with ``server`` (enter it to connect), the HTTP
    client to close after it, if one was made, and what its error answers said.
    ``legacy_sse``: speak to an HTTP server over the older HTTP+SSE transport
    (protocol 2024-11-05: a GET opens an event stream that names where to POST).
    ``elicitation`` answers the server's questions to the user; without it the
    capability is not declared and a question is declined (``streamtools.mcp.elicit``);
    ``form_only``: it is declared in its 2025-06-18 shape, form questions only."""
    info = Implementation(name="streamtools", version=__version__)
    client: Client | None = None

    def version() -> str | None:  # read once the handshake has set it
        return client.session.protocol_version if client is not None else None

    http: httpx2.AsyncClient | None = None
    answers: HTTPAnswers | None = None
    transport: Any
    if isinstance(server, MCPHttp) and legacy_sse:
        # hear error answers here too: a refused POST ends the SDK's writer for good
        heard = answers = HTTPAnswers()

        def hearing(
            headers: dict[str, str] | None = None,
            timeout: httpx2.Timeout | None = None,
            auth: httpx2.Auth | None = None,
        ) -> httpx2.AsyncClient:
            # the SDK's own factory's client (the timeouts it passes), and our hook
            return httpx2.AsyncClient(
                headers=headers, timeout=timeout, auth=auth, event_hooks={"response": [heard]}
            )

        transport = sse_client(
            server.url, headers=dict(server.headers), httpx_client_factory=hearing
        )
    elif isinstance(server, MCPHttp):
        # Our own httpx2 client to pass headers and hear error answers; the timeouts
        # follow the SDK's advice (a long read: the server may hold a stream open).
        answers = HTTPAnswers()
        http = httpx2.AsyncClient(
            headers=dict(server.headers),
            timeout=httpx2.Timeout(30.0, read=300.0),
            event_hooks={"response": [answers]},
        )
        transport = streamable_http_client(server.url, http_client=http)
    else:
        params = StdioServerParameters(
            command=server.command,
            args=list(server.args),
            env=dict(server.env) if server.env is not None else None,
            cwd=server.cwd,
        )
        transport = stdio_client(params, errlog=server.errlog or sys.stderr)
    client = Client(
        screened(
            transport, server.label, version, decline_questions=elicitation is None,
            form_only=form_only,
        ),
        client_info=info,
        message_handler=message_handler,
        elicitation_callback=elicitation,
        logging_callback=log_callback(server.label),  # the server's log: server_logs
        log_level=wanted_level(),  # what a 2026-07-28 server sends only when asked
    )
    return client, http, answers


def unwrap_group(exc: BaseException) -> BaseException:
    # The SDK's task groups wrap a single failure in exception groups, sometimes twice.
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def describe_failure(exc: BaseException) -> str:
    """One line for an error that may arrive wrapped in exception groups."""
    exc = unwrap_group(exc)
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def offending_input(exc: Exception) -> str:
    # A pydantic ValidationError knows the line it could not parse: show that, short.
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
        except Exception:  # not pydantic's errors(): fall back to the message
            first = None
        if isinstance(first, dict) and "input" in first:
            return repr(first["input"])[:120]
    return describe_failure(exc).splitlines()[0][:120]
