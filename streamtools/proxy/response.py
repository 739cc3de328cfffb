"""Writing a turn back to the client: per-wire encoders, errors, and the streaming response.

Theory of operation
-------------------
``Wire`` bundles what differs between the APIs (decoder, stream encoder,
body builder, error shape, call-id prefix); ``OPENAI`` (chat completions),
``RESPONSES`` (OpenAI's Responses API) and ``ANTHROPIC`` are the instances.

``TurnResponse`` is an ASGI response that runs a turn and streams its events:

* **Status line once the upstream accepts.** ``http.response.start`` (and the
  wire's opening event) is sent when the upstream has accepted the request
  (the turn's ``ready``), or with the first event, whichever comes first. So an
  upstream that refuses the request (401, 429, 5xx) is answered with the
  upstream's status, its ``retry-after`` and an error body in the client's
  format instead of a 200 stream (the client's SDK then retries as the upstream
  asked); once the upstream has answered 200, nothing is gained by waiting.
* **Or once ``ping_interval`` has passed.** An upstream can take minutes to
  answer at all (Ollama loading a model, a queue in front of a busy server),
  and a client or a gateway with an idle timeout gives up on a request that
  gets no byte. So when the upstream has not answered within ``ping_interval``
  seconds, the response begins anyway and keep-alives follow. The trade-off: a
  refusal that comes later than that reaches the client as an error in the
  stream (its status and ``retry-after`` only in the message), as the APIs
  report an overload once their stream has begun. Refusals come at once; a
  slow first answer is the case the wait exists for.
* **Keep-alives.** A model that only reasons (on a wire that leaves reasoning
  out: Anthropic's without thinking enabled), or
  whose text is held back until a call is known to come (``tool_choice``
  ``required``), can leave the client without a byte for minutes, and SDKs and
  coding agents cut an idle stream. Once the response has begun, a task wakes
  every ``ping_interval / 2`` seconds and sends the wire's keep-alive (``Wire.ping``:
  Anthropic's ``ping`` event, an SSE comment line for OpenAI's APIs, which the
  SDKs skip) unless something was sent since it last woke; so the client never
  waits ``ping_interval`` seconds for a byte. The same task begins the response
  when the upstream is slow to answer (above). The per-chunk cost is one
  attribute store in ``BodyBuffer.flush`` (``sent``). The pings stop before the
  body's last write.
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
from streamtools.model import ModelRequest
from streamtools.providers.failures import ProviderTimeout
from streamtools.proxy import anthropic_wire, openai_wire, responses_wire
from streamtools.proxy.chat_custom import CustomChunkEncoder, custom_body
from streamtools.proxy.overflow import CONTEXT_LENGTH, overflow_message
from streamtools.proxy.request import (
    ProxyCall,
    Reply,
    kind_for_status,
    refusal_kind,
    refusal_message,
    status_for_kind,
)
from streamtools.proxy.tokens import expected_tokens
from streamtools.proxy.turn import Emit, Flush

__all__ = [
    "ANTHROPIC",
    "NO_RETRY",
    "OPENAI",
    "RESPONSES",
    "BodyBuffer",
    "Drive",
    "TurnResponse",
    "Wire",
    "error_response",
    "failed_response",
    "in_band",
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
    # given the request that goes upstream first too (message_start's estimate)
    encoder: Callable[[ProxyCall, ModelRequest], Encoder]
    body: Callable[[Reply, ProxyCall], dict[str, Any]]
    error: Callable[[int, str, str], dict[str, Any]]
    id_prefix: str
    ping: bytes  # a keep-alive the API's clients skip


def _chat_encoder(call: ProxyCall, _: ModelRequest) -> Encoder:
    if call.freeform:  # custom tools: their calls in their own shape (chat_custom)
        return CustomChunkEncoder(call.model, call.freeform, include_usage=call.include_usage)
    kind = openai_wire.LegacyChunkEncoder if call.legacy else openai_wire.ChunkEncoder
    return kind(call.model, include_usage=call.include_usage)


def _chat_body(reply: Reply, call: ProxyCall) -> dict[str, Any]:
    if call.freeform:
        return custom_body(reply, call)
    return openai_wire.response_body(reply, call.model, call.legacy)


OPENAI = Wire(
    openai_wire.decode_request,
    _chat_encoder,
    _chat_body,
    openai_wire.error_body,
    "call_",
    b": keep-alive\n\n",
)
RESPONSES = Wire(
    responses_wire.decode_request,
    lambda call, _: responses_wire.EventEncoder(call),
    responses_wire.response_body,
    openai_wire.error_body,
    "call_",
    b": keep-alive\n\n",
)
ANTHROPIC = Wire(
    anthropic_wire.decode_request,
    # message_start says the input tokens: a guess, as the upstream's count comes last
    lambda call, request: anthropic_wire.EventEncoder(
        call.model, input_tokens=expected_tokens(request), thinking=call.thinking
    ),
    lambda reply, call: anthropic_wire.response_body(reply, call.model, call.thinking),
    anthropic_wire.error_body,
    "toolu_",
    b'event: ping\ndata: {"type":"ping"}\n\n',
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


# ``x-should-retry``, which the OpenAI and Anthropic SDKs obey over the status:
# on an answer that the same request would get again
NO_RETRY = {"x-should-retry": "false"}


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


def upstream_status(exc: ProviderError) -> int:
    """The status for an upstream failure: the upstream's own, else 504 for a
    timeout (``ProviderTimeout``: as gateways answer one) and 502 for another
    transport failure."""
    if exc.status is not None and exc.status >= 400:
        return exc.status
    return 504 if isinstance(exc, ProviderTimeout) else 502


def provider_error_response(wire: Wire, exc: ProviderError) -> Response:
    """The answer to an upstream failure known before the response began: the
    upstream's status (``upstream_status``) and its ``retry-after``; a context
    overflow is a 400 in the words the client's API uses (``overflow``)."""
    status = upstream_status(exc)
    message = f"upstream error: {exc}"
    overflow = overflow_message(message, exc.body, status)
    if overflow is not None:  # the same request overflows again: not worth a retry
        return error_response(wire, 400, overflow, CONTEXT_LENGTH, NO_RETRY)
    headers = retry_headers(exc.retry_after) or {}
    kind = refusal_kind(exc, status, begun=False)
    if exc.should_retry is not None:  # the upstream's word, which the SDKs obey
        headers["x-should-retry"] = "true" if exc.should_retry else "false"
    elif kind == "billing":  # a used-up quota: no wait cures it
        headers.update(NO_RETRY)
    return error_response(wire, status, message, kind, headers)


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
        self.sent = False  # something was sent since ``keep_alive`` last looked

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
        self.sent = True
        try:
            # Uvicorn's send writes at once and waits only while the client's
            # socket buffer is full: that wait is the backpressure on the turn.
            await self._send({"type": "http.response.body", "body": data, "more_body": not last})
        except OSError:
            self.failed = True
            raise

    async def keep_alive(self, ping: bytes, interval: float) -> None:
        """Send ``ping`` whenever nothing else was sent for a while, until
        cancelled: looking every ``interval / 2`` seconds, the client never waits
        ``interval`` seconds for a byte. A ping joins what is buffered, after it."""
        while not self.failed:
            await anyio.sleep(interval / 2)
            if self.sent:
                self.sent = False
                continue
            self._parts.append(ping)
            try:
                await self.flush()
            except OSError:
                return


