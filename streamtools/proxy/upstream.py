"""The proxy's upstream providers: the package's providers with a leaner event reader.

Theory of operation
-------------------
A paced upstream (a model writing one token every few milliseconds) costs the
proxy one network read per chunk, and each read went through a stack of
generators before the provider decoded it: httpx's byte and text decoders,
then httpx-sse's line splitter and decoder, one Python call per line.
``SSESource`` replaces the layers above the raw body: it reads
``response.aiter_raw()`` (the decoded ``aiter_bytes()`` when the upstream
compresses), splits the bytes on blank lines itself, and turns each complete
block into one ``ServerSentEvent``; the common block, a single ``data:`` line,
takes one ``startswith`` and one slice.

``SSESource.buffered`` tells how many complete events of the last network read
are still waiting. The app flushes the client's buffer only when it is zero,
so under load the chunks of one read leave in one ``send`` (and when the proxy
keeps up, each chunk leaves at once).

``ProxyOpenAI`` and ``ProxyAnthropic`` are ``OpenAIChat`` and
``AnthropicMessages`` with this reader (the providers' ``_events`` hook);
everything else (opening, retries, errors, decoding) is theirs. The SSE rules
kept: ``\\r\\n``, ``\\r`` and ``\\n`` all end lines; lines starting with ``:``
are comments; several ``data`` lines join with ``\\n``; one space after the
colon is dropped; a block with no field dispatches nothing; an unfinished last
block is dropped. Not kept: the last event id does not carry over to later
events (the providers never read ids). Malformed UTF-8 raises ``UnicodeDecodeError``, which the
providers report as an unreadable stream.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import httpx
from httpx_sse import ServerSentEvent

from streamtools.providers import AnthropicMessages, OpenAIChat

__all__ = ["LeanSSE", "ProxyAnthropic", "ProxyOpenAI", "SSESource", "parse_block"]


def parse_block(block: bytes) -> ServerSentEvent | None:
    """One SSE event from the lines between two blank lines (``\\n`` line ends)."""
    text = block.decode()
    if text.startswith("data: ") and "\n" not in text:  # the common case
        return ServerSentEvent(data=text[6:])
    event: str | None = None
    event_id: str | None = None
    retry: int | None = None
    data: list[str] = []
    seen = False
    for line in text.split("\n"):
        if not line or line[0] == ":":
            continue
        field, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if field == "data":
            data.append(value)
        elif field == "event":
            event = value
        elif field == "id":
            event_id = value
        elif field == "retry" and value.isdigit():
            retry = int(value)
        else:
            continue
        seen = True
    if not seen:
        return None
    return ServerSentEvent(event=event, data="\n".join(data), id=event_id, retry=retry)


class SSESource:
    """The events of an SSE response, read a network chunk at a time."""

    def __init__(self, response: httpx.Response) -> None:
        coding = response.headers.get("content-encoding", "").strip().lower()
        plain = coding in ("", "identity")
        self._raw = response.aiter_raw() if plain else response.aiter_bytes()
        self._events: deque[ServerSentEvent] = deque()
        self._tail = b""
        self._cr = False  # the last read ended in "\r": its "\n" may come next

    @property
    def buffered(self) -> int:
        """Complete events already read and not yet taken."""
        return len(self._events)

    def __aiter__(self) -> SSESource:
        return self

    async def __anext__(self) -> ServerSentEvent:
        while not self._events:
            try:
                data = await self._raw.__anext__()
            except StopAsyncIteration:
                if not self._cr:
                    raise
                data = b"\n"  # the held "\r" ended a line after all
                self._cr = False
            self.feed(data)
        return self._events.popleft()

    def feed(self, data: bytes) -> None:
        if self._cr:
            data = b"\r" + data
            self._cr = False
        if b"\r" in data:
            if data.endswith(b"\r"):
                data, self._cr = data[:-1], True
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        blocks = (self._tail + data).split(b"\n\n")
        self._tail = blocks.pop()
        for block in blocks:
            if block:
                event = parse_block(block)
                if event is not None:
                    self._events.append(event)


class LeanSSE:
    """Mixin: the provider reads its events through an ``SSESource``."""

    source: SSESource | None = None

    def _events(self, response: httpx.Response) -> AsyncIterator[Any]:
        self.source = SSESource(response)
        return self.source

    def busy(self) -> bool:
        """More events of the last network read are waiting."""
        return self.source is not None and self.source.buffered > 0


class ProxyOpenAI(LeanSSE, OpenAIChat):
    """``OpenAIChat`` reading its stream through ``SSESource``."""


class ProxyAnthropic(LeanSSE, AnthropicMessages):
    """``AnthropicMessages`` reading its stream through ``SSESource``."""
