"""Our events as the Vercel AI SDK "UI message stream" (protocol v1).

Theory of operation
-------------------
The AI SDK's ``useChat`` reads a server-sent event stream whose ``data:``
lines are JSON "chunks" (``start``, ``start-step``, ``text-delta``,
``tool-input-start`` …) and ends with ``data: [DONE]``; the response carries
the header ``x-vercel-ai-ui-message-stream: v1``. ``UIMessageStreamEncoder``
is a sans-IO translator from our ``Event`` union to those chunks: one event
in, a list of chunk dicts out, with all state (which text part is open, which
tool call ids are known) kept inside, so that the output is valid for the
client's reader whatever order the agent produced events in.

Mapping, and why:

- ``TurnStart``/``TurnEnd`` are the SDK's steps (``start-step`` /
  ``finish-step``): one model call each. A stream with no turn events (a bare
  parser's output) gets one implicit step, closed at ``Finish``.
- Text and reasoning are *parts* with ids: ``text-start`` opens one,
  ``text-delta`` appends, ``text-end`` closes it. A part is closed as soon as
  something else (a call, reasoning, the end of the turn) comes between, so
  that the client keeps text and tool cards in the order they happened.
- A call: ``CallStart`` -> ``tool-input-start``, ``ArgsDelta`` ->
  ``tool-input-delta`` (the SDK parses the partial JSON itself, which is why
  our append-only argument deltas matter), ``CallEnd`` ->
  ``tool-input-available``; ``ToolResult`` -> ``tool-output-available``;
  ``ToolFailed`` -> ``tool-output-error``. A ``CallError`` (the model wrote a
  malformed or unknown call) becomes ``tool-input-error`` carrying the model's
  raw text and the message the model is told.
- ``am_xml``'s ``<am:request_tools>`` (the model asking for the full
  definitions of tools it knows in summary) is reported by the parser as a
  call named ``am:request_tools``, but it is no tool run: the runtime answers
  it by offering the tools, with no result event. As a card it stayed
  "running" after the answer ended, and came back in the history as a call of
  a tool that does not exist; its events are not sent (as ``HybridAgent``
  does not show its ``select_tools`` call).
- ``StreamError`` -> ``error``, but only when the stream ends: an ``error``
  chunk is the end of the answer for the SDK's chat (it throws there, stops
  reading and aborts the request, which cancels the agent), while an agent
  goes on after a model stream that failed once its calls were complete (it
  runs them and starts the next turn). So the error is held; a ``TurnStart``
  (the agent went on) drops it, and ``close`` sends it (with the open calls
  ended first, as below) when nothing came after it, unless ``close`` has an
  error of its own (the agent failed: its message says the same).
- A ``ReasoningDelta``'s ``origin`` (the server and model that streamed a
  native reply's reasoning, and its wire field: ``ReasoningOrigin``) goes on
  its ``reasoning-delta`` as ``providerMetadata: {"streamtools":
  {"reasoningOrigin": {"field", "server"}}}``, which the SDK keeps on the
  UI message's reasoning part (ai 5 and 6) and so sends back with the
  history: ``messages`` reads it into the reply, and ``OpenAIChat`` gives the
  reasoning back to that server (DeepSeek's and Kimi's thinking modes refuse
  the next request, 400, when a past reply with tool calls lacks it).
- ``ReasoningRetracted`` (a ``think_open`` reply that skipped its thinking:
  the reasoning it streamed was its answer, which follows as text) has no
  counterpart either: the protocol cannot take a part back. It is a transient
  data part, ``{"type": "data-reasoning-retracted", "data": {"ids": [...],
  "text": ...}, "transient": true}``, after the step's reasoning parts are
  ended: ``ids`` are the ``reasoning-start`` ids of the step's reasoning, and
  ``text`` is that reasoning, by which a ``useChat`` client (whose message
  parts keep no chunk id) finds the part in its ``onData``. Transient, it is
  not added to the message; the chat page drops those parts, so the answer is
  not shown twice. A client that ignores it shows the text as reasoning and
  as the answer.
- ``ToolProgress`` (a running tool said how far it has come) ->
  ``data-tool-progress``, a *transient* data part (``"transient": true``, in
  the SDK since ai 5.0): ``{"toolCallId", "toolName", "progress"}``, with
  ``"total"`` and ``"message"`` when the tool gave them, as its ``data`` and the
  call's id as its ``id``. The SDK hands a transient part to ``useChat``'s
  ``onData`` and never adds it to the message, so progress is shown while the
  call runs and neither kept nor sent back with the history; the chat page
  shows it on the call's card. It leaves open text parts open (it is no part of
  the message), and is dropped for a call that is unknown or already has its
  output.
- ``Usage``, ``Retry`` and ``Final`` have no counterpart and are dropped
  (``Final``'s text was already streamed).
- ``close(error=…)``, the stream ending because the agent failed or was
  stopped: each call still open (its arguments streaming, or its tool
  running) gets a ``tool-output-error`` first, since no output will ever
  come for it and a client would otherwise show it running forever. A
  stream that ends without an error leaves open calls as they are: a bare
  parser's calls are for the client to run.

Tools run on the server and the browser has no type for them, so tool chunks
are marked ``dynamic`` (the SDK's ``dynamic-tool`` parts, as for MCP tools);
pass ``dynamic_tools=False`` for ``tool-<name>`` parts instead.

Call ids are unique per parser (``call_0`` …) and a new turn may reuse them;
in one UI message they must be unique, so a reused id gets a ``-<n>`` suffix.

Only fields present since ai 5.0 are written: that version validates chunks
with strict schemas and rejects unknown keys. One exception: ``finish``
carries ``finishReason``, which the SDK hands to ``useChat``'s ``onFinish``
(ai 6, and ai 5 since 5.0.92): the last model reply's reason in the SDK's
words (``stop``, ``length``, ``tool-calls``, ``content-filter``, ``error``,
``other``), ``error`` when the stream ends with an error, left out when no
reply finished. ``finish_reason=False`` leaves it out for an older ai 5 client.
"""

