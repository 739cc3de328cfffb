"""Gemini ends an answer with ``finish_reason: MALFORMED_FUNCTION_CALL`` when it
could not read the function call the model wrote: no content, no call. Its
OpenAI-compatible endpoint passes the reason on as it is; OpenRouter says
``stop`` or ``error`` and keeps Gemini's in ``native_finish_reason``. It was
read as an empty answer (the agent asked for "its answer", then gave up on an
empty reply). Now the reply holds a ``CallError(malformed)`` that says what
happened, the model is told to write the call again, and the run goes on
(FakeServer over HTTP, OpenAI wire, through the agent)."""

from __future__ import annotations

from typing import Any

import pytest
from provider_support import DONE, collect, sse

from streamtools.events import CallError, Event, Final, Retry, ToolResult
from streamtools.model import ChatMessage, FinishChunk, ModelRequest, ToolSpec
from streamtools.providers import OpenAIChat
from streamtools.runtime.agent import Agent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import FakeCall, Reply
from streamtools.tools import tool

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _end(finish: str, native: str | None = None) -> str:
    choice: dict[str, Any] = {"index": 0, "delta": {"role": "assistant"}, "finish_reason": finish}
    if native is not None:
        choice["native_finish_reason"] = native
    return sse({"object": "chat.completion.chunk", "choices": [choice]}, DONE)


GEMINI = _end("MALFORMED_FUNCTION_CALL")  # Google's OpenAI-compatible endpoint
OPENROUTER = _end("stop", "MALFORMED_FUNCTION_CALL")
OPENROUTER_ERROR = _end("error", "MALFORMED_FUNCTION_CALL")


async def _run(body: str) -> tuple[list[Event], list[Any]]:
    refused = Reply(raw=body.encode(), content_type="text/event-stream")
    again = Reply(calls=(FakeCall(name="add", arguments='{"a": 2, "b": 3}', id="c1"),))
    async with FakeServer([refused, again, "It is 5."], wire="openai") as server:
        model = OpenAIChat("gemini-2.5-flash", base_url=server.base_url, max_retries=0)
        agent = Agent(model, [add], native=True)
        async with agent.stream("What is 2 + 3?") as events:
            seen = [e async for e in events]
        return seen, server.requests


@pytest.mark.parametrize(
    "body", [GEMINI, OPENROUTER, OPENROUTER_ERROR], ids=["gemini", "openrouter", "or-error"]
)
async def test_a_call_the_api_could_not_read_is_written_again(
    anyio_backend: str, body: str
) -> None:
    seen, requests = await _run(body)
    errors = [e for e in seen if isinstance(e, CallError)]
    assert [(e.reason, e.name, e.raw) for e in errors] == [("malformed", None, "")]
    assert "could not read the tool call" in errors[0].message
    assert [r.reason for r in seen if isinstance(r, Retry)] == ["call_error"]
    # the model was told, and wrote the call again: it ran, and the run answered
    told = requests[1]["messages"][-1]
    assert told["role"] == "user" and "could not read the tool call" in told["content"]
    assert [(r.name, r.content) for r in seen if isinstance(r, ToolResult)] == [("add", "5")]
    assert [f.text for f in seen if isinstance(f, Final)] == ["It is 5."]


async def test_the_finish_names_the_reason_as_sent(anyio_backend: str) -> None:
    request = ModelRequest(
        messages=(ChatMessage(role="user", content="hi"),),
        tools=(ToolSpec(name="add", description="Add.", parameters={"type": "object"}),),
    )
    async with FakeServer([Reply(raw=OPENROUTER.encode(), content_type="text/event-stream")],
                          wire="openai") as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url, max_retries=0), request)
    assert chunks == [
        FinishChunk(
            reason="malformed_call",
            message="OpenAI-compatible server ended the answer with finish_reason "
            "'MALFORMED_FUNCTION_CALL': it could not read the tool call the model wrote",
        )
    ]


async def test_another_native_reason_is_the_finish_as_sent(anyio_backend: str) -> None:
    async with FakeServer([Reply(raw=_end("stop", "STOP").encode(),
                                 content_type="text/event-stream")], wire="openai") as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url, max_retries=0))
    assert chunks == [FinishChunk(reason="stop")]


def _whole_call_then(finish: str) -> str:
    call = {"index": 0, "id": "c0", "type": "function",
            "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}
    first = {"object": "chat.completion.chunk",
             "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]}
    end = {"object": "chat.completion.chunk",
           "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
    return sse(first, end, DONE)


async def test_a_call_in_an_answer_the_api_refused_does_not_run(anyio_backend: str) -> None:
    # the reason is authoritative over a call that came whole in the same answer
    seen, requests = await _run(_whole_call_then("MALFORMED_FUNCTION_CALL"))
    errors = [e for e in seen if isinstance(e, CallError)]
    assert [(e.reason, e.name, e.raw) for e in errors] == [("malformed", "add", '{"a": 2, "b": 3}')]
    assert [r.id for r in seen if isinstance(r, ToolResult)] == ["c1"]  # the retry's only
    assert len(requests) == 3
