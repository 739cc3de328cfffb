"""Hugging Face TGI streamed ``delta.tool_calls`` as one object, not a list
(huggingface/text-generation-inference#2794, open; fixed in its #3086, 2025,
so older servers still send it). The answer ended at the first call delta:
"malformed JSON ... Expected `array | null`, got `object`". Now it is a list of
one. FakeServer over HTTP, OpenAI wire, through the agent."""

from __future__ import annotations

from typing import Any

import pytest
from provider_support import DONE, sse

from streamtools.events import CallEnd, Event, StreamError, ToolResult
from streamtools.providers import OpenAIChat
from streamtools.runtime.agent import Agent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply
from streamtools.tools import tool

pytestmark = pytest.mark.anyio


@tool
def get_weather(location: str) -> str:
    """The weather somewhere."""
    return f"sunny in {location}"


def _tgi(arguments: str, name: str | None = None, finish: str | None = None) -> dict[str, Any]:
    call = {"index": 0, "id": "", "type": "function",
            "function": {"name": name, "arguments": arguments}}
    choice = {"index": 0, "delta": {"role": "assistant", "tool_calls": call},
              "logprobs": None, "finish_reason": finish}
    return {"object": "chat.completion.chunk", "id": "", "created": 1733213355,
            "model": "/models/Qwen2.5-7B-Instruct-AWQ", "system_fingerprint": "2.4.1-sha-d2ed52f",
            "choices": [choice], "usage": None}


BODY = sse(
    _tgi("", "get_weather"), _tgi('{"loc'), _tgi('ation": "Paris"}'),
    {"object": "chat.completion.chunk", "id": "", "choices": [
        {"index": 0, "delta": {"role": "assistant"}, "finish_reason": "stop"}]},
    DONE,
)


async def test_one_call_as_an_object_is_read(anyio_backend: str) -> None:
    reply = Reply(raw=BODY.encode(), content_type="text/event-stream")
    async with FakeServer([reply, "It is sunny."], wire="openai") as server:
        agent = Agent(OpenAIChat("tgi", base_url=server.base_url), [get_weather], native=True)
        async with agent.stream("Weather in Paris?") as events:
            seen: list[Event] = [e async for e in events]
    assert [e for e in seen if isinstance(e, StreamError)] == []
    ends = [(e.name, e.arguments) for e in seen if isinstance(e, CallEnd)]
    assert ends == [("get_weather", {"location": "Paris"})]
    assert [r.content for r in seen if isinstance(r, ToolResult)] == ["sunny in Paris"]
