"""OpenRouter's ``reasoning_details``: read from a stream, sent back with the calls.

Theory of operation
-------------------
OpenRouter streams a model's reasoning twice: as text (``delta.reasoning``) and
as structured ``delta.reasoning_details``, a list of ``reasoning.text``
(``text``, and for Anthropic a ``signature``), ``reasoning.summary``
(``summary``) and ``reasoning.encrypted`` (``data``: Gemini's and OpenAI's
opaque reasoning) entries, each with a ``format``, often an ``id`` and an
``index``. It asks clients to send them back, in order and unmodified, as the
``reasoning_details`` of the assistant message of a reply with tool calls:
signed and encrypted reasoning continues across the tool results only so
(Anthropic refuses thinking blocks that were changed, Gemini a call without
its thought signature).

A stream sends a ``reasoning.text`` block in fragments (the text in pieces,
the ``signature`` with the last): consecutive fragments of one ``index`` are
joined into the block they make, as a non-streamed answer holds it, until one
brings its signature; other entries are kept as they came (``ReasoningDetails``).

They travel on the reply's calls, as data the API attached to them (the
transcript keeps each call's ``extra``, and saves it): the entries so far go on
the next call chunk the stream yields (``CallChunk.extra`` under ``DETAILS``),
so each call carries those that came before it and the order of the calls is
their order. ``details_of`` gathers them again for the message. Entries after
the reply's last call, or in a reply without calls, are not kept.
"""

from __future__ import annotations

from typing import Any

from streamtools.model import ChatMessage
from streamtools.results import valid_text

__all__ = ["DETAILS", "ReasoningDetails", "details_of", "reasoning_text"]

#: the key of ``CallChunk.extra`` / ``NativeCall.extra`` that carries them
DETAILS = "reasoning_details"
_TEXT = "reasoning.text"


def reasoning_text(details: list[dict[str, Any]]) -> str:
    """The reasoning the entries show: their texts and summaries, in order."""
    pieces = [d.get("text") if d.get("type") == _TEXT else d.get("summary") for d in details]
    return "".join(piece for piece in pieces if isinstance(piece, str))


class ReasoningDetails:
    """The entries of one reply not yet on a call (see the module docstring)."""

    __slots__ = ("pending",)

    def __init__(self) -> None:
        self.pending: list[dict[str, Any]] = []

    def add(self, details: list[dict[str, Any]]) -> None:
        pending = self.pending
        for detail in details:
            if not isinstance(detail, dict):
                continue  # not an entry: nothing OpenRouter could read back
            last = pending[-1] if pending else None
            if (
                last is not None
                and detail.get("type") == _TEXT == last.get("type")
                and detail.get("index") == last.get("index")
                and last.get("signature") is None
            ):
                pending[-1] = _joined(last, detail)
            else:
                pending.append(detail)

    def take(self) -> list[dict[str, Any]]:
        """The entries not on a call yet (and now taken)."""
        taken = [_valid(d) for d in self.pending]
        self.pending.clear()
        return taken


def details_of(msg: ChatMessage) -> list[Any]:
    """The ``reasoning_details`` the message's calls carry, in their order."""
    out: list[Any] = []
    for call in msg.tool_calls:
        details = (call.extra or {}).get(DETAILS)
        if isinstance(details, list):
            out.extend(details)
    return out


def _joined(block: dict[str, Any], fragment: dict[str, Any]) -> dict[str, Any]:
    """A text block with its next fragment: the texts joined, fields it lacks filled in."""
    out = dict(block)
    for key, value in fragment.items():
        if key == "text":
            before = block.get("text")
            after = value if isinstance(value, str) else ""
            out["text"] = (before if isinstance(before, str) else "") + after
        elif out.get(key) is None:
            out[key] = value
    return out


def _valid(detail: dict[str, Any]) -> dict[str, Any]:
    """``detail`` with a text UTF-8 can carry: a surrogate pair split across two
    fragments joined, a lone half as U+FFFD (``results.valid_text``)."""
    text = detail.get("text")
    if isinstance(text, str) and (fixed := valid_text(text)) != text:
        return {**detail, "text": fixed}
    return detail
