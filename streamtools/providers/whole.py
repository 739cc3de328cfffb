"""Whole JSON answers as the stream their wire would have sent.

Theory of operation
-------------------
A provider asks for a stream (``stream: true``), but some servers and gateways
ignore it and answer 200 with the whole answer as ``application/json``. Each
function here takes such a body and gives the bytes of the equivalent stream
(or None if the body is not an answer of that wire: an error object, say), so
the provider reads it with the stream's own decoder and nothing downstream can
tell: the same chunks (reasoning, text, calls, usage, one finish), in the same
order a server streaming it would send them.

* ``chat_completion``: an OpenAI ``chat.completion`` becomes one
  ``chat.completion.chunk`` whose choices carry the message as their ``delta``
  (each tool call with its ``index``, which a delta needs and a message has
  not) with their ``finish_reason``, and the usage; then ``[DONE]``.
* ``message``: an Anthropic ``message`` becomes ``message_start``, each
  content block as ``content_block_start``, its delta (``text_delta``,
  ``thinking_delta`` then ``signature_delta``, ``input_json_delta``) and
  ``content_block_stop``, then ``message_delta`` (stop reason, output tokens)
  and ``message_stop``. A ``tool_use`` block's ``input`` goes on as the text
  it came as (``msgspec.Raw``), so numbers are not rewritten.

A UTF-8 byte-order mark before the JSON (a server whose text writer puts one
first) is dropped: the answer was refused as "expected text/event-stream".
A body that is not valid JSON is no answer (None), and so is one whose
strings hold bytes that are not UTF-8: msgspec raises ``UnicodeDecodeError``
for those, not ``DecodeError``, and it escaped ``model.stream`` as itself where
every other unreadable body is the provider's error.

Ollama needs nothing: a whole ``/api/chat`` answer is one JSON object with
``done: true``, which is already a one-line NDJSON stream (and one
pretty-printed over lines is joined by the NDJSON reader, ``ollama._Joined``).
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["chat_completion", "message"]

_encoder = msgspec.json.Encoder()
_BOM = b"\xef\xbb\xbf"  # a UTF-8 byte-order mark before the answer: no part of it


def chat_completion(raw: bytes) -> bytes | None:
    """A ``chat.completion`` body as its SSE stream, or None if it is not one."""
    try:
        answer = msgspec.json.decode(raw.removeprefix(_BOM))
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):  # see the docstring
        return None
    choices = answer.get("choices") if isinstance(answer, dict) else None
    if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
        return None
    streamed = []
    for choice in choices:
        delta = choice.get("message")
        delta = dict(delta) if isinstance(delta, dict) else {}
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            delta["tool_calls"] = [
                {**call, "index": i} if isinstance(call, dict) else call
                for i, call in enumerate(calls)
            ]
        rest = {name: value for name, value in choice.items() if name != "message"}
        streamed.append({**rest, "delta": delta})
    chunk = {**answer, "object": "chat.completion.chunk", "choices": streamed}
    return b"data: " + _encoder.encode(chunk) + b"\n\ndata: [DONE]\n\n"


class _Block(msgspec.Struct):
    type: str = ""
    text: str | None = None
    thinking: str | None = None
    signature: str | None = None
    data: str | None = None
    id: str | None = None
    name: str | None = None
    input: msgspec.Raw = msgspec.Raw()  # the arguments' own text: numbers as written


class _Message(msgspec.Struct):
    type: str = ""
    content: list[_Block] = msgspec.field(default_factory=list)
    stop_reason: str | None = None
    stop_sequence: str | None = None
    usage: dict[str, Any] | None = None


_message = msgspec.json.Decoder(_Message)


def message(raw: bytes) -> bytes | None:
    """An Anthropic ``message`` body as its SSE stream, or None if it is not one."""
    try:
        answer = _message.decode(raw.removeprefix(_BOM))
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):  # ValidationError is one
        return None
    if answer.type != "message":
        return None
    usage = answer.usage or {}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"message": {"type": "message", "content": [], "usage": usage}})
    ]
    for index, block in enumerate(answer.content):
        start: dict[str, Any] = {"type": block.type}
        deltas: list[dict[str, Any]] = []
        if block.type == "text":
            start["text"] = ""
            deltas.append({"type": "text_delta", "text": block.text or ""})
        elif block.type == "thinking":
            start["thinking"] = ""
            deltas.append({"type": "thinking_delta", "thinking": block.thinking or ""})
            if block.signature:
                deltas.append({"type": "signature_delta", "signature": block.signature})
        elif block.type == "redacted_thinking":
            start["data"] = block.data or ""
        elif block.input:  # tool_use, or a server tool's: its input as JSON text
            start |= {"id": block.id, "name": block.name, "input": {}}
            text = bytes(block.input).decode()
            deltas.append({"type": "input_json_delta", "partial_json": text})
        events.append(("content_block_start", {"index": index, "content_block": start}))
        events += [("content_block_delta", {"index": index, "delta": d}) for d in deltas]
        events.append(("content_block_stop", {"index": index}))
    stop = {"stop_reason": answer.stop_reason, "stop_sequence": answer.stop_sequence}
    output = {"output_tokens": usage.get("output_tokens", 0)}
    events.append(("message_delta", {"delta": stop, "usage": output}))
    events.append(("message_stop", {}))
    return b"".join(
        b"event: " + name.encode() + b"\ndata: " + _encoder.encode({"type": name, **data})
        + b"\n\n"
        for name, data in events
    )
