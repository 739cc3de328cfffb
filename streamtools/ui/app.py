"""Starlette glue: an endpoint that streams an agent to a browser, and an app
that also serves the chat page.

Theory of operation
-------------------
``chat_endpoint(agent)`` is a Starlette endpoint: it reads the POSTed
conversation (``messages.parse_chat_request``; 400 with a JSON error body if
malformed, 413 if too large), then answers with an ``EventStreamResponse``
running ``agent.stream(transcript)``, framed as the AI SDK UI message stream
(``protocol="ai-sdk"``, what ``useChat`` and our page read) or as our own
events (``protocol="events"``).

``EventStreamResponse`` is a small ASGI response rather than Starlette's
``StreamingResponse`` because cancellation must not depend on the server's
ASGI version: it always runs ``sse.pump`` next to a task that waits for
``http.disconnect``, and the first of the two to finish cancels the other. A
client that goes away (closed tab, stop button, aborted fetch) therefore
cancels the pump, which leaves the agent's ``async with`` block, which
cancels the model request and running tools. A failed write is treated as a
disconnect too.

The endpoint also answers ``GET``, the only method of a browser's
``EventSource``: the conversation comes in the query string
(``messages.parse_chat_query``: ``?prompt=…`` or ``?messages=[…]``; 414
past ``max_query`` bytes, a length that proxies in front also accept), and
our events are framed for ``EventSource`` (``sse.EventSourceFramer``: a
failure is ``stream_error``, never ``error``, and ``done`` ends the stream).
A GET carrying ``Last-Event-ID`` is that ``EventSource`` reconnecting after
the stream ended or dropped: it gets 204, which makes it stop, since running
the conversation again would run its tools again.

``create_app(agent)`` serves the page at ``/``, the AI SDK stream at
``POST /api/chat`` (and 204, "nothing to resume", at ``GET
/api/chat/{id}/stream``) and our events at ``GET`` and ``POST /api/events``. With
``cors_origins`` a front end served from those origins (a ``useChat`` app on
its own dev server, ``http://localhost:3000``) may call the endpoints: Starlette's
``CORSMiddleware`` answers the browser's preflight and marks the responses.
Without it, the browser refuses such a page the response, as a server that
names no origin asks; and ``create_app`` refuses (403) a browser's request
from any site not named there before it runs anything (``foreign_site``):
else any page the user opened could run the agent, unseen.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Awaitable, Callable, Sequence
from importlib import resources
from typing import Literal

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from streamtools.browser_guard import LOOPBACK_NAMES, foreign_site, refusal, strange_host
from streamtools.errors import UsageError
from streamtools.transcript import Transcript
from streamtools.ui.aisdk import UI_MESSAGE_STREAM_HEADERS
from streamtools.ui.messages import ChatRequestError, parse_chat_query, parse_chat_request
from streamtools.ui.sse import (
    EVENTS_HEADERS,
    EventsFramer,
    EventSource,
    EventSourceFramer,
    Framer,
    UIMessageFramer,
    pump,
)

__all__ = [
    "LOOPBACK_NAMES",
    "EventStreamResponse",
    "Shutdown",
    "chat_endpoint",
    "chat_page",
    "create_app",
    "foreign_site",
    "no_stream_to_resume",
    "strange_host",
]

Protocol = Literal["ai-sdk", "events"]



class Shutdown:
    """Ends the streams under way when the server shuts down (``close()``).

    A server shutting down gracefully waits for its responses to finish, and an
    agent's answer (a slow model, a long tool, keep-alives) may not finish for
    minutes: Ctrl-C on ``streamtools ui`` would hang, then force the streams off
    with a traceback each. ``close()`` instead stops each stream's agent and ends
    the stream properly (an error chunk that says the server is shutting down,
    ``finish``, ``[DONE]``), so the shutdown completes at once and the page shows
    why the answer stopped. Call it from the event loop (uvicorn: ``Server.shutdown``).
    """

    def __init__(self) -> None:
        self.closed = False
        self._stops: set[anyio.Event] = set()

    def close(self) -> None:
        self.closed = True
        for stop in self._stops:
            stop.set()

    def register(self) -> anyio.Event:
        """An event set at ``close()`` (at once, if already closed); ``release`` it after."""
        stop = anyio.Event()
        if self.closed:
            stop.set()
        self._stops.add(stop)
        return stop

    def release(self, stop: anyio.Event) -> None:
        self._stops.discard(stop)


class EventStreamResponse(Response):
    """Stream ``source.stream(transcript)`` through ``framer``; cancel on disconnect;
    end properly at ``shutdown.close()``."""

    def __init__(
        self,
        source: EventSource,
        transcript: Transcript,
        framer: Framer,
        *,
        headers: dict[str, str],
        keepalive: float = 15.0,
        shutdown: Shutdown | None = None,
    ) -> None:
        super().__init__(status_code=200, headers=headers)
        # Response declares the (empty) body's length; a stream has none.
        self.raw_headers = [(k, v) for k, v in self.raw_headers if k != b"content-length"]
        self.source = source
        self.transcript = transcript
        self.framer = framer
        self.keepalive = keepalive
        self.shutdown = shutdown
        self.disconnected = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async with anyio.create_task_group() as tg:

            async def write(data: bytes) -> None:
                try:
                    await send({"type": "http.response.body", "body": data, "more_body": True})
                except OSError:  # the socket is gone: same as a disconnect
                    self.disconnected = True
                    tg.cancel_scope.cancel()

            async def watch() -> None:
                while True:
                    message: Message = await receive()
                    if message["type"] == "http.disconnect":
                        self.disconnected = True
                        tg.cancel_scope.cancel()
                        return

            await send(
                {
                    "type": "http.response.start",
                    "status": self.status_code,
                    "headers": self.raw_headers,
                }
            )
            tg.start_soon(watch)
            events = self.source.stream(self.transcript)
            stop = self.shutdown.register() if self.shutdown is not None else None
            try:
                await pump(events, self.framer, write, keepalive=self.keepalive, stop=stop)
            finally:
                if stop is not None and self.shutdown is not None:
                    self.shutdown.release(stop)
            tg.cancel_scope.cancel()  # the stream ended: stop watching
        if not self.disconnected:
            await send({"type": "http.response.body", "body": b"", "more_body": False})


def chat_endpoint(
    agent: EventSource,
    *,
    protocol: Protocol = "ai-sdk",
    keepalive: float = 15.0,
    max_body: int = 4 * 1024 * 1024,
    max_query: int = 8 * 1024,
    dynamic_tools: bool = True,
    finish_reason: bool = True,
    shutdown: Shutdown | None = None,
    sites: Sequence[str] | None = None,
    hosts: Sequence[str] | None = None,
) -> Callable[[Request], Awaitable[Response]]:
    """A Starlette endpoint that streams ``agent`` for each POSTed conversation,
    or for one in a GET's query string (see the module docstring; mount it with
    ``methods=["GET", "POST"]``); ``shutdown.close()`` ends the streams under
    way (see ``Shutdown``). ``finish_reason=False`` leaves ``finishReason`` out
    of the ``finish`` chunk, for an ai 5 client older than 5.0.92, whose strict
    schema refuses it. ``sites``: the origins of other sites whose pages may
    call it; with it, a browser's request from any other site is refused (403,
    see ``foreign_site``); None (the default) checks nothing. ``hosts``: the
    names the ``Host`` header may give (``strange_host``); None: any."""

    async def endpoint(request: Request) -> Response:
        refused = refusal(request.headers, hosts=hosts, sites=sites, fix=_NAME_THE_SITE)
        if refused is not None:
            return _error(*refused)
        if request.method == "GET":
            if "last-event-id" in request.headers:
                return Response(status_code=204)  # an EventSource reconnecting: stop it
            if len(request.scope["query_string"]) > max_query:
                return _error(414, f"query string longer than {max_query} bytes; POST it")
            try:
                transcript = parse_chat_query(request.query_params.multi_items())
            except ChatRequestError as exc:
                return _error(400, str(exc))
            return _response(transcript, event_source=True)
        body = bytearray()
        try:
            async for piece in request.stream():
                body += piece
                if len(body) > max_body:
                    return _error(413, f"request body larger than {max_body} bytes")
        except ClientDisconnect:
            # Gone before the whole request arrived: nothing to run and nobody to
            # answer; without this, each such client logged a server traceback.
            return Response(status_code=400)
        try:
            transcript = parse_chat_request(bytes(body))
        except ChatRequestError as exc:
            return _error(400, str(exc))
        return _response(transcript, event_source=False)

    def _response(transcript: Transcript, *, event_source: bool) -> Response:
        framer: Framer
        if protocol == "ai-sdk":
            framer = UIMessageFramer(dynamic_tools=dynamic_tools, finish_reason=finish_reason)
            headers = UI_MESSAGE_STREAM_HEADERS
        elif event_source:
            framer, headers = EventSourceFramer(), EVENTS_HEADERS
        else:
            framer, headers = EventsFramer(), EVENTS_HEADERS
        return EventStreamResponse(
            agent, transcript, framer, headers=dict(headers), keepalive=keepalive,
            shutdown=shutdown,
        )

    return endpoint


async def no_stream_to_resume(request: Request) -> Response:
    """``GET /api/chat/{id}/stream``, where ``useChat({ resume: true })`` asks on
    mount for a stream to resume: 204, the SDK's "none", as a stateless server
    never has one (a 404 was an error the chat showed: "Not Found")."""
    return Response(status_code=204)


# how a front end served elsewhere is let in, said when its page is refused
_NAME_THE_SITE = (
    "name the origin of a front end served elsewhere with create_app(cors_origins=...) "
    "or streamtools ui --cors-origin"
)
_ERROR_KINDS = {400: "invalid_request_error", 403: "forbidden", 421: "misdirected_request"}


def _error(status: int, message: str) -> JSONResponse:
    kind = _ERROR_KINDS.get(status, "request_too_large")
    return JSONResponse({"error": {"type": kind, "message": message}}, status_code=status)


def chat_page() -> str:
    """The chat page's HTML (a package data file, self-contained)."""
    return resources.files("streamtools.ui").joinpath("chat.html").read_text(encoding="utf-8")


