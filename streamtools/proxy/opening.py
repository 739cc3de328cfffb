"""``think_open``'s opening reasoning, for one upstream attempt of the proxy.

Theory of operation
-------------------
With ``think_open`` (an upstream whose chat template ends the prompt with
``<think>``) a reply begins inside reasoning, up to ``</think>``. The runtime's
``decoders.TextReader`` reads it so, and ends that reasoning early at the
upstream's own reasoning field (a server that read the ``<think>`` itself).
It also reads again, at the end, a reply that *finished* inside it with no
``</think>``: the model skipped its thinking and answered (Qwen3 with thinking
off, a template that closed the block itself), and all of it was reasoning: the
client got an empty answer, and a call in it was never made. Re-read, its text
is the answer and its calls are calls. A reply cut at the token limit there is
unfinished thinking: reasoning still.

That is decided only at the end, while the reasoning events come as the text
does. ``Opening`` passes the reader's events on, but for a client that waits
for a whole body (``hold``): there the opening reasoning is held until the
opening ends (its first other event, the upstream's reasoning field, the end),
then given in one piece before what ended it; a re-read drops it, so the body
holds the answer once, as text. A stream's client has seen it as reasoning
already (its thinking, as it came): it gets the re-read answer after it, at the
end, text and calls alike. Sans-IO: events in, events out.
"""

from __future__ import annotations

from collections.abc import Callable

from streamtools.events import ParserEvent, ReasoningDelta
from streamtools.parser import Parser
from streamtools.runtime.decoders import TextReader

__all__ = ["Opening"]


class Opening:
    """``TextReader(make, think_open=True)``, holding the opening reasoning
    when ``hold`` (see the module docstring)."""

    def __init__(self, make: Callable[[bool], Parser], hold: bool) -> None:
        self.reader = TextReader(make, True)
        self._held: list[str] | None = [] if hold else None

    @property
    def parser(self) -> Parser:
        return self.reader.parser

    def feed(self, text: str) -> list[ParserEvent]:
        events = self.reader.feed(text)
        return events if self._held is None else self._sorted(events)

    def provider_reasoning(self) -> list[ParserEvent]:
        """The reader's, once the upstream's reasoning field ended the opening."""
        events = self.reader.provider_reasoning()
        return events if self._held is None else [*self._released(), *events]

    def end(self, finish_reason: str | None) -> list[ParserEvent]:
        events = self.reader.end(finish_reason)
        if self._held is None:
            return events
        if self.reader.reread:
            self._held = None  # it was the answer, which ``events`` hold
            return events
        return self._sorted(events) + self._released()

    def _sorted(self, events: list[ParserEvent]) -> list[ParserEvent]:
        """``events``, the opening's reasoning held, given before the first
        event that is not reasoning."""
        held = self._held
        assert held is not None
        for i, event in enumerate(events):
            if type(event) is ReasoningDelta:
                held.append(event.text)
            else:
                return [*self._released(), *events[i:]]
        return []

    def _released(self) -> list[ParserEvent]:
        """The held reasoning, in one piece, and no more holding."""
        held, self._held = self._held, None
        return [ReasoningDelta(text="".join(held))] if held else []
