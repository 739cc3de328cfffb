"""The bytes of an SSE stream, mended for httpx-sse (sans-IO).

Theory of operation
-------------------
``HTTPProvider`` reads SSE with httpx-sse, from a view of the answer's body
(``providers.base._Body``) whose bytes pass through ``SSEMend`` first, which
mends what servers send beside the spec (see the class docstring).
"""

from __future__ import annotations

import re

__all__ = ["SSEMend"]

_BOM = b"\xef\xbb\xbf"
_ERROR_LINE = re.compile(rb"([\r\n])error:")


class SSEMend:
    """Sans-IO: the bytes of an SSE stream, mended for httpx-sse.

    A leading UTF-8 byte-order mark is dropped, as the SSE spec says.
    llama.cpp's server (builds before about September 2025) reports a failure
    during an answer as an ``error: {json}`` line, then ``data: [DONE]``; the
    spec ignores an ``error`` field, so the cut answer ended as a normal stop
    (and a prompt past the context size as an empty answer). Such a line
    becomes ``event: error`` and ``data: {json}``, the in-band error event that
    every SSE wire format here ends with an error finish. Only a line that
    *starts* with ``error:`` is changed: inside a ``data:`` line it is data.
    A body whose last event lacks its blank line (a gateway that trims the
    body, a server that never writes one) gets one at its end (``_Body``):
    the spec drops such an event, and with it went the finish reason or the
    usage, so a whole answer ended in "stream ended before the answer was
    complete" (the SDKs of OpenAI and others read it too).
    The start of a possible ``error:`` at the end of a part is held for the
    next one, so the result does not depend on how the body was split.
    """

    def __init__(self) -> None:
        self._hold = b""
        self._first = True  # before the first bytes: a byte-order mark may come
        self._line_start = True  # the held bytes, or the next ones, begin a line

    def feed(self, data: bytes) -> bytes:
        buf = self._hold + data if self._hold else data
        self._hold = b""
        if self._first:
            if len(buf) < len(_BOM) and _BOM.startswith(buf):
                self._hold = buf
                return b""
            self._first = False
            buf = buf.removeprefix(_BOM)
        if buf.endswith(b"\n") and b"error:" not in buf:  # the usual part: whole events
            self._line_start = True
            return buf
        at_start = self._line_start
        last_end = max(buf.rfind(b"\n"), buf.rfind(b"\r"))
        tail = buf[last_end + 1 :]
        if len(tail) < 6 and b"error:".startswith(tail) and (last_end >= 0 or at_start):
            self._hold, buf = tail, buf[: last_end + 1]  # tail may be b"": then held is b""
            self._line_start = True
        elif buf:
            self._line_start = False
        if b"error:" in buf:
            head = b"\n" if at_start else b""
            buf = _ERROR_LINE.sub(rb"\1event: error\ndata:", head + buf)[len(head) :]
        return buf

    def flush(self) -> bytes:
        out, self._hold = self._hold, b""
        return out