from __future__ import annotations

from typing import Any, assert_never

import msgspec

from streamtools.events import (
    ArgsDelta,
    CallEnd,
    CallError,
    CallStart,
    Event,
    Final,
    Finish,
    ReasoningDelta,
    ReasoningRetracted,
    Retry,
    StreamError,
    TextDelta,
    ToolFailed,
    ToolProgress,
    ToolResult,
    TurnEnd,
    TurnStart,
    Usage,
)
from streamtools.model import ReasoningOrigin
from streamtools.parser.request_tools import REQUEST_NAME
from streamtools.results import encode_json

__all__ = [
    "RETRACTED",
    "UI_MESSAGE_STREAM_HEADERS",
    "UIMessageStreamEncoder",
    "encode_ui_chunk",
    "origin_metadata",
    "METADATA_KEY",
    "UI_DONE",
]

UIChunk = dict[str, Any]

# The headers the AI SDK's own server helpers send; the last disables nginx buffering.
UI_MESSAGE_STREAM_HEADERS: dict[str, str] = {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "connection": "keep-alive",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",
}

UI_DONE = b"data: [DONE]\n\n"

METADATA_KEY = "streamtools"  # ours in a part's providerMetadata
RETRACTED = "data-reasoning-retracted"  # a ``ReasoningRetracted``'s chunk type

# our Finish reasons (the providers' words) -> the SDK's FinishReason; any other is "other"
_FINISH_REASONS = {
    "stop": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "length": "length",
    "max_tokens": "length",
    "tool_calls": "tool-calls",
    "tool_use": "tool-calls",
    "function_call": "tool-calls",
    "content_filter": "content-filter",
    "error": "error",
}


def origin_metadata(origin: ReasoningOrigin) -> dict[str, Any]:
    """A reply's ``ReasoningOrigin`` as a reasoning part's ``providerMetadata``
    (see the module docstring; ``messages`` reads it back)."""
    return {METADATA_KEY: {"reasoningOrigin": {"field": origin.field, "server": origin.server}}}


def encode_ui_chunk(chunk: UIChunk) -> bytes:
    """One chunk as an SSE message (msgspec JSON never contains a raw newline).

    Text UTF-8 cannot carry (a lone surrogate half, from a model or source of
    the user's own: the providers and tool results never hold one) is written
    as U+FFFD: raised here, it ended the answer as an internal error, with the
    encoder's state already ahead of what the client got (a ``text-end`` for a
    part it never saw, which the SDK's reader refuses)."""
    return b"data: " + encode_json(chunk) + b"\n\n"


class _Call(msgspec.Struct):
    ui_id: str
    name: str
    closed: bool = False  # an output or error was sent; later events are ignored


