"""A failed tool's result as each wire sends it back in native mode: Anthropic's
``tool_result`` block flags it (``is_error: true``, as the API documents); the
chat wires without a flag (OpenAI-compatible, Ollama) say it in the content.
An Agent over real HTTP against FakeServer, and the request body alone."""

from __future__ import annotations

from typing import Any

import pytest
from provider_support import provider_for

from streamtools.events import Event, ToolFailed, ToolResult
from streamtools.model import ChatMessage, ModelRequest, NativeCall
from streamtools.providers import AnthropicMessages
from streamtools.runtime import Agent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import FakeCall, Reply, Wire
from streamtools.tools import tool

pytestmark = pytest.mark.anyio


@tool
def lookup(city: str) -> str:
    """Look a city up."""
    return f"{city}: sunny"


@tool
def explode(city: str) -> str:
    """Fail."""
    raise RuntimeError(f"no station in {city}")


CALLS = Reply(
    calls=(
        FakeCall(name="lookup", arguments={"city": "Paris"}),
        FakeCall(name="explode", arguments={"city": "Rome"}),
    )
)


async def second_request(wire: Wire) -> tuple[list[Event], dict[str, Any]]:
    """The events of a run whose first reply calls both tools, and the body of
    the request that sent their results back."""
    async with FakeServer([CALLS, "Done."], wire=wire) as server:
        agent = Agent(provider_for(server), [lookup, explode], native=True)
        async with agent.stream("Weather?") as stream:
            events = [e async for e in stream]
        return events, server.requests[1]


async def test_anthropic_flags_a_failed_tool_result(anyio_backend: str) -> None:
    """The failure went as content alone, without the flag the API documents."""
    events, body = await second_request("anthropic")
    outcomes = {e.name: type(e) for e in events if isinstance(e, ToolResult | ToolFailed)}
    assert outcomes == {"lookup": ToolResult, "explode": ToolFailed}  # they run concurrently
    results = [
        block
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_result"
    ]
    assert len(results) == 2
    ok, failed = results
    assert "is_error" not in ok and ok["content"] == "Paris: sunny"
    assert failed["is_error"] is True and "no station in Rome" in failed["content"]


@pytest.mark.parametrize("wire", ["openai", "ollama"])
async def test_chat_wires_say_the_failure_in_the_content(anyio_backend: str, wire: Wire) -> None:
    _, body = await second_request(wire)
    tools = [m for m in body["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tools][0] == "Paris: sunny"
    failed = tools[1]
    assert failed["content"].startswith("Error:") and "no station in Rome" in failed["content"]
    assert "is_error" not in failed  # no such field on these wires: the server may refuse it


def test_anthropic_body_flags_only_the_tool_messages_marked_so() -> None:
    call = NativeCall(id="toolu_1", name="lookup", arguments={"city": "Rome"})
    request = ModelRequest(
        messages=(
            ChatMessage(role="user", content="Weather?"),
            ChatMessage(role="assistant", content="", tool_calls=(call,)),
            ChatMessage(role="tool", content="Error: down", tool_call_id="toolu_1", is_error=True),
        )
    )
    body = AnthropicMessages("claude").request_body(request)
    (result,) = body["messages"][-1]["content"]
    assert result == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "Error: down",
        "is_error": True,
    }
