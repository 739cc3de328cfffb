"""A reply that announces a tool call and makes none ("Let me check the weather
in Paris.", or words ending in a colon where the call should follow), then
stops: the run took it as the final answer, and the user got a promise and no
result. Agent loops meet it with local models, Gemini and GPT-4.1 alike
(HKUDS/nanobot#825, NousResearch/hermes-agent#78113,
shenjianan97/persistent-agent-runtime#97). Such a reply is now asked once to make
the call, or to answer (``Retry(missing_call)``); answers, questions and offers
are left alone."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamtools.events import Event, Final, Retry, ToolResult
from streamtools.model import CallChunk, FinishChunk, TextChunk
from streamtools.runtime import Agent
from streamtools.runtime.repair import looks_like_announcement
from streamtools.testing import ScriptedModel
from streamtools.tools import tool

pytestmark = pytest.mark.anyio


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"{city}: sunny"


def call(city: str) -> str:
    body = json.dumps({"name": "weather", "arguments": {"city": city}})
    return f"<tool_call>{body}</tool_call>"


async def events_of(agent: Agent) -> list[Event]:
    async with agent.stream("weather in Paris?") as stream:
        return [e async for e in stream]


@pytest.mark.parametrize(
    "announcement",
    ["Sure! Let me check the weather in Paris.", "Checking the forecast for Paris:",
     "I'll look up the weather for Paris now...", "OK, I will search for it."],
)
async def test_an_announced_call_is_asked_for(announcement: str) -> None:
    model = ScriptedModel([announcement, call("Paris"), "Sunny in Paris."])
    events = await events_of(Agent(model, [weather], dialect="hermes"))
    retries = [e for e in events if isinstance(e, Retry)]
    assert [r.reason for r in retries] == ["missing_call"]
    assert "made no tool call" in retries[0].message and "<tool_call>" in retries[0].message
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["Paris: sunny"]
    assert events[-1] == Final(text="Sunny in Paris.", turns=3)  # before: the announcement


async def test_native_mode_is_asked_for_a_function_call() -> None:
    native: list[Any] = [
        CallChunk(index=0, id="c1", name="weather", arguments='{"city": "Paris"}'),
        FinishChunk(reason="tool_calls"),
    ]
    model = ScriptedModel(["Let me check that for you.", native, "Sunny."])
    events = await events_of(Agent(model, [weather], native=True))
    [retry] = [e for e in events if isinstance(e, Retry)]
    assert "function call" in retry.message
    assert events[-1] == Final(text="Sunny.", turns=3)


async def test_asked_once_per_run() -> None:
    model = ScriptedModel(["Let me check.", "Let me check again."])
    events = await events_of(Agent(model, [weather], dialect="hermes"))
    assert len([e for e in events if isinstance(e, Retry)]) == 1
    assert events[-1] == Final(text="Let me check again.", turns=2)


@pytest.mark.parametrize(
    "answer",
    ["It is sunny in Paris. Let me know if you need anything else.",
     "Shall I check the weather in Paris?", "Do you want me to look it up?",
     "Paris is sunny today. " * 15 + "I'll check again tomorrow.", "Sunny, 21 °C."],
)
async def test_answers_questions_and_offers_are_answers(answer: str) -> None:
    model = ScriptedModel([answer])
    events = await events_of(Agent(model, [weather], dialect="hermes"))
    assert not any(isinstance(e, Retry) for e in events)
    assert events[-1] == Final(text=answer, turns=1)


async def test_no_tool_to_call_or_a_cut_reply_is_an_answer() -> None:
    for agent in (
        Agent(ScriptedModel(["Let me check the weather."]), [], dialect="hermes"),
        Agent(ScriptedModel(["Let me check the weather."]), [weather], tool_choice="none"),
    ):
        events = await events_of(agent)
        assert events[-1] == Final(text="Let me check the weather.", turns=1)
    cut: list[Any] = [TextChunk(text="Checking the forecast:"), FinishChunk(reason="length")]
    events = await events_of(Agent(ScriptedModel([cut]), [weather], dialect="hermes"))
    assert events[-1] == Final(text="Checking the forecast:", turns=1, truncated=True)


@given(st.text(max_size=400))
def test_a_question_is_never_an_announcement(text: str) -> None:
    assert not looks_like_announcement(text.rstrip() + "?")