class UIMessageStreamEncoder:
    """Translate our events into UI message stream chunks (sans-IO)."""

    def __init__(
        self,
        *,
        message_id: str | None = None,
        dynamic_tools: bool = True,
        finish_reason: bool = True,
    ) -> None:
        self._message_id = message_id
        self._dynamic = dynamic_tools
        self._send_reason = finish_reason
        self._finish_reason: str | None = None  # the last model reply's, in the SDK's words
        self._started = False
        self._ended = False
        self._step_open = False
        self._implicit_step = False
        self._text_id: str | None = None
        self._reasoning_id: str | None = None
        self._step_reasoning: list[str] = []  # the ids of this step's reasoning parts
        self._parts = 0
        self._calls: dict[str, _Call] = {}  # our id -> state, for the current turn
        self._previous: dict[str, _Call] = {}  # the same for earlier turns
        self._used_ids: set[str] = set()  # ui ids used anywhere in this message
        self._stream_error: str | None = None  # held until the stream ends (see above)

    # -- public API --------------------------------------------------------------

    def start(self) -> list[UIChunk]:
        """The opening ``start`` chunk (also emitted implicitly by ``encode``)."""
        if self._started:
            return []
        self._started = True
        chunk: UIChunk = {"type": "start"}
        if self._message_id is not None:
            chunk["messageId"] = self._message_id
        return [chunk]

    def encode(self, event: Event) -> list[UIChunk]:
        """Chunks for one event, in order."""
        out = self.start()
        if isinstance(event, CallStart | CallEnd | CallError) and event.name == REQUEST_NAME:
            return out  # plumbing, not a tool run (see the module docstring)
        match event:
            case TurnStart():
                self._stream_error = None  # the agent went on after it
                out += self._end_step()
                out.append({"type": "start-step"})
                self._step_open, self._implicit_step = True, False
                self._step_reasoning.clear()
                self._new_step_calls()
            case TurnEnd():
                out += self._end_step()
            case TextDelta(text=text):
                if text:
                    out += self._ensure_step() + self._end_reasoning()
                    if self._text_id is None:
                        self._text_id = self._part_id("text")
                        out.append({"type": "text-start", "id": self._text_id})
                    out.append({"type": "text-delta", "id": self._text_id, "delta": text})
            case ReasoningDelta(text=text, origin=origin):
                if text:
                    out += self._ensure_step() + self._end_text()
                    if self._reasoning_id is None:
                        self._reasoning_id = self._part_id("reasoning")
                        out.append({"type": "reasoning-start", "id": self._reasoning_id})
                    part = self._reasoning_id
                    if part not in self._step_reasoning:
                        self._step_reasoning.append(part)
                    chunk: UIChunk = {"type": "reasoning-delta", "id": part, "delta": text}
                    if origin is not None:  # kept on the part, for the history sent back
                        chunk["providerMetadata"] = origin_metadata(origin)
                    out.append(chunk)
            case CallStart(id=call_id, name=name):
                out += self._ensure_step() + self._end_parts()
                if call_id not in self._calls:
                    out += self._open_call(call_id, name)
            case ArgsDelta(id=call_id, delta=delta):
                call = self._calls.get(call_id)
                if call is not None and not call.closed and delta:
                    out.append(
                        {
                            "type": "tool-input-delta",
                            "toolCallId": call.ui_id,
                            "inputTextDelta": delta,
                        }
                    )
            case CallEnd(id=call_id, name=name, arguments=arguments):
                out += self._ensure_step() + self._end_parts()
                if call_id not in self._calls:
                    out += self._open_call(call_id, name)
                out.append(self._tool_chunk("tool-input-available", call_id, input=arguments))
            case CallError(id=call_id, name=name, raw=raw, message=message):
                out += self._ensure_step() + self._end_parts()
                out += self._call_error(call_id, name or "unknown", raw, message)
            case ToolResult(id=call_id, name=name, content=content):
                out += self._ensure_step() + self._end_parts()
                call = self._known(call_id)
                if call is None:
                    # A result for a call we never saw: show the call first.
                    out += self._open_call(call_id, name)
                    out.append(self._tool_chunk("tool-input-available", call_id, input={}))
                    call = self._calls[call_id]
                out += self._output(call, "tool-output-available", output=content)
            case ToolFailed(id=call_id, name=name, message=message):
                out += self._ensure_step() + self._end_parts()
                found = self._known(call_id)
                if found is None:
                    out += self._call_error(call_id, name, None, message)
                else:
                    out += self._output(found, "tool-output-error", errorText=message)
            case Finish(reason=reason):
                self._finish_reason = _FINISH_REASONS.get(reason, "other")
                out += self._end_parts()
                if self._implicit_step:
                    out += self._end_step()
            case StreamError(kind=kind, message=message):
                out += self._end_parts()
                self._stream_error = f"{kind}: {message}"
            case ReasoningRetracted(text=text):
                # the step's reasoning was its answer (see the module docstring)
                out += self._end_parts()
                data = {"ids": list(self._step_reasoning), "text": text}
                out.append({"type": RETRACTED, "data": data, "transient": True})
                self._step_reasoning.clear()
            case ToolProgress():
                out += self._progress(event)
            case Usage() | Retry() | Final():
                pass
            case _:
                assert_never(event)
        return out

    def close(self, *, error: str | None = None) -> list[UIChunk]:
        """Close whatever is open, optionally report ``error``, and ``finish``."""
        if self._ended:
            return []
        out = self.start()
        if error is None:
            error = self._stream_error
        if error is not None:
            out += self._end_parts() + self._abandon_calls(error)
        out += self._end_step()
        finish: UIChunk = {"type": "finish"}
        if error is not None:
            out.append({"type": "error", "errorText": error})
            self._finish_reason = "error"
        if self._send_reason and self._finish_reason is not None:
            finish["finishReason"] = self._finish_reason
        out.append(finish)
        self._ended = True
        return out

    # -- internals ----------------------------------------------------------------

    def _part_id(self, kind: str) -> str:
        self._parts += 1
        return f"{kind}-{self._parts}"

    def _flags(self, chunk: UIChunk) -> UIChunk:
        if self._dynamic:
            chunk["dynamic"] = True
        return chunk

    def _tool_chunk(self, kind: str, call_id: str, **fields: Any) -> UIChunk:
        call = self._calls[call_id]
        return self._flags(
            {"type": kind, "toolCallId": call.ui_id, "toolName": call.name, **fields}
        )

    def _output(self, call: _Call, kind: str, **fields: Any) -> list[UIChunk]:
        """The call's one output chunk (``tool-output-available`` or
        ``tool-output-error``); nothing once it has had one."""
        if call.closed:
            return []
        call.closed = True
        return [self._flags({"type": kind, "toolCallId": call.ui_id, **fields})]

    def _progress(self, event: ToolProgress) -> list[UIChunk]:
        """A running call's ``data-tool-progress`` (see the module docstring)."""
        call = self._known(event.id)
        if call is None or call.closed:
            return []
        data: dict[str, Any] = {
            "toolCallId": call.ui_id, "toolName": call.name, "progress": event.progress,
        }
        if event.total is not None:
            data["total"] = event.total
        if event.message is not None:
            data["message"] = event.message
        return [{"type": "data-tool-progress", "id": call.ui_id, "data": data, "transient": True}]

    def _open_call(self, call_id: str, name: str) -> list[UIChunk]:
        ui_id, n = call_id, 1
        while ui_id in self._used_ids:
            n += 1
            ui_id = f"{call_id}-{n}"
        self._used_ids.add(ui_id)
        self._calls[call_id] = _Call(ui_id=ui_id, name=name)
        return [self._tool_chunk("tool-input-start", call_id)]

    def _call_error(self, call_id: str, name: str, raw: str | None, message: str) -> list[UIChunk]:
        out: list[UIChunk] = []
        call = self._calls.get(call_id)
        if call is None:
            out += self._open_call(call_id, name)
            call = self._calls[call_id]
        if call.closed:
            return out
        call.closed = True
        out.append(self._tool_chunk("tool-input-error", call_id, input=raw, errorText=message))
        return out

    def _abandon_calls(self, error: str) -> list[UIChunk]:
        text = f"stopped before it finished: {error}"
        out: list[UIChunk] = []
        for call in [*self._previous.values(), *self._calls.values()]:
            out += self._output(call, "tool-output-error", errorText=text)
        return out

    def _ensure_step(self) -> list[UIChunk]:
        if self._step_open:
            return []
        self._step_open = self._implicit_step = True
        self._new_step_calls()
        return [{"type": "start-step"}]

    def _new_step_calls(self) -> None:
        # A new turn may reuse call ids; a late result (a bare stream's implicit
        # step closed at Finish) still finds its call in the step before.
        self._previous = {**self._previous, **self._calls}
        self._calls = {}

    def _known(self, call_id: str) -> _Call | None:
        return self._calls.get(call_id) or self._previous.get(call_id)

    def _end_step(self) -> list[UIChunk]:
        out = self._end_parts()
        if self._step_open:
            out.append({"type": "finish-step"})
            self._step_open = self._implicit_step = False
        return out

    def _end_text(self) -> list[UIChunk]:
        if self._text_id is None:
            return []
        chunk: UIChunk = {"type": "text-end", "id": self._text_id}
        self._text_id = None
        return [chunk]

    def _end_reasoning(self) -> list[UIChunk]:
        if self._reasoning_id is None:
            return []
        chunk: UIChunk = {"type": "reasoning-end", "id": self._reasoning_id}
        self._reasoning_id = None
        return [chunk]

    def _end_parts(self) -> list[UIChunk]:
        return self._end_text() + self._end_reasoning()
