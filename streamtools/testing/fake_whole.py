"""``FakeServer``'s answers to requests that do not ask for a stream.

Theory of operation
-------------------
The APIs stream only when asked: OpenAI's and Anthropic's when the body says
``"stream": true``, Ollama's unless it says ``"stream": false``. Otherwise the
answer is one JSON object: a ``chat.completion``, a ``message``, a ``done``
record. ``FakeServer`` builds it from the same provider-neutral chunks it would
have streamed (``fake_wire``: a scripted ``Reply``'s or a recording's), folded
into the wire's shape (``whole``): the text joined, the reasoning as each API
gives it (OpenAI-style: in the server's ``reasoning_field``, OpenRouter's
``reasoning_details`` as whole blocks; thinking blocks with their signatures;
``thinking``), the calls with their arguments whole (an object where the API
sends one), the usage and the finish reason as the stream would have said them.
An error finish is the status a server answers a failed generation with (500,
with the wire's error body), since no stream can carry it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from streamtools.model import CallChunk, Chunk, FinishChunk, ReasoningChunk, TextChunk, UsageChunk
from streamtools.testing.fake_wire import (
    ANTHROPIC_STOP,
    ReasoningField,
    Wire,
    anthropic_input,
    anthropic_output,
    error_body,
    json_text,
    named_calls,
    openai_usage,
)

__all__ = ["streams", "whole"]


def streams(wire: Wire, body: dict[str, Any]) -> bool:
    """Whether a request with ``body`` asks ``wire`` for a stream."""
    if wire == "ollama":
        return body.get("stream", True) is not False
    return body.get("stream") is True


class _Folded:
    """The chunks of one answer, gathered."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        # thinking blocks (Anthropic): (text, signature or None, redacted data or None)
        self.blocks: list[tuple[str, str | None, str | None]] = []
        self.calls: list[dict[str, Any]] = []  # id, name, arguments (text)
        self.usage = UsageChunk()
        self.finish = FinishChunk(reason="stop")
        open_thought: list[str] = []
        for c in chunks:
            if isinstance(c, TextChunk):
                self.text.append(c.text)
            elif isinstance(c, ReasoningChunk):
                self.reasoning.append(c.text)
                if c.redacted is not None:
                    self.blocks.append(("", None, c.redacted))
                    continue
                open_thought.append(c.text)
                if c.signature is not None:
                    self.blocks.append(("".join(open_thought), c.signature, None))
                    open_thought = []
            elif isinstance(c, CallChunk):
                if c.name is not None or not self.calls or self.calls[-1]["index"] != c.index:
                    self.calls.append({"index": c.index, "id": c.id, "name": c.name or ""})
                    self.calls[-1]["arguments"] = ""
                call = self.calls[-1]
                call["id"] = call["id"] or c.id
                call["arguments"] += c.arguments
            elif isinstance(c, UsageChunk):
                self.usage = c
            elif isinstance(c, FinishChunk):
                self.finish = c
        if open_thought:  # unsigned reasoning left at the end
            self.blocks.append(("".join(open_thought), None, None))


def whole(
    wire: Wire,
    chunks: Sequence[Chunk],
    body: dict[str, Any],
    *,
    reasoning_field: ReasoningField = "reasoning_content",
) -> tuple[int, str]:
    """The status and JSON body of ``wire``'s whole answer made of ``chunks``
    (``reasoning_field``: where the ``openai`` wire puts reasoning)."""
    folded = _Folded(named_calls(chunks))
    if folded.finish.reason == "error":
        return 500, error_body(wire, 500, folded.finish.message or "generation failed")
    if wire == "openai":
        return 200, json_text(_openai(folded, body, reasoning_field))
    make = {"anthropic": _anthropic, "ollama": _ollama}[wire]
    return 200, json_text(make(folded, body))


def _openrouter_details(f: _Folded) -> list[dict[str, Any]]:
    """The reply's reasoning blocks as OpenRouter's whole answer lists them."""
    out: list[dict[str, Any]] = []
    for index, (text, signature, redacted) in enumerate(f.blocks):
        if redacted is not None:
            out.append({"type": "reasoning.encrypted", "data": redacted, "format": "unknown"})
        else:
            out.append({"type": "reasoning.text", "text": text, "format": "unknown"})
            if signature is not None:
                out[-1]["signature"] = signature
        out[-1]["index"] = index
    return out


def _openai(f: _Folded, body: dict[str, Any], field: ReasoningField) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": "".join(f.text)}
    if f.calls:
        message["tool_calls"] = [
            {
                "id": call["id"] or f"call_{n}",
                "type": "function",
                "function": {"name": call["name"], "arguments": call["arguments"]},
            }
            for n, call in enumerate(f.calls)
        ]
        message["content"] = message["content"] or None  # calls only: null, as OpenAI
    if f.reasoning and field == "reasoning_details":
        message["reasoning"] = "".join(f.reasoning) or None
        message["reasoning_details"] = _openrouter_details(f)
    elif f.reasoning:
        message[field] = "".join(f.reasoning)
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": f.finish.reason}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "fake"),
        "choices": [choice],
        "usage": openai_usage(f.usage),
    }


def _anthropic(f: _Folded, body: dict[str, Any]) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for text, signature, redacted in f.blocks:
        if redacted is not None:
            content.append({"type": "redacted_thinking", "data": redacted})
        else:
            content.append(
                {"type": "thinking", "thinking": text, "signature": signature or "fake-signature"}
            )
    if f.text:
        content.append({"type": "text", "text": "".join(f.text)})
    for n, call in enumerate(f.calls):
        tool = {"type": "tool_use", "id": call["id"] or f"toolu_{n}", "name": call["name"]}
        content.append({**tool, "input": json.loads(call["arguments"] or "{}")})
    stop = f.finish.stop_sequence
    reason = "stop_sequence" if stop else ANTHROPIC_STOP.get(f.finish.reason, f.finish.reason)
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "fake"),
        "content": content,
        "stop_reason": reason,
        "stop_sequence": stop,
        "usage": {**anthropic_input(f.usage), **anthropic_output(f.usage)},
    }


def _ollama(f: _Folded, body: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": "".join(f.text)}
    if f.reasoning:
        message["thinking"] = "".join(f.reasoning)
    if f.calls:
        message["tool_calls"] = [
            {"function": {"name": call["name"], "arguments": json.loads(call["arguments"] or "{}")}}
            for call in f.calls
        ]
    return {
        "model": body.get("model", "fake"),
        "created_at": "2026-01-01T00:00:00Z",
        "message": message,
        "done": True,
        "done_reason": "length" if f.finish.reason == "length" else "stop",
        "total_duration": 1000,
        "prompt_eval_count": f.usage.input_tokens or 0,
        "eval_count": f.usage.output_tokens or 0,
    }
