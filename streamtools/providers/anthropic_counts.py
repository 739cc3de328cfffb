"""An Anthropic answer's token counts, read from its stream's events.

Theory of operation
-------------------
``message_start`` has the input counts, each ``message_delta`` the counts so
far (cumulative, as the API documents): the output, and the input too where
the server sends it there (the API, and grown when server tools ran more
iterations; some compatible servers send ``input_tokens: 0`` at the start and
the real count only there). ``Counts`` keeps each input field at the larger
of the two, and the output as last said, and gives one ``UsageChunk`` for the
answer (``AnthropicMessages`` sends it just before the finish).

The API's ``input_tokens`` leaves out the prompt-cache tokens, which it counts
in ``cache_read_input_tokens`` and ``cache_creation_input_tokens``; a
``UsageChunk``'s ``input_tokens`` is all the input, so it is the sum of the
three, and the two cache counts go on as the parts of it they are
(``cache_read_tokens``, ``cache_write_tokens``: None when the server did not
name them). ``output_tokens_details.thinking_tokens``, the part of the output
spent thinking, is ``reasoning_tokens``.
"""

from __future__ import annotations

import msgspec

from streamtools.model import Chunk, UsageChunk

__all__ = ["Counts", "TokenUsage"]

_INPUT = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


class _OutputDetails(msgspec.Struct):
    thinking_tokens: int | None = None


class TokenUsage(msgspec.Struct):
    """The ``usage`` object of ``message_start``'s message and of ``message_delta``."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    output_tokens_details: _OutputDetails | None = None


class Counts:
    """The answer's token counts so far (see the module docstring)."""

    def __init__(self) -> None:
        self.seen = False
        self.fields: dict[str, int] = {}  # input-side field -> its largest count
        self.output: int | None = None
        self.thinking: int | None = None

    def add(self, usage: TokenUsage, *, delta: bool) -> None:
        self.seen = True
        for name in _INPUT:
            value = getattr(usage, name)
            if value is not None:
                self.fields[name] = max(value, self.fields.get(name, 0))
        if delta and usage.output_tokens is not None:
            self.output = usage.output_tokens
        details = usage.output_tokens_details
        if details is not None and details.thinking_tokens is not None:
            self.thinking = max(details.thinking_tokens, self.thinking or 0)

    def chunks(self) -> list[Chunk]:
        """The one ``UsageChunk``, if any count came (see the module docstring)."""
        if not self.seen:
            return []
        return [
            UsageChunk(
                input_tokens=sum(self.fields.values()) if self.fields else None,
                output_tokens=self.output,
                cache_read_tokens=self.fields.get("cache_read_input_tokens"),
                cache_write_tokens=self.fields.get("cache_creation_input_tokens"),
                reasoning_tokens=self.thinking,
            )
        ]
