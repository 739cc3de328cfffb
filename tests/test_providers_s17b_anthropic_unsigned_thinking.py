"""Anthropic-compatible servers whose thinking blocks come unsigned (Kimi's
and Zhipu's GLM Anthropic endpoints stream ``thinking_delta`` with no
``signature_delta``, or an empty one) refuse the next request of a tool loop
unless the reply's thinking comes back on its assistant message (Kimi: 400
"thinking is enabled but reasoning_content is missing in assistant tool call
message at index 1"; DeepSeek's words: "The `content[].thinking` in the
thinking mode must be passed back to the API."). AnthropicMessages kept only
signed blocks, so the unsigned thinking was dropped and the loop failed at its
second request. It now goes back, as an unsigned thinking block first in the
message, to the server and model that streamed it, and to no other (Anthropic's
own API refuses a thinking block whose signature it did not make). An Agent
in native mode against a real server on 127.0.0.1, and the body alone."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from provider_support import collect, mock
from reasoning_support import multiply

from streamtools.model import (
    ChatMessage,
    ModelRequest,
    NativeCall,
    ReasoningChunk,
    ReasoningOrigin,
    Thinking,
)
from streamtools.providers import AnthropicMessages
from streamtools.providers.bodies import reasoning_server
from streamtools.runtime import Agent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio

THOUGHT = "Six times seven first."


def _event(kind: str, **fields: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n"


def _stream(*events: str) -> Reply:
    return Reply(raw="".join(events).encode(), content_type="text/event-stream")


START = _event("message_start", message={"id": "msg_1", "type": "message", "role": "assistant",
                                         "content": [], "usage": {"input_tokens": 9}})
END_CALL = (_event("message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 5})
            + _event("message_stop"))
END_TEXT = (_event("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 2})
            + _event("message_stop"))


def _thinking(signature: str | None) -> str:
    """A thinking block as Kimi's (no signature_delta) or GLM's (an empty one) stream it."""
    events = [
        _event("content_block_start", index=0, content_block={"type": "thinking", "thinking": ""}),
        _event("content_block_delta", index=0,
               delta={"type": "thinking_delta", "thinking": "Six times "}),
        _event("content_block_delta", index=0,
               delta={"type": "thinking_delta", "thinking": "seven first."}),
    ]
    if signature is not None:
        events.append(_event("content_block_delta", index=0,
                             delta={"type": "signature_delta", "signature": signature}))
    events.append(_event("content_block_stop", index=0))
    return "".join(events)


CALL = (
    _event("content_block_start", index=1,
           content_block={"type": "tool_use", "id": "tool_1", "name": "multiply", "input": {}})
    + _event("content_block_delta", index=1,
             delta={"type": "input_json_delta", "partial_json": '{"a": 6, "b": 7}'})
    + _event("content_block_stop", index=1)
)
ANSWER = (
    _event("content_block_start", index=0, content_block={"type": "text", "text": ""})
    + _event("content_block_delta", index=0, delta={"type": "text_delta", "text": "42"})
    + _event("content_block_stop", index=0)
)
MISSING = json.dumps({"error": {"message": "thinking is enabled but reasoning_content is missing "
                                "in assistant tool call message at index 1",
                                "type": "invalid_request_error"}})


def _kimi(signature: str | None) -> Any:
    """Kimi's endpoint, as its users meet it: the second request of a tool
    loop is refused unless the call's message carries its thinking first."""
    def answer(body: dict[str, Any]) -> Reply:
        if len(body["messages"]) == 1:
            return _stream(START, _thinking(signature), CALL, END_CALL)
        [assistant] = [m for m in body["messages"] if m["role"] == "assistant"]
        first = assistant["content"][0]
        if first.get("type") != "thinking" or first.get("thinking") != THOUGHT:
            return Reply(status=400, body=MISSING, content_type="application/json")
        return _stream(START, ANSWER, END_TEXT)

    return answer


@pytest.mark.parametrize("signature", [None, ""], ids=["no-signature", "empty-signature"])
async def test_the_agent_sends_unsigned_thinking_back(
    anyio_backend: str, signature: str | None
) -> None:
    answer = _kimi(signature)
    async with FakeServer([answer, answer], wire="anthropic") as server:
        provider = AnthropicMessages("kimi-k2.6", base_url=server.base_url, max_retries=0)
        result = await Agent(provider, [multiply], native=True).run("What is 6*7?")
        bodies = server.requests
    assert result.text == "42"
    [assistant] = [m for m in bodies[1]["messages"] if m["role"] == "assistant"]
    kinds = [block["type"] for block in assistant["content"]]
    assert kinds == ["thinking", "tool_use"]


