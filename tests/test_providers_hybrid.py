"""Hybrid mode over real HTTP: native selection from summaries, then the am_xml dialect."""

from __future__ import annotations

from typing import Any

import pytest

from streamtools.errors import ProviderError
from streamtools.events import (
    Event,
    Final,
    ReasoningDelta,
    TextDelta,
    ToolResult,
    TurnEnd,
    TurnStart,
)
from streamtools.providers import AnthropicMessages, OpenAIChat
from streamtools.runtime.hybrid import SELECT_TOOLS, HybridAgent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import FakeCall, Reply
from streamtools.tools import tool
from streamtools.transcript import AssistantMessage, Transcript

pytestmark = pytest.mark.anyio


@tool(name="kom.math.v1.multiply")
def multiply(a: int, b: int) -> int:
    """Multiply two integers exactly.

    Only the first paragraph is the description.
    """
    return a * b


@tool
def clock(timezone: str = "UTC") -> str:
    """The current time in a time zone (CLOCK-DETAIL)."""
    return "12:00"


FULL_MULTIPLY = '<am:tool name="kom.math.v1.multiply"'
FULL_CLOCK = '<am:tool name="clock"'


def select(*names: str) -> Reply:
    return Reply(
        text="Let me pick.", calls=(FakeCall(name=SELECT_TOOLS, arguments={"names": list(names)}),)
    )


def system_of(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"])


async def collect(agent: HybridAgent, prompt: str | Transcript) -> list[Event]:
    async with agent.stream(prompt) as events:
        return [e async for e in events]


async def test_selection_then_dialect(anyio_backend: str) -> None:
    call = '<am:tool_call name="kom.math.v1.multiply"><a>6</a><b>7</b></am:tool_call>'
    replies: list[str | Reply] = [select("kom.math.v1.multiply", "nope"), call, "It is 42."]
    async with FakeServer(replies) as server:
        model = OpenAIChat("m", base_url=server.base_url)
        agent = HybridAgent(model, [multiply, clock], temperature=0.1, top_p=0.8, seed=3)
        events = await collect(agent, "6*7?")
        first, second, _ = server.requests
    # the sampling options go with both phases' requests
    for body in (first, second):
        assert (body["temperature"], body["top_p"], body["seed"]) == (0.1, 0.8, 3)
        assert "top_k" not in body
    # turn 0: summaries only, one native tool with the names as an enum
    assert [t["function"]["name"] for t in first["tools"]] == [SELECT_TOOLS]
    enum = first["tools"][0]["function"]["parameters"]["properties"]["names"]["items"]["enum"]
    assert enum == ["kom.math.v1.multiply", "clock"]
    assert FULL_MULTIPLY not in system_of(first) and "kom.math.v1.multiply" in system_of(first)
    # work phase: the chosen tool in full, the other in summary, no native tools
    assert "tools" not in second
    assert FULL_MULTIPLY in system_of(second) and FULL_CLOCK not in system_of(second)
    assert "clock" in system_of(second)
    assert "Let me pick." not in str(second["messages"])
    assert events[0] == TurnStart(turn=0) and TextDelta(text="Let") in events
    assert TurnEnd(turn=0, reason="tool_calls") in events
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["42"]
    assert events[-1] == Final(text="It is 42.", turns=3)


async def test_request_tools_adds_a_tool_mid_conversation(anyio_backend: str) -> None:
    replies: list[str | Reply] = [
        select("kom.math.v1.multiply"),
        "<am:request_tools>clock</am:request_tools>",
        '<am:tool_call name="clock"><timezone>UTC</timezone></am:tool_call>',
        "Noon.",
    ]
    async with FakeServer(replies) as server:
        agent = HybridAgent(OpenAIChat("m", base_url=server.base_url), [multiply, clock])
        events = await collect(agent, "time?")
        requests = server.requests
    assert FULL_CLOCK not in system_of(requests[1])
    assert FULL_CLOCK in system_of(requests[2])
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["12:00"]
    assert events[-1] == Final(text="Noon.", turns=4)


async def test_no_selection_is_the_answer(anyio_backend: str) -> None:
    transcript = Transcript()
    async with FakeServer(["Hello! No tools needed."]) as server:
        agent = HybridAgent(OpenAIChat("m", base_url=server.base_url), [multiply, clock])
        result = await agent.run(transcript_with(transcript, "hi"))
        assert len(server.requests) == 1
    assert result.text == "Hello! No tools needed." and result.turns == 1
    assert transcript.messages[-1] == AssistantMessage(text="Hello! No tools needed.")


async def test_selection_failure_raises(anyio_backend: str) -> None:
    async with FakeServer([Reply(status=400, body='{"error": "tools unsupported"}')]) as server:
        agent = HybridAgent(OpenAIChat("m", base_url=server.base_url), [multiply])
        with pytest.raises(ProviderError, match="tools unsupported"):
            await agent.run("hi")


def transcript_with(transcript: Transcript, text: str) -> Transcript:
    transcript.user(text)
    return transcript


async def test_a_signed_thinking_block_shows_its_text_only(anyio_backend: str) -> None:
    """Anthropic ends a thinking block with its signature (a chunk with no text);
    the selection turn shows the reasoning, not an empty delta for the signature."""
    calls = (FakeCall(name=SELECT_TOOLS, arguments={"names": ["clock"]}),)
    replies: list[str | Reply] = [Reply(reasoning="Time.", calls=calls), "Noon."]
    async with FakeServer(replies, wire="anthropic") as server:
        agent = HybridAgent(AnthropicMessages("m", base_url=server.base_url), [clock])
        events = await collect(agent, "What time is it?")
    reasoning = [e.text for e in events if isinstance(e, ReasoningDelta)]
    assert "".join(reasoning) == "Time." and all(reasoning)
    assert events[-1] == Final(text="Noon.", turns=2)
