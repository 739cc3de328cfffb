"""A stream sent under another content type, read as the stream it is.

Theory of operation
-------------------
A provider that asked for a stream and got a 2xx ``application/json`` answer
reads the whole body, as a server that ignored ``stream: true`` sends one
JSON answer (``streamtools.providers.whole``). Some gateways and proxies
stream all the same but label the SSE stream ``application/json`` (Azure
AI Foundry's tools, agentgateway in front of Bedrock): the whole answer was
buffered to its end, then refused as JSON that is no answer.

Other labels come on streams too: ``text/plain`` (a RAG proxy, a Workers
script), ``application/x-ndjson`` (LitServe's OpenAI spec, with SSE framing),
``application/octet-stream``, or no content type at all (an API gateway that
drops it); each stream was refused ("expected text/event-stream") before a
byte of it was read.

``relabelled`` looks at the start of such a body before anything else reads
it: if its first bytes (past a byte-order mark and blank lines) are an SSE
field (``data:``, ``event:``, ``id:``, ``retry:``, or a ``:`` comment)
rather than ``{`` or ``[``, or, for a wire read line by line (``lines``:
Ollama's NDJSON), a JSON object, the answer is given the stream's content
type and read as it arrives; else it keeps its label (and is a whole answer,
or an error). Either way the bytes read to decide (at most the first few
parts) are given back in front of the rest, and closing the answer closes
the one it was made from.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx

__all__ = ["relabelled"]

_FIELDS = (b"data:", b"event:", b"id:", b"retry:", b":")
_BLANKS = b" \t\r\n"
_ENOUGH = 8  # bytes past the blanks: enough to tell a field name from JSON


class _Rest(httpx.AsyncByteStream):
    """``head`` then the rest of ``response``'s body; closing it closes ``response``."""

    def __init__(self, head: bytes, parts: AsyncIterator[bytes], response: httpx.Response):
        self._head = head
        self._parts = parts
        self._response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._head:
            yield self._head
        async for part in self._parts:
            yield part

    async def aclose(self) -> None:
        """Close the answer, then finish the reader of it that ``relabelled``
        left suspended: closed unread (the caller left at once), it would be
        left to the garbage collector, and trio warns then."""
        await self._response.aclose()
        try:
            async for _ in self._parts:
                pass
        except Exception:  # a closed stream fails in many ways; all of them mean "done"
            pass


def _looks_like_stream(head: bytes, lines: bool) -> bool:
    start = head.removeprefix(b"\xef\xbb\xbf").lstrip(_BLANKS)
    return start.startswith(_FIELDS) or (lines and start.startswith(b"{"))


async def relabelled(
    response: httpx.Response, stream_type: str, *, lines: bool = False
) -> httpx.Response:
    """``response`` (a 2xx answer under another label, unread) as a new answer
    over the same bytes: labelled ``stream_type`` if it begins as that stream,
    else as it came (see the module docstring)."""
    parts = response.aiter_bytes()
    head = b""
    async for part in parts:
        head += part
        if len(head.removeprefix(b"\xef\xbb\xbf").lstrip(_BLANKS)) >= _ENOUGH:
            break
    came = response.headers.get("content-type", "")
    ctype = stream_type if _looks_like_stream(head, lines) else came
    return httpx.Response(
        response.status_code,
        headers={"content-type": ctype},
        stream=_Rest(head, parts, response),
        request=response.request,
    )
