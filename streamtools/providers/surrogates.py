"""UTF-16 surrogate pairs split across two events of a stream.

Theory of operation
-------------------
A gateway written in JavaScript holds text as UTF-16 and may slice a delta
between the two halves of a surrogate pair, then JSON-encode each half as an
escape: one event carries ``"\\ud83d"``, the next ``"\\ude00"``, and together
they are one character (😀). msgspec rightly refuses a lone surrogate escape,
so without help the provider would end the stream with an error.

``SurrogatePairs`` belongs to one stream; its provider uses it so:

* ``decode(data)``: the event, by the provider's msgspec decoder (the fast
  path, unchanged). Only when that raises ``DecodeError`` and the data holds a
  surrogate escape is the event decoded again by the standard library's
  ``json`` (which accepts lone halves) and converted to the same type; any
  other malformed JSON raises the decoder's own error, as before.
* ``join(field, piece)``: a text piece of one field (the text, the reasoning,
  one call's arguments) as it may be delivered: a high half at its end is held
  back until the next piece of the same field, whose low half completes it;
  any half left without its partner becomes U+FFFD. Only events that took the
  slow path (or a field with a half held) are looked at, so a stream without
  split pairs costs one attribute check per piece.
* ``close(field)`` (a call completed) and ``rest()`` (the stream finished):
  a half still held is delivered as U+FFFD, never lost.
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable
from typing import Generic, TypeVar

import msgspec

from streamtools.model import CallChunk, Chunk, ReasoningChunk, TextChunk
from streamtools.results import valid_text

__all__ = ["REASONING", "TEXT", "SurrogatePairs", "arguments"]

T = TypeVar("T")

# a JSON escape of a UTF-16 surrogate half (D800-DFFF)
_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_REPLACEMENT = "\ufffd"


class SurrogatePairs(Generic[T]):
    """Split surrogate pairs of one stream; see the module docstring."""

    def __init__(self, decoder: msgspec.json.Decoder[T], kind: type[T]) -> None:
        self._decoder = decoder
        self._kind = kind
        self._slow = False  # the current event was decoded by the slow path
        self._held: dict[Hashable, str] = {}  # field -> its trailing high half

    def decode(self, data: str) -> T:
        try:
            event = self._decoder.decode(data)
        except msgspec.DecodeError as exc:
            if not _ESCAPE.search(data):
                raise
            try:
                loose = json.loads(data)
            except ValueError:
                raise exc from None  # malformed for another reason: the decoder's message
            self._slow = True
            return msgspec.convert(loose, self._kind)
        self._slow = False
        return event

    def join(self, field: Hashable, piece: str) -> str:
        """``piece`` as it may go out now ("" when it was only a held half)."""
        if not (self._slow or self._held):
            return piece
        text = self._held.pop(field, "") + piece
        if text and "\ud800" <= text[-1] <= "\udbff":
            self._held[field] = text[-1]
            text = text[:-1]
        return valid_text(text)  # pairs joined, a lone half U+FFFD

    def close(self, field: Hashable) -> str:
        """U+FFFD if ``field`` ends with a half held, else ""."""
        return _REPLACEMENT if self._held.pop(field, None) else ""

    def rest(self) -> list[Chunk]:
        """At the end of the stream: a U+FFFD for each field left with a half
        (``TEXT``, ``REASONING``, or a call's ``arguments(index)``)."""
        out: list[Chunk] = []
        for field in list(self._held):
            lost = self.close(field)
            if field == TEXT:
                out.append(TextChunk(text=lost))
            elif field == REASONING:
                out.append(ReasoningChunk(text=lost))
            elif isinstance(field, tuple):
                out.append(CallChunk(index=field[1], arguments=lost))
        return out


# the fields of a stream whose pieces are joined
TEXT = "text"
REASONING = "reasoning"


def arguments(index: int) -> tuple[str, int]:
    """The field of the arguments of the call at ``index``."""
    return ("arguments", index)
