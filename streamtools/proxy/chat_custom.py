"""Calls to custom tools on the chat completions wire (OpenAI's ``custom``
tools: raw text input, declared as ``{"type": "custom", "custom": {"name",
"description", "format"}}``).

Theory of operation
-------------------
The model is shown a custom tool as one with a single string parameter,
``input`` (``freeform.freeform_spec``), and calls it as any other. The client
gets the call in OpenAI's custom shape: ``{"id", "type": "custom", "custom":
{"name", "input"}}`` in a message's ``tool_calls``, with ``input`` the text
itself, not JSON arguments. Streamed, the call starts with that shape and an
empty ``input``; then each piece of the text, decoded from the arguments as
they arrive (``freeform.RawInput``), comes as ``{"index", "custom": {"input":
piece}}``, which a client (and the openai SDK's ``ChatCompletionStreamState``)
appends as it appends ``function.arguments``. The finish is ``tool_calls``.

Only a request that declares a custom tool gets ``CustomChunkEncoder``: the
check per event it adds is not paid by any other stream.
"""

from __future__ import annotations

from typing import Any

from streamtools.events import ArgsDelta, CallEnd, CallStart, Event
from streamtools.proxy.freeform import RawInput, freeform_text
from streamtools.proxy.openai_wire import ChunkEncoder, response_body
from streamtools.proxy.request import ProxyCall, Reply

__all__ = ["CustomChunkEncoder", "custom_body"]


class CustomChunkEncoder(ChunkEncoder):
    """A ``ChunkEncoder`` for a request that declares custom tools (``custom``:
    their names): their calls are written in the custom shape."""

    def __init__(self, model: str, custom: list[str], *, include_usage: bool = False) -> None:
        super().__init__(model, include_usage=include_usage)
        self.custom = frozenset(custom)
        # wire index -> (the text decoder, the text given so far) of an open custom call
        self.open: dict[int, tuple[RawInput, list[str]]] = {}

    def encode(self, event: Event) -> bytes:
        match event:
            case CallStart(index=index, id=call_id, name=name) if name in self.custom:
                self.made_calls = True
                self.open[index] = (RawInput(), [])
                call = {"index": index, "id": call_id, "type": "custom",
                        "custom": {"name": name, "input": ""}}
                if self.opened:
                    return self._chunk({"tool_calls": [call]})
                return self._opened({"tool_calls": [call]})
            case ArgsDelta(index=index, delta=delta) if index in self.open:
                raw, given = self.open[index]
                return self._input(index, raw.feed(delta), given)
            case CallEnd(index=index, arguments=arguments) if index in self.open:
                _, given = self.open.pop(index)
                # the rest of the text (all of it, for arguments of another shape)
                text, sent = freeform_text(arguments), "".join(given)
                return self._input(index, text[len(sent) :] if text.startswith(sent) else "", given)
        return super().encode(event)

    def _input(self, index: int, text: str, given: list[str]) -> bytes:
        if not text:
            return b""
        given.append(text)
        return self._chunk({"tool_calls": [{"index": index, "custom": {"input": text}}]})


def custom_body(reply: Reply, call: ProxyCall) -> dict[str, Any]:
    """A non-streaming ``chat.completion`` whose calls to custom tools are in
    the custom shape. A call cut off by the token limit has the text decoded
    from its arguments so far, as the stream gives it."""
    body = response_body(reply, call.model)
    custom = frozenset(call.freeform)
    written: list[dict[str, Any]] = body["choices"][0]["message"].get("tool_calls") or []
    for i, c in enumerate(reply.calls):
        if c.name in custom:
            text = freeform_text(c.input) if c.complete else RawInput().feed(c.arguments)
            written[i] = {"id": c.id, "type": "custom", "custom": {"name": c.name, "input": text}}
    return body
