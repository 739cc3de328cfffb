"""``Agent(answer_at_max_turns=True)``: a run that reached ``max_turns`` while the
model was still calling tools raised ``BudgetExceeded`` with no answer, the
work of every turn lost to a caller who wanted an answer (users of agent loops
ask for it: openai/openai-agents-python#844 and #1630, whose runner gained
max-turns error handlers, #2347; google-gemini/gemini-cli#11820;
context-labs/whip#90 finalises with tools disabled). The last turn now asks
for the answer instead (native: ``tool_choice`` none), a call written anyway is
refused and not run, and a reply without calls is the ``Final`` answer."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamtools.errors import BudgetExceeded
from streamtools.events import Event, Final, ToolFailed, ToolResult
from streamtools.model import CallChunk, FinishChunk
from streamtools.runtime import Agent
from streamtools.runtime.hybrid import HybridAgent
from streamtools.runtime.repair import LAST_TURN_NOTE, LAST_TURN_REFUSAL
from streamtools.testing import ScriptedModel
from streamtools.tools import tool
from streamtools.transcript import Transcript

pytestmark = pytest.mark.anyio

looked: list[str] = []


@tool
def look(city: str) -> str:
    """Look a city up."""
    looked.append(city)
    return f"{city}: sunny"


def call(city: str) -> str:
    body = json.dumps({"name": "look", "arguments": {"city": city}})
    return f"<tool_call>{body}</tool_call>"


def native_call(city: str, n: int) -> list[Any]:
    arguments = json.dumps({"city": city})
    return [
        CallChunk(index=0, id=f"c{n}", name="look", arguments=arguments),
        FinishChunk(reason="tool_calls"),
    ]


def last_user_text(model: ScriptedModel) -> str:
    message = model.requests[-1].messages[-1]
    assert message.role == "user"
    return str(message.content)


async def events_of(agent: Agent, prompt: str | Transcript) -> list[Event]:
    looked.clear()
    events: list[Event] = []
    async with agent.stream(prompt) as stream:
        async for event in stream:
            events.append(event)
    return events


async def test_the_last_turn_asks_for_the_answer() -> None:
    model = ScriptedModel([call("Oslo"), "Oslo is sunny; Rome I could not check."])
    agent = Agent(model, [look], dialect="hermes", max_turns=2, answer_at_max_turns=True)
    transcript = Transcript()
    transcript.user("weather in Oslo and Rome?")
    events = await events_of(agent, transcript)
    assert events[-1] == Final(text="Oslo is sunny; Rome I could not check.", turns=2)
    assert LAST_TURN_NOTE not in str(model.requests[0].messages[-1].content)
    assert LAST_TURN_NOTE in last_user_text(model)
    # in that request only: a chat going on from the transcript is not told it
    assert LAST_TURN_NOTE not in transcript.encode().decode()


async def test_without_the_option_the_budget_still_raises() -> None:
    model = ScriptedModel([call("Oslo"), call("Rome")])
    agent = Agent(model, [look], dialect="hermes", max_turns=2)
    with pytest.raises(BudgetExceeded):
        await events_of(agent, "weather in Oslo and Rome?")
    assert looked == ["Oslo", "Rome"]  # the last turn's call ran, as documented
    assert LAST_TURN_NOTE not in last_user_text(model)


async def test_a_call_on_the_last_turn_is_refused_and_the_budget_raises() -> None:
    model = ScriptedModel([call("Oslo"), "Let me check Rome. " + call("Rome")])
    agent = Agent(model, [look], dialect="hermes", max_turns=2, answer_at_max_turns=True)
    events: list[Event] = []
    looked.clear()
    with pytest.raises(BudgetExceeded) as info:
        async with agent.stream("weather in Oslo and Rome?") as stream:
            async for event in stream:
                events.append(event)
    assert looked == ["Oslo"]  # Rome's call was not run
    refused = [e for e in events if isinstance(e, ToolFailed)]
    assert [(e.name, e.kind, e.message) for e in refused] == [
        ("look", "refused", LAST_TURN_REFUSAL)
    ]
    assert info.value.transcript is not None  # the work so far goes with the error


async def test_native_mode_sends_tool_choice_none_on_the_last_turn() -> None:
    model = ScriptedModel([native_call("Oslo", 1), native_call("Rome", 2), "Oslo is sunny."])
    agent = Agent(model, [look], native=True, max_turns=3, answer_at_max_turns=True)
    events = await events_of(agent, "weather in Oslo and Rome?")
    assert [r.tool_choice for r in model.requests] == ["auto", "auto", "none"]
    assert [e.content for e in events if isinstance(e, ToolResult)] == [
        "Oslo: sunny", "Rome: sunny"
    ]
    assert LAST_TURN_NOTE in last_user_text(model)
    assert events[-1] == Final(text="Oslo is sunny.", turns=3)


async def test_one_turn_allowed_is_a_turn_with_tools() -> None:
    model = ScriptedModel(["Sunny."])
    agent = Agent(model, [look], dialect="hermes", max_turns=1, answer_at_max_turns=True)
    await events_of(agent, "weather?")
    assert LAST_TURN_NOTE not in last_user_text(model)


async def test_a_hybrid_agent_passes_it_on() -> None:
    names = '{"names": ["look"]}'
    select: list[Any] = [
        CallChunk(index=0, id="s", name="select_tools", arguments=names),
        FinishChunk(reason="tool_calls"),
    ]
    model = ScriptedModel([select, call("Oslo"), "Oslo is sunny."])
    agent = HybridAgent(model, [look], dialect="hermes", max_turns=2, answer_at_max_turns=True)
    async with agent.stream("weather in Oslo?") as stream:
        events = [e async for e in stream]
    assert isinstance(events[-1], Final) and events[-1].text == "Oslo is sunny."
    assert LAST_TURN_NOTE in last_user_text(model)
