"""Server-sent events as model servers send them: bytes in, events out.

Theory of operation
-------------------
``SSEReader`` is the SSE event-stream format (the WHATWG spec) as a sans-IO
reader: ``feed(bytes)`` returns the events completed by those bytes. Lines end
at ``\\r\\n``, ``\\r`` or ``\\n`` (a ``\\r\\n`` split between two parts is one
line end); a line starting with ``:`` is a comment (keep-alives, OpenRouter's
``: OPENROUTER PROCESSING``); ``data:`` lines (one leading space dropped) are
joined with ``\\n``; ``event:`` names the event; a blank line dispatches it.
Each line is decoded as UTF-8 (an invalid byte becomes U+FFFD, as httpx's
text decoding did), so a character is never split between two parts. The
lines that make up a response are buffered, never the whole body.

Where it departs from httpx-sse's ``EventSource``, which the providers used
before, it is on purpose:

* One leading byte-order mark is dropped, as the spec says; httpx-sse read it
  as part of the first field's name, so the first event was silently lost.
* The content type is not checked again: ``HTTPProvider`` has checked it,
  case-insensitively (``Text/Event-Stream`` is a valid media type; httpx-sse
  refused it mid-stream).
* An ``error:`` line is an ``error`` event with that line as its data.
  llama.cpp's server (builds until September 2025, llama.cpp PR #16109) sends
  a failure mid-answer as ``error: {"code": 400, "message": ...}`` and then
  ``data: [DONE]``; the spec ignores unknown fields, so the failed answer
  looked complete, ending with ``stop``. Other unknown fields (``id``,
  ``retry``) carry nothing a model's answer needs and are skipped.

An event is dispatched when it has data or an event name (an ``event: error``
with no data is still an error). At the end of the body, a last event not
closed by a blank line is dispatched too, as httpx-sse did not: a server that
ends with ``data: [DONE]`` and no newline has finished its answer.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

import httpx
from httpx_sse import ServerSentEvent

__all__ = ["SSEReader", "sse_events"]

_BOM = "\ufeff"


class SSEReader:
    """Sans-IO SSE reader; see the module docstring."""

    def __init__(self) -> None:
        self._pending: list[bytes] = []  # the start of a line that spans parts
        self._cr = False  # the last part ended with \r: a \n opening the next ends no line
        self._first = True  # the first line may start with a byte-order mark
        self._event = ""
        self._data: list[str] = []

    def feed(self, data: bytes) -> list[ServerSentEvent]:
        if self._cr and data[:1] == b"\n":
            data = data[1:]
        if not data:
            return []
        self._cr = data[-1:] == b"\r"
        lines = data.splitlines()  # bytes split at \r\n, \r and \n only
        tail = None if data[-1:] in (b"\n", b"\r") else lines.pop()
        out: list[ServerSentEvent] = []
        for raw in lines:
            if self._pending:
                self._pending.append(raw)
                raw = b"".join(self._pending)
                self._pending.clear()
            event = self._line(raw)
            if event is not None:
                out.append(event)
        if tail is not None:
            self._pending.append(tail)
        return out

    def end(self) -> list[ServerSentEvent]:
        """The events left at the end of the body: an unfinished last line, then
        an event no blank line closed."""
        out: list[ServerSentEvent] = []
        if self._pending:
            raw = b"".join(self._pending)
            self._pending.clear()
            if (event := self._line(raw)) is not None:
                out.append(event)
        if (event := self._line(b"")) is not None:
            out.append(event)
        return out

    def _line(self, raw: bytes) -> ServerSentEvent | None:
        line = raw.decode("utf-8", "replace")
        if self._first:
            self._first = False
            line = line.removeprefix(_BOM)
        if not line:
            if not self._data and not self._event:
                return None
            event = ServerSentEvent(event=self._event, data="\n".join(self._data))
            self._event, self._data = "", []
            return event
        if line[0] == ":":
            return None
        name, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "error":  # llama.cpp's mid-stream failure (see the module docstring)
            self._event = "error"
            self._data.append(value)
        return None


async def sse_events(response: httpx.Response) -> AsyncGenerator[ServerSentEvent, None]:
    """The events of a streamed ``response``'s body."""
    reader = SSEReader()
    async for part in response.aiter_bytes():
        for event in reader.feed(part):
            yield event
    for event in reader.end():
        yield event
