"""Server-sent events: framing our events, keep-alives, and the pump that
moves an agent's events to a client with cancellation flowing back.

Theory of operation
-------------------
Two wire formats share one pump:

- ``EventsFramer``: our own events, one SSE message each, the event's
  ``type`` tag as the SSE ``event:`` name and its msgspec JSON as ``data:``
  (``decode_event`` reads it back). An agent failure ends the stream with an
  ``error`` event (a ``StreamError`` of kind ``server``).
- ``EventSourceFramer``: the same for a browser's ``EventSource`` (``GET``),
  which gives the name ``error`` to its own connection errors: a
  ``StreamError`` is named ``stream_error`` there, the stream ends with a
  ``done`` event (the page closes the ``EventSource`` at it), and it opens
  with an ``id:`` line, so that a reconnection (``EventSource`` reconnects
  whenever a stream ends or drops) carries ``Last-Event-ID``, which the
  endpoint answers with 204, the status that stops it: a stateless stream
  cannot resume, and starting it again would run the agent and its tools
  again.
- ``UIMessageFramer``: the AI SDK UI message stream (see ``aisdk``), ending
  with ``data: [DONE]``.

A framer is sans-IO: ``open()``, ``frame(event)``, ``close(error)`` return
bytes. ``pump`` is the only I/O: it runs the agent's event stream in a task of
its own and forwards frames through a small memory stream, writing an SSE
comment (``: keep-alive``) whenever nothing was written for ``keepalive``
seconds, so that proxies and browsers do not drop a connection while a tool
runs. Cancelling ``pump`` (the client went away) cancels the producer task,
which leaves the agent's ``async with`` block: that is what cancels the model
request and the running tools. Nothing is left running when ``pump`` returns.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Protocol

import anyio

from streamtools.errors import StreamtoolsError
from streamtools.events import Event, StreamError
from streamtools.results import encode_json
from streamtools.transcript import Transcript
from streamtools.ui.aisdk import UI_DONE, UIMessageStreamEncoder, encode_ui_chunk

__all__ = [
    "EVENTS_HEADERS",
    "KEEPALIVE",
    "EventSource",
    "EventSourceFramer",
    "EventsFramer",
    "Framer",
    "UIMessageFramer",
    "encode_sse_event",
    "pump",
]

log = logging.getLogger("streamtools.ui")

KEEPALIVE = b": keep-alive\n\n"

EVENTS_HEADERS: dict[str, str] = {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "connection": "keep-alive",
    "x-accel-buffering": "no",
}


class EventSource(Protocol):
    """What the UI serves: anything with ``stream(transcript)`` like ``Agent``."""

    def stream(
        self, prompt: str | Transcript
    ) -> AbstractAsyncContextManager[AsyncIterator[Event]]: ...


def encode_sse_event(event: Event, *, name: str | None = None) -> bytes:
    """One event as an SSE message named ``name``, by default its ``type`` tag; a
    lone surrogate half as U+FFFD (see ``aisdk.encode_ui_chunk``)."""
    if name is None:
        name = str(type(event).__struct_config__.tag)
    return b"event: " + name.encode() + b"\ndata: " + encode_json(event) + b"\n\n"


class Framer(Protocol):
    def open(self) -> bytes: ...
    def frame(self, event: Event) -> bytes: ...
    def close(self, error: str | None = None) -> bytes: ...


class EventsFramer:
    """Our own events over SSE."""

    def open(self) -> bytes:
        return b""

    def frame(self, event: Event) -> bytes:
        return encode_sse_event(event)

    def close(self, error: str | None = None) -> bytes:
        if error is None:
            return b""
        return encode_sse_event(StreamError(kind="server", message=error))


class EventSourceFramer:
    """Our own events for a browser's ``EventSource`` (see the module docstring):
    ``stream_error`` for a ``StreamError`` (its data still says ``"type":
    "error"``, as ``decode_event`` reads it), a last ``done`` event, a first
    ``id:`` line."""

    def open(self) -> bytes:
        # no data: sets the browser's last event ID, dispatches nothing
        return b"id: 0\n\n"

    def frame(self, event: Event) -> bytes:
        if isinstance(event, StreamError):
            return encode_sse_event(event, name="stream_error")
        return encode_sse_event(event)

    def close(self, error: str | None = None) -> bytes:
        failure = b""
        if error is not None:
            failure = self.frame(StreamError(kind="server", message=error))
        return failure + b"event: done\ndata: {}\n\n"


class UIMessageFramer:
    """The AI SDK UI message stream protocol v1 (``finish_reason``: see
    ``UIMessageStreamEncoder``)."""

    def __init__(
        self,
        *,
        message_id: str | None = None,
        dynamic_tools: bool = True,
        finish_reason: bool = True,
    ) -> None:
        self.encoder = UIMessageStreamEncoder(
            message_id=message_id, dynamic_tools=dynamic_tools, finish_reason=finish_reason
        )

    def open(self) -> bytes:
        return b"".join(encode_ui_chunk(c) for c in self.encoder.start())

    def frame(self, event: Event) -> bytes:
        return b"".join(encode_ui_chunk(c) for c in self.encoder.encode(event))

    def close(self, error: str | None = None) -> bytes:
        chunks = self.encoder.close(error=error)
        return b"".join(encode_ui_chunk(c) for c in chunks) + UI_DONE


def describe_failure(exc: Exception) -> str:
    """What a client is told when the agent fails: our own errors say what
    happened; anything else is logged here and reported without internals."""
    if isinstance(exc, StreamtoolsError):
        return f"{type(exc).__name__}: {exc}"
    log.exception("agent stream failed")
    return "internal server error"


async def pump(
    events: AbstractAsyncContextManager[AsyncIterator[Event]],
    framer: Framer,
    send: Callable[[bytes], Awaitable[None]],
    *,
    keepalive: float = 15.0,
    stop: anyio.Event | None = None,
) -> None:
    """Write ``framer``'s frames for ``events`` with ``send`` until the stream ends.

    Exceptions from the agent become the framer's closing error frame. To stop
    early (the client is gone), cancel the task running ``pump``: the agent is
    cancelled with it. ``stop``, once set, ends the stream the other way, for a
    client that is still there (the server is shutting down): the agent is
    cancelled, the frames already made are written, then the closing frame with
    an error saying why, so the client's reader sees a complete stream.
    ``send`` should not raise; see ``ui.app``.
    """
    tx, rx = anyio.create_memory_object_stream[bytes](64)

    async def produce() -> None:
        async with tx:
            await tx.send(framer.open())
            error: str | None = None
            unsent = b""  # made by the framer, not yet handed on when the agent was stopped
            with anyio.CancelScope() as agent_scope:
                async with anyio.create_task_group() as watching:
                    if stop is not None:

                        async def stop_agent() -> None:
                            await stop.wait()
                            agent_scope.cancel()

                        watching.start_soon(stop_agent)
                    try:
                        async with events as stream:
                            async for event in stream:
                                unsent = framer.frame(event)
                                await tx.send(unsent)
                                unsent = b""
                    except Exception as exc:  # the agent failed: tell the client, end cleanly
                        error = describe_failure(exc)
                    watching.cancel_scope.cancel()
            if agent_scope.cancelled_caught:
                error = "the server is shutting down"
            await tx.send(unsent + framer.close(error))

    # rx outlives the task group, so that when this task is cancelled the
    # producer is cancelled while rx is still open (never a broken-stream error).
    async with rx, anyio.create_task_group() as tg:
        tg.start_soon(produce)
        while True:
            with anyio.move_on_after(keepalive) as idle:
                try:
                    data = await rx.receive()
                except anyio.EndOfStream:
                    break
            if idle.cancelled_caught:
                await send(KEEPALIVE)
            elif data:
                await send(data)
