"""Gateways that turn a whole answer into Anthropic's stream (an OpenAI or
Bedrock backend behind an Anthropic-compatible endpoint, a proxy that buffers)
send each block whole in its ``content_block_start``: a tool_use block with its
``input``, a thinking block with its ``thinking`` and its ``signature``, and no
deltas. The input was read; the signature was dropped, so the reply's thinking
went back unsigned and the next request of a tool loop with extended thinking
was refused ('Invalid `signature` in `thinking` block'). Over MockTransport,
and an Agent in native mode against a real server on 127.0.0.1."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_support import collect, mock
from reasoning_support import multiply

from streamtools.model import CallChunk, FinishChunk, ReasoningChunk
from streamtools.providers import AnthropicMessages
from streamtools.runtime import Agent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio


def _event(kind: str, **fields: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n"


START = _event("message_start", message={"id": "msg_1", "type": "message", "role": "assistant",
                                         "content": [], "usage": {"input_tokens": 9}})
WHOLE = (
    START
    + _event("content_block_start", index=0, content_block={
        "type": "thinking", "thinking": "Six times seven.", "signature": "RXFRQ2tZ"})
    + _event("content_block_stop", index=0)
    + _event("content_block_start", index=1, content_block={
        "type": "tool_use", "id": "toolu_1", "name": "multiply", "input": {"a": 6, "b": 7}})
    + _event("content_block_stop", index=1)
    + _event("message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 5})
    + _event("message_stop")
)
ANSWER = (
    START
    + _event("content_block_start", index=0, content_block={"type": "text", "text": "42"})
    + _event("content_block_stop", index=0)
    + _event("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 1})
    + _event("message_stop")
)


async def test_a_whole_thinking_block_keeps_its_signature(anyio_backend: str) -> None:
    chunks = await collect(AnthropicMessages("m", client=mock(WHOLE)))
    reasoning = [c for c in chunks if isinstance(c, ReasoningChunk)]
    assert [(c.text, c.signature) for c in reasoning] == [
        ("Six times seven.", None), ("", "RXFRQ2tZ")]
    calls = [c for c in chunks if isinstance(c, CallChunk)]
    assert json.loads("".join(c.arguments for c in calls)) == {"a": 6, "b": 7}
    assert chunks[-1] == FinishChunk(reason="tool_calls")


async def test_the_signed_block_goes_back_whole(anyio_backend: str) -> None:
    def second(body: dict[str, Any]) -> Reply:
        [assistant] = [m for m in body["messages"] if m["role"] == "assistant"]
        first = assistant["content"][0]
        if first != {"type": "thinking", "thinking": "Six times seven.", "signature": "RXFRQ2tZ"}:
            message = "messages.1.content.0: Invalid `signature` in `thinking` block"
            error = {"type": "error",
                     "error": {"type": "invalid_request_error", "message": message}}
            return Reply(status=400, body=json.dumps(error), content_type="application/json")
        return Reply(raw=ANSWER.encode(), content_type="text/event-stream")

    replies: list[Any] = [Reply(raw=WHOLE.encode(), content_type="text/event-stream"), second]
    async with FakeServer(replies, wire="anthropic") as server:
        provider = AnthropicMessages("m", base_url=server.base_url, max_retries=0)
        result = await Agent(provider, [multiply], native=True).run("What is 6*7?")
    assert result.text == "42"


async def test_a_streamed_block_is_read_as_before(anyio_backend: str) -> None:
    """Anthropic's own start carries an empty signature; the delta brings it."""
    body = (
        START
        + _event("content_block_start", index=0,
                 content_block={"type": "thinking", "thinking": "", "signature": ""})
        + _event("content_block_delta", index=0,
                 delta={"type": "thinking_delta", "thinking": "Hm."})
        + _event("content_block_delta", index=0,
                 delta={"type": "signature_delta", "signature": "c2ln"})
        + _event("content_block_stop", index=0)
        + _event("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 1})
        + _event("message_stop")
    )
    chunks = await collect(AnthropicMessages("m", client=mock(body)))
    reasoning = [c for c in chunks if isinstance(c, ReasoningChunk)]
    assert [(c.text, c.signature) for c in reasoning] == [("Hm.", None), ("", "c2ln")]
