"""Writing a turn back to the client: per-wire encoders, errors, and the streaming response.

Theory of operation
-------------------
``Wire`` bundles what differs between the APIs (decoder, stream encoder,
body builder, error shape, call-id prefix); ``OPENAI`` (chat completions),
``RESPONSES`` (OpenAI's Responses API) and ``ANTHROPIC`` are the instances.

``TurnResponse`` is an ASGI response that runs a turn and streams its events:

* **Lazy status line.** ``http.response.start`` is sent with the first event,
  so an upstream that refuses the request before producing anything (401,
  429, 5xx) is answered with the upstream's status, its ``retry-after`` and an
  error body in the client's format instead of a 200 stream (the client's SDK
  then retries as the upstream asked).
* **Coalesced writes, no writer task.** Events are encoded into a
  ``BodyBuffer``; the turn calls ``flush`` after each upstream chunk, so the
  events of one chunk leave in one ``send``. Writing inline in
  the turn's task costs no task switch per chunk, which dominated a paced
  stream's CPU besides the HTTP layers. ``send`` waits while the client's
  socket buffer is full (backpressure), and a buffer beyond ``high_water``
  bytes is flushed at once.
* **Disconnects.** A task watches ``receive`` for ``http.disconnect`` and
  cancels the turn, which closes the upstream request. A write that fails
  because the client left ends the response quietly.
* **Raw ASGI.** The response speaks ASGI itself (no ``StreamingResponse``);
  ``app`` routes the POST endpoints past Starlette's middleware so each
  ``send`` goes straight to the server.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple, Protocol

import anyio
import msgspec
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from streamtools.errors import ProviderError
from streamtools.events import Event, StreamError
from streamtools.proxy import anthropic_wire, openai_wire, responses_wire
from streamtools.proxy.request import ProxyCall, Reply, kind_for_status
from streamtools.proxy.turn import Emit, Flush

__all__ = [
    "ANTHROPIC",
    "OPENAI",
    "RESPONSES",
    "BodyBuffer",
    "Drive",
    "TurnResponse",
    "Wire",
    "error_response",
    "provider_error_response",
    "retry_headers",
]

log = logging.getLogger("streamtools.proxy")
_encode_json = msgspec.json.Encoder().encode


class Encoder(Protocol):
    def start(self) -> bytes: ...
    def encode(self, event: Event) -> bytes: ...
    def error(self, status: int, message: str, kind: str) -> bytes: ...


class Wire(NamedTuple):
    decode: Callable[[Any], ProxyCall]
    encoder: Callable[[ProxyCall], Encoder]
    body: Callable[[Reply, ProxyCall], dict[str, Any]]
    error: Callable[[int, str, str], dict[str, Any]]
    id_prefix: str


OPENAI = Wire(
    openai_wire.decode_request,
    lambda call: openai_wire.ChunkEncoder(call.model, include_usage=call.include_usage),
    lambda reply, call: openai_wire.response_body(reply, call.model),
    openai_wire.error_body,
    "call_",
)
RESPONSES = Wire(
    responses_wire.decode_request,
    responses_wire.EventEncoder,
    responses_wire.response_body,
    openai_wire.error_body,
    "call_",
)
ANTHROPIC = Wire(
    anthropic_wire.decode_request,
    lambda call: anthropic_wire.EventEncoder(call.model),
    lambda reply, call: anthropic_wire.response_body(reply, call.model),
    anthropic_wire.error_body,
    "toolu_",
)


def error_response(
    wire: Wire,
    status: int,
    message: str,
    kind: str | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    body = wire.error(status, message, kind or kind_for_status(status))
    return Response(
        _encode_json(body), status_code=status, headers=headers, media_type="application/json"
    )


def retry_headers(retry_after: float | None) -> dict[str, str] | None:
    """The upstream's ``retry-after``, passed on so the client's SDK waits as asked.

    ``retry-after`` carries whole seconds (rounded up, as HTTP allows only
    digits); a fractional wait also goes in ``retry-after-ms``, which the
    OpenAI and Anthropic SDKs read first."""
    if retry_after is None:
        return None
    seconds = math.ceil(retry_after)
    headers = {"retry-after": str(seconds)}
    if seconds != retry_after:
        headers["retry-after-ms"] = str(round(retry_after * 1000))
    return headers


def provider_error_response(wire: Wire, exc: ProviderError) -> Response:
    """The answer to an upstream failure known before the response began: the
    upstream's status (502 for a transport failure) and its ``retry-after``."""
    status = exc.status if exc.status is not None and exc.status >= 400 else 502
    headers = retry_headers(exc.retry_after)
    return error_response(wire, status, f"upstream error: {exc}", headers=headers)


