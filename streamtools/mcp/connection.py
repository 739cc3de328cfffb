"""One MCP server over its whole life: load, follow its tool list, call, restart.

Theory of operation
-------------------
An ``MCPConnection`` is driven by ``run``, in a task of its own (``mcp_tools``
starts one per server). The SDK's ``Client`` enters task groups of its own; a
dedicated task keeps their cancel scopes nested in order whatever the caller
does, lets a deadline cover a whole handshake, and keeps callers' code outside
the SDK's task groups, so that a transport failing cannot cancel a caller.

``run`` holds one *session* at a time (a process spoken to over stdio, or a
streamable HTTP session). A session is: connect, list the tools, report ready,
then wait until it ends, meanwhile re-listing the tools whenever the server
says they changed. Only the first load may raise (``MCPLoadError``, within
``load_timeout``); after it, ``run`` never raises: a failure is recorded in
``failure`` and turns into tool errors or a restart.

Tool-list changes reach us as ``notifications/tools/list_changed``: on a
2026-07-28 connection only while a ``subscriptions/listen`` stream is open
(we open one when the server offers it), on older ones unasked. Every such
notification passes through the client's message handler, which only marks
the list stale; the watching task re-lists and hands the new list to
``on_tools``. Notifications coalesce: ten changes may cost one listing.

An HTTP server that refuses the first request with 404 or 405 is tried again
over the older HTTP+SSE transport (protocol 2024-11-05, a GET that opens an
event stream naming where to POST), as the spec tells a client to, since
many servers still offer only that (``…/sse``): it failed with "405 Method
Not Allowed", which did not say what was wrong. It is then spoken to so for
the rest of the block; if it fails that way too, the load error says both.
That transport's writer stops for good at the first POST answered with an
error status (404 "Could not find session" from a server restarted behind a
proxy that kept the event stream, or from another worker), and the request
it carried was never answered: a call waited its whole ``call_timeout`` (for
ever without one), a handshake its ``load_timeout``. Such an answer now ends
the session at once (``_refused``): the call fails saying what the server
answered, and the next one opens a new session; for a 404, which says the
server no longer knows the session, the call is made again in a new one, as
for streamable HTTP (below).

A session ends when ``close()`` is called, when a call finds the connection
closed (a crash), or when the listen stream is lost and cannot be reopened
(the server went away while idle). It is not restarted then: a call made while
the session is down asks ``run`` for a restart, at most ``max_restarts`` times
in all, and waits for it. The call that met the crash stays a tool error,
never silently retried, since tools may have side effects. When the restarts
are used up, calls are tool errors that say the server is gone.

A streamable HTTP server that answers a call with 404 no longer knows the
session (it expired it, or restarted): the spec says to start a new one, and
the server never ran the call, so the call opens a new session (a *renewal*:
the server is up, so it is not counted among the restarts) and runs once more
in it. It failed instead, telling the model a tool had failed that was never
tried, and a server expiring idle sessions was "gone" after ``max_restarts``.

A call asks the server for progress (a ``progressToken``), and
``call_timeout`` bounds how long the server may say nothing on it: each
progress notification starts it again. A long tool (a build, a crawl) that
says it is working is not cut off at ``call_timeout``, as it was when that was
a hard deadline, while it went on; as the spec asks, a limit in all stays,
``_PROGRESS_CAP`` (10) times ``call_timeout``. A call that runs out of time is
cancelled, which the SDK tells the server (``notifications/cancelled``).
Run by an agent, the call is also under the agent's ``tool_timeout``; each
progress notification goes on to it (``streamtools.runtime.progress``) and
starts it again too, with the same limit in all, so a call that reports
progress is no longer cut at the agent's 30 s, while a silent one is cut at
the shorter of the two timeouts (and cancelled so). What a notification says
(``progress``, ``total``, ``message``) is reported to the agent's
``call_progress()`` too, which shows it (a ``ToolProgress`` event).

Failures at a call (``MCPToolError``, which the runtime reports to the model
as a tool error): ``isError`` results (with the server's own text), a
connection closed mid-call, no answer within ``call_timeout``, a JSON-RPC
error, a tool the server no longer offers, a server that cannot be restarted.

Not a failure: a result that does not match the tool's ``outputSchema`` (many
servers declare one and answer with text only). The SDK's client raised for
it, so the model was told that a tool failed which had run, with the answer
thrown away, and retried it (side effects twice). The session's
``validate_tool_result`` is wrapped (``results.lenient_output_schemas``) to log
the mismatch once per tool instead; the result's content reaches the model.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import anyio.lowlevel
import httpx2
from anyio.abc import TaskStatus
from mcp import Client, MCPError
from mcp.client.session import IncomingMessage
from mcp.client.subscriptions import SubscriptionLost
from mcp.types import (
    CONNECTION_CLOSED,
    INVALID_REQUEST,
    REQUEST_TIMEOUT,
    CallToolResult,
    Tool,
    ToolListChangedNotification,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from streamtools.errors import UsageError
from streamtools.mcp.elicit import (
    Offer,
    OfferRefused,
    OnElicit,
    PagesFirst,
    elicitation_callback,
    offering_less,
    opening_pages,
    pages_to_open,
    refused_offer,
)
from streamtools.mcp.listing import list_tools
from streamtools.mcp.results import lenient_output_schemas, result_text
from streamtools.mcp.servers import (
    HTTPAnswers,
    MCPHttp,
    MCPLoadError,
    MCPStdio,
    MCPToolError,
    ServerLike,
    describe_failure,
    offending_input,
    open_client,
    parse_server,
    unwrap_group,
)
from streamtools.runtime.progress import call_clock, call_progress

__all__ = ["MCPConnection"]

logger = logging.getLogger("streamtools.mcp")

# Bounds a listen stream that the server keeps acknowledging and dropping.
_MAX_RELISTENS = 5
# A call that reports progress may take this many times ``call_timeout`` in all.
_PROGRESS_CAP = 10


def _announces_changes(client: Client) -> bool:
    """Whether the server must be asked, on a listen stream, to say when its tools change
    (older protocol versions send the notification unasked)."""
    capabilities = client.server_capabilities
    tools = capabilities.tools if capabilities is not None else None
    modern = client.session.protocol_version in MODERN_PROTOCOL_VERSIONS
    return modern and tools is not None and bool(tools.list_changed)


def _session_unknown(server: MCPStdio | MCPHttp, exc: MCPError) -> bool:
    """Whether an HTTP server refused a request because it no longer knows the session
    (it restarted, or expired it): a 404, which the SDK turns into an invalid-request
    error, with the server's message ("Session not found") or its own ("Session
    terminated"). The status itself does not reach us, hence the message."""
    return (
        isinstance(server, MCPHttp)
        and exc.code == INVALID_REQUEST
        and "session" in exc.message.lower()
    )