async def _body(provider: AnthropicMessages, request: ModelRequest) -> dict[str, Any]:
    seen: list[httpx.Request] = []
    done = START + END_TEXT
    sender = AnthropicMessages(provider.model, base_url=provider.base_url,
                               client=mock(done, seen=seen))
    await collect(sender, request)
    sent: dict[str, Any] = json.loads(seen[0].content)
    return sent


async def test_only_the_server_and_model_that_thought_it_get_it(anyio_backend: str) -> None:
    stream = START + _thinking(None) + ANSWER + END_TEXT
    here = AnthropicMessages("glm-4.7", base_url="https://open.bigmodel.cn/api/anthropic",
                             client=mock(stream))
    chunks = await collect(here)
    reasoning = [c for c in chunks if isinstance(c, ReasoningChunk)]
    assert "".join(c.text for c in reasoning) == THOUGHT
    origin = reasoning[0].origin
    assert origin is not None and origin.field == "thinking"
    assert all(c.origin is None for c in reasoning[1:])  # said once, on the first
    call = NativeCall(id="tool_1", name="multiply", arguments={"a": 6, "b": 7})
    reply = ChatMessage(role="assistant", content="", tool_calls=(call,),
                        reasoning=THOUGHT, reasoning_origin=origin)
    result = ChatMessage(role="tool", content="42", tool_call_id="tool_1")
    request = ModelRequest(messages=(ChatMessage(role="user", content="6*7?"), reply, result))
    unsigned = {"type": "thinking", "thinking": THOUGHT, "signature": ""}
    sent = await _body(here, request)
    assert sent["messages"][1]["content"][0] == unsigned
    for other in (AnthropicMessages("glm-4.6", base_url=here.base_url),
                  AnthropicMessages("glm-4.7")):  # another model; Anthropic's own API
        sent = await _body(other, request)
        assert [b["type"] for b in sent["messages"][1]["content"]] == ["tool_use"]


async def test_signed_thinking_goes_back_as_it_came(anyio_backend: str) -> None:
    """A reply with signed blocks (Anthropic's, DeepSeek's) sends those, not its text again."""
    here = AnthropicMessages("deepseek-v4-pro", base_url="https://api.deepseek.com/anthropic")
    call = NativeCall(id="tool_1", name="multiply", arguments={"a": 6, "b": 7})
    signed = Thinking(text=THOUGHT, signature="c2ln")
    origin = ReasoningOrigin(field="thinking", server=reasoning_server(here.base_url, here.model))
    reply = ChatMessage(role="assistant", content="", tool_calls=(call,), thinking=(signed,),
                        reasoning=THOUGHT, reasoning_origin=origin)
    result = ChatMessage(role="tool", content="42", tool_call_id="tool_1")
    request = ModelRequest(messages=(ChatMessage(role="user", content="6*7?"), reply, result))
    sent = await _body(here, request)
    assert sent["messages"][1]["content"][0] == {
        "type": "thinking", "thinking": THOUGHT, "signature": "c2ln"}
    assert [b["type"] for b in sent["messages"][1]["content"]] == ["thinking", "tool_use"]


async def test_a_reply_without_calls_sends_none(anyio_backend: str) -> None:
    """Those servers ask for it on a reply with calls only; behind a gateway
    that drops the signatures of Anthropic's own blocks, an unsigned block on
    an earlier answer would have the API refuse the whole request."""
    here = AnthropicMessages("kimi-k2.6", base_url="https://api.moonshot.ai/anthropic")
    origin = ReasoningOrigin(field="thinking", server=reasoning_server(here.base_url, here.model))
    reply = ChatMessage(role="assistant", content="It is 42.", reasoning=THOUGHT,
                        reasoning_origin=origin)
    request = ModelRequest(messages=(ChatMessage(role="user", content="6*7?"), reply,
                                     ChatMessage(role="user", content="And 6*8?")))
    sent = await _body(here, request)
    assert sent["messages"][1] == {"role": "assistant", "content": "It is 42."}