def create_app(
    agent: EventSource,
    *,
    keepalive: float = 15.0,
    page: bool = True,
    title: str = "streamtools",
    subtitle: str = "streaming tool calls, live",
    suggestion: str | None = None,
    cors_origins: Sequence[str] = (),
    finish_reason: bool = True,
    hosts: Sequence[str] | None = None,
    max_body: int = 4 * 1024 * 1024,
) -> Starlette:
    """An app serving the chat page at ``/`` and ``agent`` at ``/api/chat`` (AI SDK
    UI message stream) and ``/api/events`` (our events; GET for ``EventSource``).
    ``suggestion`` is a first message the page offers with one click.
    ``cors_origins``: the origins of front ends served elsewhere that may call the
    endpoints (``"*"``: any; see the module docstring). ``finish_reason=False``: for
    an ai 5 client older than 5.0.92 (see ``chat_endpoint``). ``app.state.shutdown``
    (a ``Shutdown``) ends the streams under way: the server calls its ``close()``
    when it stops. ``hosts``: the only names the endpoints answer to (``Host``
    header; ``strange_host``), for a server on a loopback address: ``streamtools
    ui`` passes ``LOOPBACK_NAMES`` there. ``max_body``: the largest request body
    in bytes the endpoints take (default 4 MiB; larger is a 413), to raise for
    conversations that carry big attachments."""
    if isinstance(max_body, bool) or not isinstance(max_body, int) or max_body < 1:
        raise UsageError(f"max_body must be a whole number of bytes, at least 1, got {max_body!r}")
    # a browser's Origin never ends with "/": an origin copied from the address bar did
    cors_origins = [origin.rstrip("/") for origin in cors_origins]
    page_html = _fill_page(chat_page(), title=title, subtitle=subtitle, suggestion=suggestion)

    async def index(request: Request) -> Response:
        return HTMLResponse(page_html)

    shutdown = Shutdown()
    routes = [
        Route(
            "/api/chat",
            chat_endpoint(
                agent, keepalive=keepalive, finish_reason=finish_reason, shutdown=shutdown,
                sites=cors_origins, hosts=hosts, max_body=max_body,
            ),
            methods=["POST"],
        ),
        Route(
            "/api/events",
            chat_endpoint(
                agent, protocol="events", keepalive=keepalive, shutdown=shutdown,
                sites=cors_origins, hosts=hosts, max_body=max_body,
            ),
            methods=["GET", "POST"],
        ),
    ]
    routes.append(Route("/api/chat/{chat_id}/stream", no_stream_to_resume, methods=["GET"]))
    if page:
        routes.append(Route("/", index, methods=["GET"]))
    middleware = []
    if cors_origins:
        # useChat sends JSON (a preflighted content type) and may add its own headers
        cors = Middleware(
            CORSMiddleware,
            allow_origins=list(cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["*"],
        )
        middleware.append(cors)
    app = Starlette(routes=routes, middleware=middleware)
    app.state.shutdown = shutdown
    return app


_PLACEHOLDER = re.compile(r"\{\{(title|subtitle|config)\}\}")


def _fill_page(template: str, *, title: str, subtitle: str, suggestion: str | None) -> str:
    """``template`` with its placeholders filled in, in one pass over the template
    only: a value is never searched for placeholders (one after another, a title
    holding ``{{config}}`` got the config JSON). The strings are HTML-escaped;
    the config is JSON with ``<`` escaped, so it cannot close its script element."""
    values = {
        "title": html.escape(title),
        "subtitle": html.escape(subtitle),
        "config": json.dumps({"suggestion": suggestion}).replace("<", "\\u003c"),
    }
    return _PLACEHOLDER.sub(lambda m: values[m[1]], template)
