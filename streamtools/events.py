"""The events streamtools produces: data only.

Theory of operation
-------------------
Every layer speaks in these events. The parser turns a model's text into the
first seven (``TextDelta`` … ``Finish``); the runtime adds its own
(``ToolResult`` … ``Final``) to the same union, so one consumer (a terminal,
a browser, a proxy, a test) handles one stream whatever produced it.

Events are frozen, keyword-only msgspec Structs tagged by a ``type`` field,
so a transcript of events encodes to JSON and decodes back to the same
objects (``encode_events`` / ``decode_event``). Dispatch with ``match`` on the
class and ``typing.assert_never`` on the union.

Events that hold only strings and numbers are declared ``gc=False``: they
can never be part of a reference cycle, and skipping the cycle collector's
bookkeeping makes the hot path (one ``TextDelta`` per token) cheaper.

Call identity: ``index`` counts the calls of one model reply from 0 in the
order their ``CallStart`` (or ``CallError``) was emitted; ``id`` is the
provider's id in native mode, otherwise one the parser generates
(``call_<n>``), unique within a parser.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

import msgspec

from streamtools.model import ReasoningOrigin, UsageChunk
from streamtools.results import decode_json, encode_json, valid_text

__all__ = [
    "ArgsDelta",
    "CallEnd",
    "CallError",
    "CallErrorReason",
    "CallStart",
    "Event",
    "Final",
    "Finish",
    "ParserEvent",
    "ReasoningDelta",
    "ReasoningRetracted",
    "Retry",
    "RetryReason",
    "StreamError",
    "StreamErrorKind",
    "TextDelta",
    "ToolFailed",
    "ToolFailedKind",
    "ToolProgress",
    "ToolResult",
    "TurnEnd",
    "TurnEndReason",
    "TurnStart",
    "Usage",
    "decode_event",
    "encode_events",
]


# The machine-readable codes of the events below: each Literal lists every value
# the package emits (tests/test_api_s19_event_literals.py scans for them, and
# ``mypy --strict`` refuses any other), so a consumer can match them with
# ``assert_never``. A new code is added here first. Decoding refuses a code not
# listed. ``Finish.reason`` is not one: it is the provider's word, passed on.
CallErrorReason = Literal[
    "invalid_json", "unknown_tool", "invalid_arguments", "unterminated", "malformed"
]
TurnEndReason = Literal["tool_calls", "final", "retry", "error"]
ToolFailedKind = Literal[
    "exception", "timeout", "invalid_arguments", "unknown_tool", "refused", "unencodable_result"
]
RetryReason = Literal["call_error", "refusal", "missing_call", "empty_reply", "repeated_call"]
# the runtime's (``stream``: an error finish, ``pause``), ``streamtools replay``'s
# (``provider``), the UI server's (``server``) and the proxy's wire-neutral kinds
# (an upstream's refusal or failure, a call the model could not write)
StreamErrorKind = Literal[
    "stream", "pause", "provider", "server", "upstream", "context_length", "malformed_call",
    "invalid_request", "authentication", "billing", "permission", "not_found", "too_large",
    "rate_limit", "timeout", "overloaded",
]


class _Event(msgspec.Struct, tag_field="type", frozen=True, kw_only=True):
    """Base of every event; not itself part of the union."""


# --- parser events -----------------------------------------------------------


class TextDelta(_Event, tag="text", frozen=True, kw_only=True, gc=False):
    """Visible text, released as soon as it cannot start a marker."""

    text: str


class ReasoningDelta(
    _Event, tag="reasoning", frozen=True, kw_only=True, gc=False, omit_defaults=True
):
    """Model reasoning (``<think>`` content or a provider's reasoning channel).
    ``origin``: where the reply's reasoning came from (``ReasoningOrigin``), on
    the delta of the chunk that said so (a native reply's first), for a client
    that keeps the history (the UI's) to hand back with it."""

    text: str
    origin: ReasoningOrigin | None = None


class CallStart(_Event, tag="call_start", frozen=True, kw_only=True, gc=False):
    """A tool call began; emitted as soon as the tool's name is known."""

    index: int
    id: str
    name: str


class ArgsDelta(_Event, tag="args_delta", frozen=True, kw_only=True, gc=False):
    """A fragment of the call's arguments as JSON text; fragments only append."""

    index: int
    id: str
    delta: str


class CallEnd(_Event, tag="call_end", frozen=True, kw_only=True, omit_defaults=True):
    """A complete, well-formed call. ``raw`` is the exact text the model wrote for it.
    ``extra``: what a native API attached to the call and needs back with it
    (``CallChunk.extra``), else None."""

    index: int
    id: str
    name: str
    arguments: dict[str, Any]
    raw: str
    extra: dict[str, Any] | None = None


class CallError(_Event, tag="call_error", frozen=True, kw_only=True):
    """A call that could not be completed.

    ``reason`` is a short machine-readable code (``CallErrorReason``:
    ``invalid_json``, ``unknown_tool``, ``invalid_arguments``, ``unterminated``,
    ``malformed``);
    ``message`` tells the model what to fix; ``raw`` keeps the text as written.
    """

    index: int
    id: str
    name: str | None
    raw: str
    reason: CallErrorReason
    message: str


class Finish(_Event, tag="finish", frozen=True, kw_only=True, gc=False):
    """End of one model reply: ``reason`` as the provider said (``stop``, ``length``,
    ``tool_calls``, ``content_filter``, ``error``, …; a plain ``str``: a server's
    own word passes through) and the stop sequence that ended it, if any."""

    reason: str
    stop_sequence: str | None = None


# --- runtime events ------------------------------------------------------------


class TurnStart(_Event, tag="turn_start", frozen=True, kw_only=True, gc=False):
    """The runtime is about to call the model for turn ``turn`` (from 1)."""

    turn: int


class TurnEnd(_Event, tag="turn_end", frozen=True, kw_only=True, gc=False):
    """A turn finished: ``reason`` (``TurnEndReason``) is ``tool_calls`` (another
    turn follows), ``final`` (the answer is complete), ``retry`` or ``error``."""

    turn: int
    reason: TurnEndReason


class ToolResult(_Event, tag="tool_result", frozen=True, kw_only=True):
    """A tool returned; ``content`` is the text sent back to the model."""

    index: int
    id: str
    name: str
    content: str


class ToolFailed(_Event, tag="tool_failed", frozen=True, kw_only=True):
    """A tool could not produce a result; ``message`` is what the model is told.

    ``kind`` (``ToolFailedKind``): ``exception``, ``timeout``, ``invalid_arguments``,
    ``unknown_tool``, ``refused`` (a repeated call stopped by the runtime),
    ``unencodable_result`` (the tool ran but its value could not be turned into text).
    """

    index: int
    id: str
    name: str
    kind: ToolFailedKind
    message: str


class ToolProgress(
    _Event, tag="tool_progress", frozen=True, kw_only=True, gc=False, omit_defaults=True
):
    """A running tool said how far it has come: ``progress`` so far, of ``total``
    when it knows it (None: it does not), with its own ``message``. Sent between
    the call's ``CallEnd`` and its ``ToolResult`` or ``ToolFailed``, and only there;
    a tool that reports faster than the events are read has only its latest report
    sent. For display only: the model and the transcript never see it. From an MCP
    server's ``notifications/progress``, or a tool's own ``call_progress().report``
    (``streamtools.runtime.progress``)."""

    index: int
    id: str
    name: str
    progress: float
    total: float | None = None
    message: str | None = None


class Retry(_Event, tag="retry", frozen=True, kw_only=True):
    """The runtime re-prompts the model: ``reason`` (``RetryReason``) is ``call_error``,
    ``refusal``, ``missing_call``, ``empty_reply`` or ``repeated_call``."""

    turn: int
    reason: RetryReason
    message: str


class Usage(_Event, tag="usage", frozen=True, kw_only=True, gc=False, omit_defaults=True):
    """Token usage reported by the provider for one model request. Every field
    is None when the server said nothing of it (not 0, which it may say).

    ``input_tokens`` counts all the input, what was read from or written to a
    prompt cache included (as OpenAI's ``prompt_tokens`` does; Anthropic's
    ``input_tokens``, which leaves the cached tokens out, is added to its two
    cache counts). ``cache_read_tokens`` is the part of it read from the
    provider's prompt cache (OpenAI's ``cached_tokens``, Anthropic's
    ``cache_read_input_tokens``), ``cache_write_tokens`` the part written to it
    (Anthropic's ``cache_creation_input_tokens``; OpenAI reports none).
    ``reasoning_tokens`` is the part of ``output_tokens`` spent on reasoning
    (OpenAI's ``reasoning_tokens``, Anthropic's ``thinking_tokens``).

    ``plus`` adds two, field by field: None and n make n, None and None stay
    None (``RunResult.usage`` totals a run's requests so)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None

    @classmethod
    def of(cls, chunk: UsageChunk) -> Usage:
        """The event for a provider's ``UsageChunk``: the same counts."""
        return cls(
            input_tokens=chunk.input_tokens,
            output_tokens=chunk.output_tokens,
            cache_read_tokens=chunk.cache_read_tokens,
            cache_write_tokens=chunk.cache_write_tokens,
            reasoning_tokens=chunk.reasoning_tokens,
        )

    def plus(self, other: Usage) -> Usage:
        """The sum of the two, field by field (see the class docstring)."""
        return Usage(
            input_tokens=_plus(self.input_tokens, other.input_tokens),
            output_tokens=_plus(self.output_tokens, other.output_tokens),
            cache_read_tokens=_plus(self.cache_read_tokens, other.cache_read_tokens),
            cache_write_tokens=_plus(self.cache_write_tokens, other.cache_write_tokens),
            reasoning_tokens=_plus(self.reasoning_tokens, other.reasoning_tokens),
        )


def _plus(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    return a if b is None else a + b


class StreamError(_Event, tag="error", frozen=True, kw_only=True):
    """The model stream failed (cut, provider error); ``kind`` names the failure
    (``StreamErrorKind``)."""

    kind: StreamErrorKind
    message: str


class ReasoningRetracted(_Event, tag="reasoning_retracted", frozen=True, kw_only=True):
    """The reasoning this reply streamed so far (``text``: its ``ReasoningDelta``
    texts joined) was its answer, which follows as ``TextDelta`` (and calls).
    With ``think_open`` (the chat template opened ``<think>``) a reply is read
    as reasoning until ``</think>``; one that finishes without it was a model
    that skipped its thinking, and is read again as text at its end
    (``runtime.decoders.TextReader``). A UI that showed that reasoning drops or
    collapses it here, so the text is not on screen twice; the transcript keeps
    it once, as the answer. Sent once, just before the answer's first event."""

    text: str


class Final(_Event, tag="final", frozen=True, kw_only=True):
    """The agent's final answer after ``turns`` model calls. ``truncated``: the
    reply was cut off at the output token limit (its finish was ``length``,
    ``max_tokens``), so ``text`` is its start only."""

    text: str
    turns: int
    truncated: bool = False


ParserEvent = TextDelta | ReasoningDelta | CallStart | ArgsDelta | CallEnd | CallError | Finish

Event = (
    TextDelta
    | ReasoningDelta
    | ReasoningRetracted
    | CallStart
    | ArgsDelta
    | CallEnd
    | CallError
    | Finish
    | TurnStart
    | TurnEnd
    | ToolResult
    | ToolFailed
    | ToolProgress
    | Retry
    | Usage
    | StreamError
    | Final
)

_decoder: msgspec.json.Decoder[Event] = msgspec.json.Decoder(Event)


def encode_events(events: Iterable[Event]) -> bytes:
    """Encode events as one JSON line each (a golden transcript). Text UTF-8
    cannot carry (a lone surrogate half: a scripted reply, a tool's text read
    with ``surrogateescape``) is written as U+FFFD, as ``Transcript.encode`` and
    the UI's event stream write it, not a ``UnicodeEncodeError``."""
    return b"".join(encode_json(e) + b"\n" for e in events)


def decode_event(line: bytes | str) -> Event:
    """Decode one JSON-encoded event back into its Struct. A lone surrogate half
    escaped in a JSON string (a JavaScript client's, cut inside an emoji) is
    read as U+FFFD, as ``encode_events`` writes one."""
    data = valid_text(line).encode() if isinstance(line, str) else bytes(line)
    return decode_json(_decoder.decode, data)
