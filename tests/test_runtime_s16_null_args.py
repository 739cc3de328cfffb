"""A native call whose arguments are streamed as ``null`` (some servers send it for
a tool with no parameters) is a call with no arguments: a tool whose parameters
are all optional runs, one with a required parameter is told what is missing
(FakeServer over HTTP, OpenAI wire, through the agent)."""

from __future__ import annotations

from typing import Any

import pytest

from streamtools.events import ArgsDelta, CallEnd, CallError, Event, ToolFailed, ToolResult
from streamtools.providers import OpenAIChat
from streamtools.runtime.agent import Agent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import FakeCall, Reply
from streamtools.tools import tool

pytestmark = pytest.mark.anyio


@tool
def clock(zone: str = "UTC") -> str:
    """The time in a zone."""
    return f"noon {zone}"


@tool
def ping() -> str:
    """Whether the service is up."""
    return "pong"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def run(name: str, answer: str) -> tuple[list[Event], list[Any]]:
    call = FakeCall(name=name, arguments="null", id="c1")
    replies: list[Reply | str] = [Reply(calls=(call,)), answer]
    async with FakeServer(replies, wire="openai") as server:
        agent = Agent(OpenAIChat("m", base_url=server.base_url), [clock, ping, add], native=True)
        async with agent.stream("Go.") as events:
            seen = [e async for e in events]
        return seen, server.requests


@pytest.mark.parametrize(("name", "content"), [("clock", "noon UTC"), ("ping", "pong")])
async def test_null_arguments_run_a_tool_without_required_parameters(
    anyio_backend: str, name: str, content: str
) -> None:
    seen, bodies = await run(name, "Done.")
    assert [e.delta for e in seen if isinstance(e, ArgsDelta)] == ["null"]  # as streamed
    assert not any(isinstance(e, CallError) for e in seen)
    ends = [e for e in seen if isinstance(e, CallEnd)]
    assert [(e.name, e.arguments, e.raw) for e in ends] == [(name, {}, "null")]
    results = [e for e in seen if isinstance(e, ToolResult)]
    assert [(r.name, r.content) for r in results] == [(name, content)]
    # the call goes back to the model as a call with no arguments, beside its result
    sent = bodies[1]["messages"]
    calls = [c for m in sent for c in (m.get("tool_calls") or [])]
    assert [(c["function"]["name"], c["function"]["arguments"]) for c in calls] == [(name, "{}")]
    assert [m["content"] for m in sent if m["role"] == "tool"] == [content]


async def test_null_arguments_for_a_tool_with_required_parameters_say_what_is_missing(
    anyio_backend: str,
) -> None:
    seen, _ = await run("add", "I could not add.")
    failed = [e for e in seen if isinstance(e, ToolFailed)]
    assert [f.kind for f in failed] == ["invalid_arguments"]
    assert "missing required field `a`" in failed[0].message
    assert not any(isinstance(e, ToolResult) for e in seen)
