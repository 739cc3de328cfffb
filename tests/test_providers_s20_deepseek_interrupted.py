"""DeepSeek's API ends an answer it broke off for want of capacity with
``finish_reason: "insufficient_system_resource"`` (one of the reasons its chat
API documents). It was passed on as sent: the text cut off there was the final
answer, and a call whose arguments happened to be whole ran. It is an error
finish now, as vLLM's ``abort`` is, naming the reason (FakeServer on
127.0.0.1, OpenAI wire)."""

from __future__ import annotations

from typing import Any

import pytest
from provider_support import DONE, collect, sse, text_of

from streamtools.errors import ProviderError
from streamtools.events import CallEnd, CallError, Event, Final, StreamError
from streamtools.model import CallChunk, FinishChunk
from streamtools.native import NativeCalls
from streamtools.providers import OpenAIChat
from streamtools.runtime.agent import Agent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply
from streamtools.tools import tool

pytestmark = pytest.mark.anyio
REASON = "insufficient_system_resource"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"object": "chat.completion.chunk", "choices": [choice]}


def _raw(*events: Any) -> Reply:
    return Reply(raw=sse(*events).encode(), content_type="text/event-stream")


async def test_the_broken_off_answer_is_an_error_and_its_call_does_not_run(
    anyio_backend: str,
) -> None:
    call = {"index": 0, "id": "c1", "type": "function",
            "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}
    body = _raw(_chunk({"content": "Adding."}), _chunk({"tool_calls": [call]}),
                _chunk({}, REASON), DONE)
    async with FakeServer([body], wire="openai") as server:
        chunks = await collect(OpenAIChat("deepseek-chat", base_url=server.base_url))
    last = chunks[-1]
    assert text_of(chunks) == "Adding."
    assert last == FinishChunk(
        reason="error",
        message=f"OpenAI-compatible server ended the answer with finish_reason {REASON!r}",
    )
    native = NativeCalls(["add"])
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    events += native.end(last.reason)
    assert [e.reason for e in events if isinstance(e, CallError)] == ["unterminated"]
    assert not any(isinstance(e, CallEnd) for e in events)


async def test_the_agent_does_not_take_the_cut_text_for_its_answer(anyio_backend: str) -> None:
    body = _raw(_chunk({"content": "The answer is"}), _chunk({}, REASON), DONE)
    async with FakeServer([body], wire="openai") as server:
        agent = Agent(OpenAIChat("deepseek-chat", base_url=server.base_url), [add], native=True)
        seen: list[Event] = []
        with pytest.raises(ProviderError, match=REASON) as failed:
            async with agent.stream("What is 2 + 3?") as events:
                async for event in events:
                    seen.append(event)
    assert failed.value.partial_text == "The answer is"
    errors = [e for e in seen if isinstance(e, StreamError)]
    assert [e.kind for e in errors] == ["stream"] and REASON in errors[0].message
    assert not any(isinstance(e, Final) for e in seen)