_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


class BodyBuffer:
    """Encoded chunks waiting for the next ``flush`` (one ``send`` for all of them)."""

    def __init__(self, send: Send, *, high_water: int = 64 * 1024) -> None:
        self._send = send
        self._parts: list[bytes] = []
        self._size = 0
        self._high_water = high_water
        self.failed = False  # the client went away

    async def write(self, data: bytes) -> None:
        self._parts.append(data)
        self._size += len(data)
        if self._size >= self._high_water:
            await self.flush()

    async def flush(self, *, last: bool = False) -> None:
        """Send what is buffered; ``last`` ends the body in the same ``send``
        (one write for the server instead of two)."""
        if self.failed or not (self._parts or last):
            return
        data = b"".join(self._parts) if len(self._parts) > 1 else b"".join(self._parts[:1])
        self._parts.clear()
        self._size = 0
        try:
            # Uvicorn's send writes at once and waits only while the client's
            # socket buffer is full: that wait is the backpressure on the turn.
            await self._send({"type": "http.response.body", "body": data, "more_body": not last})
        except OSError:
            self.failed = True
            raise


Drive = Callable[[Emit, Flush], Awaitable[None]]


class TurnResponse(Response):
    """Streams one turn (see the module docstring); ``drive(emit, flush)`` runs it."""

    def __init__(self, wire: Wire, call: ProxyCall, drive: Drive):
        super().__init__(media_type="text/event-stream")
        self.wire = wire
        self.encoder = wire.encoder(call)
        self.drive = drive

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        buffer: BodyBuffer | None = None
        encoder = self.encoder
        async with anyio.create_task_group() as tg:

            async def watch_disconnect() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                tg.cancel_scope.cancel()

            async def emit(event: Event) -> None:
                nonlocal buffer
                if buffer is None:
                    await send({"type": "http.response.start", "status": 200, "headers": _HEADERS})
                    buffer = BodyBuffer(send)
                    await buffer.write(encoder.start())
                if isinstance(event, StreamError):
                    data = encoder.error(502, event.message, "upstream")
                else:
                    data = encoder.encode(event)
                if data:
                    await buffer.write(data)

            async def flush() -> None:
                if buffer is not None:
                    await buffer.flush()

            tg.start_soon(watch_disconnect)
            try:
                await self.drive(emit, flush)
            except ProviderError as exc:  # raised only before the first event
                await provider_error_response(self.wire, exc)(scope, receive, send)
                tg.cancel_scope.cancel()
                return
            except OSError:  # the client went away
                tg.cancel_scope.cancel()
                return
            except Exception:  # a bug of ours: log it, tell the client in its format
                log.exception("proxy turn failed")
                if buffer is None:
                    response = error_response(self.wire, 500, "internal error in the proxy")
                    await response(scope, receive, send)
                    tg.cancel_scope.cancel()
                    return
                await buffer.write(encoder.error(500, "internal error in the proxy", "internal"))
            if buffer is None:  # a turn always emits; answer rather than hang if not
                await error_response(self.wire, 502, "the upstream produced nothing")(
                    scope, receive, send
                )
            else:
                try:
                    await buffer.flush(last=True)
                except OSError:
                    pass
            tg.cancel_scope.cancel()
