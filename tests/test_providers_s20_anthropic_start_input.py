"""A ``tool_use`` block's ``input`` in its ``content_block_start`` is the
call's input only when no ``input_json_delta`` follows: Anthropic's own SDK
starts the input's JSON text empty and lets the deltas replace the block's
``input`` (anthropic-sdk-python, ``accumulate_event``). A gateway that sends
the whole input at the start and streams it again in deltas (labring/aiproxy#515,
"fix: claude double input", by its title one) had the two appended, ``{"a": 6}{"a": 6}``:
invalid JSON, and the model told to fix a call it wrote right. Now the deltas
are the input when they come; the start's input stands when none do
(whole-block gateways). MockTransport and FakeServer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_support import read_sse

from streamtools.events import CallEnd, CallError
from streamtools.model import CallChunk, FinishChunk
from streamtools.native import NativeCalls

pytestmark = pytest.mark.anyio
TRANSPORTS = pytest.mark.parametrize("transport", ["mock", "http"])


def _event(kind: str, **fields: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n"


def _answer(start_input: dict[str, Any], *deltas: str) -> str:
    block = {"type": "tool_use", "id": "toolu_1", "name": "multiply", "input": start_input}
    body = _event("message_start", message={"id": "msg_1", "type": "message",
                                            "role": "assistant", "content": [],
                                            "usage": {"input_tokens": 9}})
    body += _event("content_block_start", index=0, content_block=block)
    for piece in deltas:
        body += _event("content_block_delta", index=0,
                       delta={"type": "input_json_delta", "partial_json": piece})
    body += _event("content_block_stop", index=0)
    body += _event("message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 5})
    return body + _event("message_stop")


async def _ends(body: str, transport: str) -> list[tuple[str, dict[str, Any]]]:
    chunks = await read_sse(body, transport, wire="anthropic")
    finish = chunks[-1]
    assert isinstance(finish, FinishChunk) and finish.reason == "tool_calls"
    native = NativeCalls(["multiply"])
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    events += native.end(finish.reason)
    assert not [e for e in events if isinstance(e, CallError)]
    return [(e.raw, e.arguments) for e in events if isinstance(e, CallEnd)]


@TRANSPORTS
@pytest.mark.parametrize("deltas, raw, arguments", [
    (('{"a": 6, ', '"b": 7}'), '{"a": 6, "b": 7}', {"a": 6, "b": 7}),  # the same, again
    (('{"a": 2, "b": 3}',), '{"a": 2, "b": 3}', {"a": 2, "b": 3}),  # the deltas win, as in the SDK
    (("", '{"a": 6,', ' "b": 7}'), '{"a": 6, "b": 7}', {"a": 6, "b": 7}),  # an empty one first
], ids=["again", "other", "empty-first"])
async def test_deltas_after_a_start_input_are_the_input(
    anyio_backend: str, transport: str, deltas: tuple[str, ...], raw: str,
    arguments: dict[str, Any],
) -> None:
    body = _answer({"a": 6, "b": 7}, *deltas)
    assert await _ends(body, transport) == [(raw, arguments)]


@TRANSPORTS
@pytest.mark.parametrize("deltas", [(), ("",)], ids=["none", "empty"])
async def test_a_start_input_without_deltas_stands(
    anyio_backend: str, transport: str, deltas: tuple[str, ...]
) -> None:
    body = _answer({"a": 6, "b": 7}, *deltas)
    assert await _ends(body, transport) == [('{"a":6,"b":7}', {"a": 6, "b": 7})]
