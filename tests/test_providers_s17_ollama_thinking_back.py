"""A reply's thinking goes back to Ollama on its assistant message (``thinking``
beside ``content`` and ``tool_calls``, as Ollama's tool-calling guide sends it)
when the same server and model streamed it, and to no other: it was dropped
from every request, so a thinking model (qwen3, gpt-oss) lost the reasoning
that led to its call. An Agent in native mode against a real server on
127.0.0.1, and the request body over MockTransport."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from provider_support import collect, mock
from reasoning_support import multiply

from streamtools.model import ChatMessage, ModelRequest, NativeCall, ReasoningChunk
from streamtools.providers import OllamaChat
from streamtools.runtime import Agent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio

THOUGHT = "Six times seven first; then the square."


def _ndjson(*objs: dict[str, Any]) -> Reply:
    body = "".join(json.dumps(o) + "\n" for o in objs)
    return Reply(raw=body.encode(), content_type="application/x-ndjson")


def _msg(**fields: Any) -> dict[str, Any]:
    return {"message": {"role": "assistant", "content": "", **fields}, "done": False}


DONE = {"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"}
CALL = {"id": "call_x1", "function": {"name": "multiply", "arguments": {"a": 6, "b": 7}}}


async def test_the_agent_sends_the_thinking_back_with_the_call(anyio_backend: str) -> None:
    replies = [
        _ndjson(_msg(thinking="Six times "), _msg(thinking="seven first; then the square."),
                _msg(tool_calls=[CALL]), DONE),
        _ndjson(_msg(content="42"), DONE),
    ]
    async with FakeServer(replies, wire="ollama") as server:
        provider = OllamaChat("qwen3", base_url=server.base_url, max_retries=0)
        result = await Agent(provider, [multiply], native=True).run("What is 6*7?")
        bodies = server.requests
    assert result.text == "42"
    assistant = [m for m in bodies[1]["messages"] if m["role"] == "assistant"]
    assert len(assistant) == 1
    assert assistant[0]["thinking"] == THOUGHT
    assert [c["id"] for c in assistant[0]["tool_calls"]] == ["call_x1"]


async def _body(provider: OllamaChat, request: ModelRequest) -> dict[str, Any]:
    seen: list[httpx.Request] = []
    done = json.dumps(DONE) + "\n"
    provider = OllamaChat(provider.model, base_url=provider.base_url,
                          client=mock(done, stream_ctype="application/x-ndjson", seen=seen))
    await collect(provider, request)
    sent: dict[str, Any] = json.loads(seen[0].content)
    return sent


async def test_only_the_server_and_model_that_thought_it_get_it(anyio_backend: str) -> None:
    stream = "".join(json.dumps(o) + "\n" for o in (_msg(thinking="Hm."), _msg(thinking="."),
                                                    DONE))
    here = OllamaChat("qwen3", base_url="http://gpu-box:11434",
                      client=mock(stream, stream_ctype="application/x-ndjson"))
    chunks = await collect(here)
    reasoning = [c for c in chunks if isinstance(c, ReasoningChunk)]
    assert [c.text for c in reasoning] == ["Hm.", "."]
    origin = reasoning[0].origin
    assert origin is not None and origin.field == "thinking"
    assert reasoning[1].origin is None  # said once, on the first

    request = ModelRequest(messages=(
        ChatMessage(role="user", content="go"),
        ChatMessage(role="assistant", content="", reasoning="Hm..", reasoning_origin=origin,
                    tool_calls=(NativeCall(id="c1", name="multiply", arguments={"a": 1}),)),
        ChatMessage(role="tool", content="1", tool_call_id="c1"),
    ))
    same = await _body(here, request)
    assert same["messages"][1]["thinking"] == "Hm.."
    for other in (OllamaChat("gpt-oss", base_url="http://gpu-box:11434"),
                  OllamaChat("qwen3", base_url="http://other:11434")):
        sent = await _body(other, request)
        assert "thinking" not in sent["messages"][1]