def in_band(error: StreamError) -> tuple[int, str, str]:
    """A ``StreamError``'s status, message and kind for the wire's error (an
    event in a stream, the answer to a non-streaming request): an upstream's
    overload or rate limit keeps its kind (the client retries on it), a broken
    call or stream is the upstream's fault (502)."""
    status = status_for_kind(error.kind)
    if status is None:
        return 502, error.message, "upstream"
    return status, error.message, error.kind


def failed_response(wire: Wire, error: StreamError) -> Response:
    """The answer to a non-streaming turn that failed after it began (``in_band``):
    an overflow says that a retry would overflow again."""
    status, message, kind = in_band(error)
    headers = NO_RETRY if kind == CONTEXT_LENGTH else None
    return error_response(wire, status, message, kind, headers)


# drive(emit, flush, ready): ``ready`` is awaited once the upstream has accepted
Drive = Callable[[Emit, Flush, Flush], Awaitable[None]]


class TurnResponse(Response):
    """Streams one turn (see the module docstring); ``drive(emit, flush, ready)``
    runs it, and ``ping_interval`` seconds (0: never) bound the client's wait for
    a byte once the response has begun. ``request`` is the turn's first upstream
    request (the wire's opening event may say its input tokens)."""

    def __init__(
        self,
        wire: Wire,
        call: ProxyCall,
        request: ModelRequest,
        drive: Drive,
        *,
        ping_interval: float = 0,
    ):
        super().__init__(media_type="text/event-stream")
        self.wire = wire
        self.encoder = wire.encoder(call, request)
        self.drive = drive
        self.ping_interval = ping_interval  # 0: no keep-alives

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        buffer: BodyBuffer | None = None
        encoder = self.encoder
        pings = anyio.CancelScope()
        begun = anyio.Event()
        opening = anyio.Lock()  # the turn and the keep-alive task may both begin
        async with anyio.create_task_group() as tg:

            async def watch_disconnect() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                tg.cancel_scope.cancel()

            async def keep_alive() -> None:
                with pings:
                    with anyio.move_on_after(self.ping_interval):
                        await begun.wait()
                    out = buffer
                    if out is None:  # the upstream has not answered yet: begin anyway
                        try:
                            out = await begin()
                            await out.flush()
                        except OSError:  # the client went away (as in keep_alive)
                            return
                    await out.keep_alive(self.wire.ping, self.ping_interval)

            async def begin() -> BodyBuffer:
                nonlocal buffer
                async with opening:
                    if buffer is not None:  # the other task began it meanwhile
                        return buffer
                    # shielded: a status line sent is a response begun, whatever
                    # cancels the task that sent it
                    with anyio.CancelScope(shield=True):
                        start = {"type": "http.response.start", "status": 200}
                        await send({**start, "headers": _HEADERS})
                        buffer = out = BodyBuffer(send)
                        await out.write(encoder.start())
                    begun.set()
                    return out

            async def ready() -> None:
                if buffer is None:
                    await (await begin()).flush()

            async def emit(event: Event) -> None:
                out = buffer or await begin()
                if isinstance(event, StreamError):
                    data = encoder.error(*in_band(event))
                else:
                    data = encoder.encode(event)
                if data:
                    await out.write(data)

            async def flush() -> None:
                if buffer is not None:
                    await buffer.flush()

            tg.start_soon(watch_disconnect)
            if self.ping_interval > 0:
                tg.start_soon(keep_alive)
            refused: ProviderError | None = None
            broken = False
            try:
                await self.drive(emit, flush, ready)
            except ProviderError as exc:  # raised only before the turn emitted
                refused = exc
            except OSError:  # the client went away
                tg.cancel_scope.cancel()
                return
            except Exception:  # a bug of ours: log it, tell the client in its format
                log.exception("proxy turn failed")
                broken = True
            finally:
                pings.cancel()  # no ping after the body's last write, and no late begin
            async with opening:  # a begin under way in the keep-alive task is done
                pass
            if buffer is None:
                if refused is not None:
                    response = provider_error_response(self.wire, refused)
                elif broken:
                    response = error_response(
                        self.wire, 500, "internal error in the proxy", "internal"
                    )
                else:  # a turn always emits; answer rather than hang if not
                    response = error_response(self.wire, 502, "the upstream produced nothing")
                await response(scope, receive, send)
            else:
                if refused is not None:  # begun while the upstream was slow to answer
                    status = upstream_status(refused)
                    message = f"upstream error: {refusal_message(refused)}"
                    overflow = overflow_message(message, refused.body, status)
                    if overflow is not None:
                        error = encoder.error(400, overflow, CONTEXT_LENGTH)
                    else:
                        kind = refusal_kind(refused, status, begun=True)
                        error = encoder.error(status, message, kind)
                    await buffer.write(error)
                elif broken:
                    await buffer.write(
                        encoder.error(500, "internal error in the proxy", "internal")
                    )
                try:
                    await buffer.flush(last=True)
                except OSError:
                    pass
            tg.cancel_scope.cancel()
