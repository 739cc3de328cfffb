"""SSE events a server wrote without the blank line between them.

Theory of operation
-------------------
An SSE event ends at a blank line; ``data:`` lines before it are one event,
their data joined with newlines. Some servers end each event with a single
newline (observed streaming GLM-4.7's and Kimi K2.5's tool calls:
rexxars/eventsource-parser#31), so httpx-sse reads a run of chunks as one
event whose data is ``{...}\\n{...}``: no JSON, and the answer ended in an
error ("malformed JSON: trailing characters") at the first run.

``joined`` tells such data from a value written over several ``data:`` lines
(which the spec allows, and which decodes whole): every line of it begins an
object (or is ``[DONE]``), as no line of one JSON value split at its line
breaks can, since a value cannot follow an object's ``}`` with no comma
between. Only data that failed to decode is looked at, so a stream that keeps
the spec pays nothing. ``OpenAIChat`` then reads the lines one by one, as the
events they are, before the rest of the stream (``spliced_events``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator

from httpx_sse import ServerSentEvent

__all__ = ["Joined", "joined", "spliced_events"]


class Joined(Exception):
    """Raised by a decoder for data that is several events (``lines``)."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("several SSE events written as one")
        self.lines = lines


def joined(data: str) -> list[str] | None:
    """The events in ``data`` if it is several written as one (see the module
    docstring), else None."""
    lines = [line for line in data.split("\n") if line.strip()]
    if len(lines) < 2:
        return None
    for line in lines:
        if not (line.lstrip().startswith("{") or line.strip() == "[DONE]"):
            return None
    return [line.strip() for line in lines]


async def spliced_events(
    pending: deque[str], events: AsyncIterator[ServerSentEvent]
) -> AsyncGenerator[ServerSentEvent, None]:
    """``events``, with the data in ``pending`` read first whenever there is
    some (a decoder adds to it as it finds events written as one)."""
    while True:
        while pending:
            yield ServerSentEvent(data=pending.popleft())
        try:
            sse = await anext(events)
        except StopAsyncIteration:
            return
        yield sse
