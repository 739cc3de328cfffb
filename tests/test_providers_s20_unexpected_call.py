"""Gemini ends an answer with ``finish_reason: UNEXPECTED_TOOL_CALL`` when the
model called a tool the request did not let it call: none offered, or
``tool_choice`` none (tensorzero/tensorzero#2329), or a function it was not
given (epam/ai-dial-adapter-vertexai#325). Its OpenAI-compatible endpoint
passes the reason on as it is; OpenRouter keeps it in ``native_finish_reason``.
It was read as an empty answer (the agent asked for "its answer", then gave up
on an empty reply), and a call streamed with it ran. Now the reply holds a
``CallError(unknown_tool)`` that says what happened, nothing runs, and the
model is told what it may do (FakeServer over HTTP, OpenAI wire)."""

from __future__ import annotations

from typing import Any

import pytest
from provider_support import DONE, collect, mock, sse

from streamtools.events import CallEnd, CallError, Event, Final, Retry, ToolResult
from streamtools.model import CallChunk, ChatMessage, FinishChunk, ModelRequest, ToolSpec
from streamtools.native import NativeCalls
from streamtools.providers import OpenAIChat
from streamtools.runtime.agent import Agent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply
from streamtools.tools import tool

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _end(finish: str, native: str | None = None, call: bool = False) -> str:
    delta: dict[str, Any] = {"role": "assistant"}
    if call:  # the refused call itself, as Gemini's candidate holds it
        function = {"name": "add", "arguments": '{"a": 2, "b": 3}'}
        delta["tool_calls"] = [{"index": 0, "id": "c1", "type": "function", "function": function}]
    choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": finish}
    if native is not None:
        choice["native_finish_reason"] = native
    return sse({"object": "chat.completion.chunk", "choices": [choice]}, DONE)


GEMINI = _end("UNEXPECTED_TOOL_CALL")  # Google's OpenAI-compatible endpoint
OPENROUTER = _end("stop", "UNEXPECTED_TOOL_CALL")
SHAPES = pytest.mark.parametrize("body", [GEMINI, OPENROUTER], ids=["gemini", "openrouter"])


def _raw(body: str) -> Reply:
    return Reply(raw=body.encode(), content_type="text/event-stream")


@SHAPES
async def test_a_refused_call_under_tool_choice_none_is_told_to_answer_in_text(
    anyio_backend: str, body: str
) -> None:
    async with FakeServer([_raw(body), "It is 5."], wire="openai") as server:
        model = OpenAIChat("gemini-2.5-pro", base_url=server.base_url, max_retries=0)
        agent = Agent(model, [add], native=True, tool_choice="none")
        async with agent.stream("What is 2 + 3?") as events:
            seen: list[Event] = [e async for e in events]
        requests = server.requests
    errors = [e for e in seen if isinstance(e, CallError)]
    assert [(e.reason, e.name, e.raw) for e in errors] == [("unknown_tool", None, "")]
    assert "answer in text" in errors[0].message
    assert [r.reason for r in seen if isinstance(r, Retry)] == ["call_error"]
    told = requests[1]["messages"][-1]
    assert told["role"] == "user" and "The API refused" in told["content"]
    assert not any(isinstance(e, ToolResult) for e in seen)
    assert [f.text for f in seen if isinstance(f, Final)] == ["It is 5."]


@SHAPES
async def test_the_finish_names_the_reason_as_sent(anyio_backend: str, body: str) -> None:
    chunks = await collect(OpenAIChat("m", client=mock(body), max_retries=0))
    assert chunks == [
        FinishChunk(
            reason="unexpected_call",
            message="OpenAI-compatible server ended the answer with finish_reason "
            "'UNEXPECTED_TOOL_CALL': the model called a tool that could not be called "
            "for this answer",
        )
    ]


def _request() -> ModelRequest:
    return ModelRequest(
        messages=(ChatMessage(role="user", content="hi"),),
        tools=(ToolSpec(name="add", description="Add.", parameters={"type": "object"}),),
        tool_choice="none",
    )


@pytest.mark.parametrize(
    "body",
    [_end("UNEXPECTED_TOOL_CALL", call=True), _end("stop", "UNEXPECTED_TOOL_CALL", call=True)],
    ids=["gemini", "openrouter"],
)
async def test_a_call_streamed_with_the_refusal_does_not_run(
    anyio_backend: str, body: str
) -> None:
    async with FakeServer([_raw(body)], wire="openai") as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url, max_retries=0), _request())
    calls = [c for c in chunks if isinstance(c, CallChunk)]
    assert calls and not any(c.done for c in calls)  # not complete by the wire's say-so
    native = NativeCalls(["add"])
    events = [e for c in calls for e in native.feed(c)]
    finish = chunks[-1]
    assert isinstance(finish, FinishChunk)
    events += native.end(finish.reason)
    assert not any(isinstance(e, CallEnd) for e in events)
    errors = [e for e in events if isinstance(e, CallError)]
    assert [(e.reason, e.name, e.raw) for e in errors] == [
        ("unknown_tool", "add", '{"a": 2, "b": 3}')
    ]
    # it was given add, and was refused all the same: the request said to call none
    assert errors[0].message.endswith("answer in text, without calling a tool.")


def test_a_nameless_refusal_lists_the_tools_it_may_call() -> None:
    [error] = NativeCalls(["add", "mul"]).end("unexpected_call")
    assert isinstance(error, CallError) and error.name is None
    listed = "The only tools you may call are: `add`, `mul`; or answer in text."
    assert error.message.endswith(listed)
