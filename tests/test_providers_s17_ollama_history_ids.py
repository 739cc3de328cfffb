"""Past calls and tool results go back to Ollama with their ids: ``id`` on each
of an assistant message's ``tool_calls`` and ``tool_call_id`` on a ``tool``
message, the fields of Ollama's ``api.ToolCall`` and ``api.Message`` since
0.12.10 (MockTransport and a real server on 127.0.0.1)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from provider_support import collect, mock

from streamtools.events import CallEnd
from streamtools.model import CallChunk, ChatMessage, ModelRequest, NativeCall
from streamtools.native import NativeCalls
from streamtools.providers import OllamaChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio

PARIS, ROME = {"q": "Paris"}, {"q": "Rome"}
DONE = {"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"}


def ollama_lines(*objs: dict[str, Any]) -> str:
    return "".join(json.dumps(o) + "\n" for o in objs)


async def _sent(request: ModelRequest, transport: str) -> dict[str, Any]:
    """The body Ollama received for ``request``."""
    body = ollama_lines(DONE)
    if transport == "mock":
        seen: list[httpx.Request] = []
        client = mock(body, stream_ctype="application/x-ndjson", seen=seen)
        await collect(OllamaChat("qwen3", client=client), request)
        sent: dict[str, Any] = json.loads(seen[0].content)
        return sent
    reply = Reply(raw=body.encode(), content_type="application/x-ndjson")
    async with FakeServer([reply], wire="ollama") as server:
        await collect(OllamaChat("qwen3", base_url=server.base_url), request)
        got: dict[str, Any] = server.requests[0]
        return got


@pytest.mark.parametrize("transport", ["mock", "http"])
async def test_the_ids_ollama_gave_go_back_with_the_calls_and_results(
    anyio_backend: str, transport: str
) -> None:
    """The same tool called twice in one turn: Ollama's ids, read from its
    stream, name both calls and both results in the next request; the results
    carried only ``tool_name`` (``search`` twice), told apart by order alone."""
    stream = ollama_lines(
        {
            "message": {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "call_lyywui55", "function": {"name": "search", "arguments": PARIS}},
                    {"id": "call_0scw2dos", "function": {"name": "search", "arguments": ROME}},
                ],
            },
            "done": False,
        },
        DONE,
    )
    client = mock(stream, stream_ctype="application/x-ndjson")
    chunks = await collect(OllamaChat("qwen3", client=client))
    native = NativeCalls(["search"])
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    ends = [e for e in events + native.end("tool_calls") if isinstance(e, CallEnd)]
    assert [e.id for e in ends] == ["call_lyywui55", "call_0scw2dos"]

    request = ModelRequest(
        messages=(
            ChatMessage(role="user", content="weather in Paris and Rome?"),
            ChatMessage(
                role="assistant",
                content="",
                tool_calls=tuple(
                    NativeCall(id=e.id, name=e.name, arguments=dict(e.arguments)) for e in ends
                ),
            ),
            ChatMessage(role="tool", content="18C", tool_call_id=ends[0].id),
            ChatMessage(role="tool", content="24C", tool_call_id=ends[1].id),
        )
    )
    sent = await _sent(request, transport)
    assistant, first, second = sent["messages"][1:]
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_lyywui55", "call_0scw2dos"]
    assert [c["function"]["arguments"] for c in assistant["tool_calls"]] == [PARIS, ROME]
    assert first == {
        "role": "tool",
        "content": "18C",
        "tool_name": "search",
        "tool_call_id": "call_lyywui55",
    }
    assert second == {
        "role": "tool",
        "content": "24C",
        "tool_name": "search",
        "tool_call_id": "call_0scw2dos",
    }


async def test_a_tool_message_without_an_id_sends_none(anyio_backend: str) -> None:
    """A result known by its tool's name only (``name``, no id) sends no empty id."""
    request = ModelRequest(
        messages=(
            ChatMessage(role="user", content="go"),
            ChatMessage(role="tool", content="ok", name="search"),
        )
    )
    sent = await _sent(request, "mock")
    assert sent["messages"][1] == {"role": "tool", "content": "ok", "tool_name": "search"}