def _unchained(error: MCPLoadError, underneath: BaseException) -> MCPLoadError:
    """``error``, its message whole, with the SDK's exception kept as its ``detail``
    and logged at debug level, not chained: as a cause, an uncaught one printed
    the SDK's nested ExceptionGroup (a stdio server that could not import its
    module), pages of traceback under a message that already says what failed."""
    error.detail = underneath
    logger.debug("%s", error, exc_info=underneath)
    return error


class _NotStreamable(MCPLoadError):
    """An HTTP server refused the first POST with 404 or 405: per the spec, a client
    then tries it as a server of the older HTTP+SSE transport (``run``)."""

    def __init__(self, failed: MCPLoadError) -> None:
        super().__init__(str(failed))
        self.failed = failed


class _SessionEnded(Exception):
    """The server answered a call with 404: it no longer knows the session."""


class _OutOfTime(Exception):
    """A call ran out of time (``MCPConnection._call_tool``); the message says how."""


class _Restart:
    """One restart asked for by calls; every call that waits on it shares its outcome."""

    def __init__(self, *, renewal: bool = False) -> None:
        self.done = anyio.Event()
        self.error: str | None = None
        self.renewal = renewal  # a new HTTP session for a server that is up: not counted


class MCPConnection:
    """One MCP server for the length of an ``mcp_tools`` block (sessions come and go).

    ``tools`` is the server's current tool list; ``on_tools`` is called (from the
    connection's task) after every later listing: a change or a restart.
    ``call`` forwards a call and returns its text or raises ``MCPToolError``.
    ``failure`` says why the last session ended early (None while one is up or
    after a normal close); ``restarts`` counts the restarts tried.
    """

    def __init__(
        self,
        server: ServerLike,
        *,
        load_timeout: float = 60.0,
        call_timeout: float | None = 60.0,
        max_restarts: int = 3,
        on_tools: Callable[[MCPConnection], None] | None = None,
        on_elicit: OnElicit | None = None,
    ) -> None:
        self.server = parse_server(server)
        self.on_elicit = on_elicit
        self._offer: Offer = "full"  # of answering the server's questions (elicit.Offer)
        self._working: set[Callable[[], None]] = set()  # the calls in flight: "still at work"
        self.load_timeout = load_timeout
        self.call_timeout = call_timeout
        self.max_restarts = max_restarts
        self.on_tools = on_tools
        self.tools: list[Tool] = []
        self.server_name: str | None = None
        self.failure: str | None = None
        self.restarts = 0
        self._client: Client | None = None
        self._answers: HTTPAnswers | None = None  # the live HTTP session's error answers
        self._closing = anyio.Event()
        self._session_end = anyio.Event()
        self._stale = anyio.Event()  # the server said its tools changed
        self._restart: _Restart | None = None
        self._wake = anyio.Event()  # a restart was asked for, or close()
        self._garbage: str | None = None  # the first line the server sent that was not JSON-RPC
        self._legacy_sse = False  # an HTTP server of the older HTTP+SSE transport

    @property
    def label(self) -> str:
        return self.server.label

    async def _on_message(self, message: IncomingMessage) -> None:
        # Runs inside the SDK's reader: only take note here, never call the server.
        if isinstance(message, ToolListChangedNotification):
            self._stale.set()
        elif isinstance(message, httpx2.TransportError):
            # the connection broke (the older SSE transport's reader hands that in
            # here too): nothing the server sent; the calls under way say it
            pass
        elif isinstance(message, Exception) and self._garbage is None:
            # Undecodable lines come here and are otherwise dropped; remember one
            # so that a load timeout can say what the server did send. Once loaded,
            # say it once per session, in one line naming the server (a stdio
            # server printing debug output to stdout, an HTTP server's HTML page).
            self._garbage = offending_input(message)
            if self._client is not None:
                logger.warning(
                    "MCP server %r sent something that is not MCP JSON-RPC (ignored): %s",
                    self.label, self._garbage,
                )
        await anyio.lowlevel.checkpoint()

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Load, report ``started``, then serve sessions and restarts until ``close()``.
        Raises ``MCPLoadError`` before ``started`` only."""
        try:
            await self._first_session(task_status.started)
        except _NotStreamable as refused:
            # the spec's way to find a server of the older HTTP+SSE transport
            self._legacy_sse = True
            try:
                await self._first_session(task_status.started)
            except MCPLoadError as exc:
                why = str(exc).splitlines()[0]
                why = why.removeprefix(f"MCP server {self.label!r} could not be loaded: ")
                raise MCPLoadError(
                    f"{refused.failed}; nor does it answer as a server of the older HTTP+SSE "
                    f"transport: {why}"
                ) from refused.failed
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            request = self._restart
            if self._closing.is_set():
                if request is not None:
                    request.error = "the mcp_tools block has ended"
                    request.done.set()
                return
            if request is None:
                continue
            if request.renewal:
                logger.info("MCP server %r %s; opening a new one", self.label, self.failure)
            else:
                self.restarts += 1
                logger.warning(
                    "MCP server %r stopped (%s); restart %d of %d",
                    self.label, self.failure, self.restarts, self.max_restarts,
                )

            def restarted(request: _Restart = request) -> None:
                self._restart = None  # calls from now on see this session, or ask anew
                request.done.set()

            try:
                await self._session(restarted, relisted=True)
            except MCPLoadError as exc:
                request.error = str(exc)
            finally:
                if self._restart is request:
                    self._restart = None
                request.done.set()

    async def _first_session(self, ready: Callable[[], None]) -> None:
        """The first session; a handshake refused while the server's questions were
        offered is tried again offering less (``streamtools.mcp.elicit``)."""
        while True:
            try:
                return await self._session(ready, relisted=False)
            except OfferRefused as refused:
                self._offer = offering_less(self.label, self._offer, refused.refused)

    async def _session(self, ready: Callable[[], None], *, relisted: bool) -> None:
        """One session: connect, list, call ``ready``, hold it until it ends;
        ``relisted``: tell ``on_tools`` of the listing. Raises ``MCPLoadError``
        before ``ready`` only."""
        loaded = shaken = False
        asking = None
        http_client: httpx2.AsyncClient | None = None
        answers: HTTPAnswers | None = None
        self._session_end = anyio.Event()
        self._garbage = None
        try:
            # The deadline covers spawn + handshake + listing; once loaded it is lifted,
            # since a cancel scope cannot be left while the SDK's task groups stay open.
            deadline = anyio.current_time() + self.load_timeout
            with anyio.CancelScope(deadline=deadline) as load_scope:
                if self.on_elicit is not None and self._offer != "none":
                    asking = elicitation_callback(self.on_elicit, self.label, self._keep_going)
                client, http_client, answers = open_client(
                    self.server, self._on_message, legacy_sse=self._legacy_sse,
                    elicitation=asking, form_only=self._offer == "form",
                )
                self._answers = answers
                if self._legacy_sse and answers is not None:
                    answers.on_error = load_scope.cancel  # else the handshake waits it out
                async with client, anyio.create_task_group() as watching:
                    shaken = True  # the handshake is done
                    lenient_output_schemas(client.session, self.label)
                    self._stale = anyio.Event()
                    if _announces_changes(client):
                        # Listen before listing, so that no change can fall in between.
                        await watching.start(self._listen, client)
                    self.tools = await list_tools(client, self.label)
                    info = client.server_info
                    self.server_name = info.name if info is not None else None
                    load_scope.deadline = math.inf
                    self._client = client
                    self.failure = None
                    loaded = True
                    if self._legacy_sse and answers is not None:
                        answers.on_error = self._refused
                    ready()
                    if relisted:
                        self._announce()
                    watching.start_soon(self._relist_when_stale, client)
                    if not self._closing.is_set():
                        await self._session_end.wait()
                    watching.cancel_scope.cancel()
            if load_scope.cancelled_caught and not loaded:
                if answers is not None and answers.errors and self._legacy_sse:
                    raise MCPLoadError(
                        f"MCP server {self.label!r} could not be loaded: it refused the "
                        f"handshake, answering {answers.last_error}"
                    )
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
            if not loaded:
                inner = unwrap_group(exc)
                if isinstance(inner, MCPError) and inner.code == CONNECTION_CLOSED:
                    sent = f"; it wrote {self._garbage}, not JSON-RPC" if self._garbage else ""
                    closed = MCPLoadError(
                        f"MCP server {self.label!r} closed the connection before the "
                        f"handshake completed (did the command exit? see its stderr){sent}"
                    )
                    raise _unchained(closed, exc) from None
                why = describe_failure(exc)
                if answers is not None and answers.last_error is not None:
                    why += f"; the server answered {answers.last_error}"
                failed = MCPLoadError(f"MCP server {self.label!r} could not be loaded: {why}")
                if answers is not None and answers.last_status in (404, 405):
                    raise _NotStreamable(failed) from exc
                if asking is not None and not shaken and refused_offer(exc):
                    raise OfferRefused(failed, exc) from exc
                raise _unchained(failed, exc) from None
            # After loading, a failing transport must not cancel the caller: record it;
            # the next call asks for a restart.
            self.failure = self.failure or describe_failure(exc)
        finally:
            self._client = None
            self._answers = None
            if http_client is not None:
                with anyio.CancelScope(shield=True):
                    await http_client.aclose()

    async def _listen(
        self, client: Client, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Keep a listen stream open (on 2026-07-28 connections the server sends its
        list-changed notifications there only); ``started`` once it is acknowledged."""
        started = False
        for _ in range(_MAX_RELISTENS):
            try:
                with anyio.CancelScope(deadline=anyio.current_time() + self.load_timeout) as ack:
                    async with client.listen(tools_list_changed=True) as subscription:
                        ack.deadline = math.inf
                        if started:  # nothing is replayed: what changed meanwhile is unknown
                            self._stale.set()
                        else:
                            started = True
                            task_status.started()
                        async for _event in subscription:
                            self._stale.set()  # the message handler sees it too; sets coalesce
                if ack.cancelled_caught:
                    logger.warning("MCP server %r did not acknowledge a listen request", self.label)
                break  # or closed gracefully by the server: no more change notifications
            except SubscriptionLost:
                continue  # dropped: listen again; if the server is gone, that fails
            except Exception as exc:
                if started:
                    self._session_broke(f"its connection dropped ({describe_failure(exc)})")
                else:
                    why = describe_failure(exc)
                    logger.warning("MCP server %r: cannot follow its tools: %s", self.label, why)
                break
        else:
            logger.warning("MCP server %r keeps dropping its listen stream; gave up", self.label)
        if not started:
            task_status.started()

    async def _relist_when_stale(self, client: Client) -> None:
        while True:
            await self._stale.wait()
            self._stale = anyio.Event()
            try:
                with anyio.fail_after(self.load_timeout):
                    tools = await list_tools(client, self.label)
            except Exception as exc:  # a broken listing must not end the session
                why = describe_failure(exc)
                logger.warning("MCP server %r: re-listing its tools failed: %s", self.label, why)
                continue
            self.tools = tools
            self._announce()

    def _announce(self) -> None:
        if self.on_tools is None:
            return
        try:
            self.on_tools(self)
        except Exception:  # the registry's side must not end the session
            logger.exception("MCP server %r: updating the registry failed", self.label)

    def _refused(self) -> None:
        """An older HTTP+SSE server answered a POST with an error status (it no
        longer knows the session: restarted behind a proxy that kept the event
        stream, another worker, expired): the SDK's writer stops at that and the
        request it carried waited for its whole timeout, or for ever."""
        said = self._answers.last_error if self._answers is not None else None
        self._session_broke(f"refused a message ({said})")

    def _session_broke(self, why: str) -> None:
        self.failure = why
        self._client = None
        self._session_end.set()

    def close(self) -> None:
        """Ask the connection to end; ``run`` returns once the server is stopped."""
        self._closing.set()
        self._session_end.set()
        self._wake.set()

    async def _connected(self, *, renewal: bool = False) -> Client:
        """The live session's client, restarting the server first if it stopped;
        ``renewal``: the server is up and ended the session, which a new one mends
        (not counted among the restarts)."""
        if self._closing.is_set():
            raise MCPToolError(f"MCP server {self.label!r} is not connected (its block has ended)")
        if self._client is not None:
            return self._client
        if self._restart is None:
            if self.restarts >= self.max_restarts and not renewal:
                raise MCPToolError(
                    f"MCP server {self.label!r} is gone: it stopped ({self.failure}) and "
                    f"was restarted {self.restarts} times already, the most allowed"
                )
            self._restart = _Restart(renewal=renewal)
            self._wake.set()
        request = self._restart
        await request.done.wait()
        if request.error is not None:
            raise MCPToolError(f"restarting a stopped MCP server failed: {request.error}")
        if self._client is None:
            raise MCPToolError(f"MCP server {self.label!r} stopped again right after a restart")
        return self._client

    def _keep_going(self) -> None:
        """The user is answering a question of the server's: its calls are at work."""
        for working in list(self._working):
            working()

    async def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        """Call the server's tool ``name`` and return the result text; a call the
        server refused until the user opens a page: ``streamtools.mcp.elicit``."""
        return await opening_pages(lambda: self._renewing(name, arguments), self.on_elicit, name)

    async def _renewing(self, name: str, arguments: Mapping[str, Any]) -> str:
        try:
            return await self._call(name, arguments)
        except _SessionEnded:
            # The server no longer knows the session (404), so the call did not run:
            # a new session, as the spec says, and the call once more in it.
            return await self._call(name, arguments, renewed=True)

    async def _call(self, name: str, arguments: Mapping[str, Any], *, renewed: bool = False) -> str:
        client = await self._connected(renewal=renewed)
        if all(offered.name != name for offered in self.tools):
            raise MCPToolError(f"MCP server {self.label!r} no longer offers the tool {name!r}")
        answers = self._answers
        errors = answers.errors if answers is not None else 0
        try:
            result = await self._call_tool(client, name, arguments)
        except _OutOfTime as exc:
            raise MCPToolError(str(exc)) from None
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                if self._client is client:
                    self._session_broke(f"it closed the connection during a call to {name!r}")
                if self._legacy_sse and answers is not None and answers.errors > errors:
                    if answers.last_status == 404 and not renewed:
                        raise _SessionEnded from exc  # "Could not find session": as below
                    raise MCPToolError(
                        f"MCP server {self.label!r} refused the call to {name!r}: it answered "
                        f"{answers.last_error} (the next call opens a new session)"
                    ) from exc
                raise MCPToolError(
                    f"MCP server {self.label!r} closed the connection during the call "
                    f"to {name!r} (it may have crashed; the next call restarts it)"
                ) from exc
            if _session_unknown(self.server, exc):
                if self._client is client:
                    self._session_broke("ended the HTTP session")
                if not renewed:
                    raise _SessionEnded from exc
                raise MCPToolError(
                    f"MCP server {self.label!r} ended the HTTP session, and the new one too; "
                    f"the call to {name!r} did not run (the next call opens a new session)"
                ) from exc
            pages = pages_to_open(self.label, exc)
            if pages:
                raise PagesFirst(pages) from exc
            if exc.code == REQUEST_TIMEOUT:
                raise MCPToolError(
                    f"MCP server {self.label!r} did not answer the call to {name!r} "
                    f"within {self.call_timeout}s"
                ) from exc
            why = str(exc)
            if answers is not None and answers.errors > errors:  # the SDK hides the status
                why += f"; the server answered {answers.last_error}"
            raise MCPToolError(f"MCP tool {name!r} failed: {why}") from exc
        except Exception as exc:  # a malformed answer, a transport error
            raise MCPToolError(f"MCP tool {name!r} failed: {describe_failure(exc)}") from exc
        text = result_text(result)
        if result.is_error:
            raise MCPToolError(text or f"MCP tool {name!r} reported an error")
        return text

    async def _call_tool(
        self, client: Client, name: str, arguments: Mapping[str, Any]
    ) -> CallToolResult:
        """The call's result; ``_OutOfTime`` if it ran out of time. ``call_timeout``
        bounds how long the server may say nothing on the call: each progress
        notification starts it again, up to ``_PROGRESS_CAP`` times it in all
        (see the module docstring). Each goes on to the clock of the agent's
        call (``streamtools.runtime.progress``), whose ``tool_timeout`` it
        starts again likewise, up to the same limit in all."""
        timeout = self.call_timeout
        agents = call_clock()  # None outside the agent's executor
        shown = call_progress()  # likewise: where the agent shows the call's progress
        heard = False
        start = anyio.current_time()
        latest = None if timeout is None else start + timeout * _PROGRESS_CAP
        with anyio.CancelScope(deadline=math.inf if timeout is None else start + timeout) as quiet:

            def at_work() -> None:
                nonlocal heard
                heard = True
                if timeout is not None and latest is not None:
                    quiet.deadline = min(anyio.current_time() + timeout, latest)
                if agents is not None:
                    agents.progressed(latest)

            async def progressed(progress: float, total: float | None, message: str | None) -> None:
                at_work()
                if shown is not None:
                    try:
                        shown.report(progress, total, message)
                    except UsageError:  # NaN from a server: still at work, nothing to show
                        pass

            # cancelled here or by the agent's timeout, the SDK tells the server
            # (notifications/cancelled)
            self._working.add(at_work)  # and while the user answers a question (elicit)
            try:
                return await client.call_tool(name, dict(arguments), progress_callback=progressed)
            finally:
                self._working.discard(at_work)
        said = f"MCP server {self.label!r}"
        if not heard:
            raise _OutOfTime(f"{said} did not answer the call to {name!r} within {timeout}s")
        if latest is not None and quiet.deadline >= latest:
            raise _OutOfTime(
                f"{said} did not finish the call to {name!r} within {latest - start:g}s, the "
                "most a call may take while it reports progress (ten times call_timeout)"
            )
        raise _OutOfTime(
            f"{said} reported progress on the call to {name!r}, then nothing for {timeout}s"
        )
