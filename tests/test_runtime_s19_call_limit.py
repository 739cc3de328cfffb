"""``Agent(max_calls_per_reply=N)``: the calls of one reply past the first N
are not run. Each is a refused ``ToolFailed`` and a tool error in the
transcript that tells the model so; it climbs no repair rung, and the same call
made in a later reply runs (it never ran: no repeat). Without the option a small
model that wrote a dozen calls in one reply had them all run."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamtools.errors import UsageError
from streamtools.events import Event, Final, Retry, ToolFailed, ToolResult
from streamtools.model import CallChunk, FinishChunk
from streamtools.runtime import Agent
from streamtools.runtime.hybrid import HybridAgent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool
from streamtools.transcript import ToolResultMessage

pytestmark = pytest.mark.anyio

looked: list[str] = []


@tool
def look(city: str) -> str:
    """Look a city up."""
    looked.append(city)
    return f"{city}: sunny"


def hermes(*cities: str) -> str:
    return "".join(
        "<tool_call>" + json.dumps({"name": "look", "arguments": {"city": c}}) + "</tool_call>"
        for c in cities
    )


def native(*cities: str) -> list[Any]:
    chunks: list[Any] = [
        CallChunk(index=n, id=f"c{n}", name="look", arguments=json.dumps({"city": c}))
        for n, c in enumerate(cities)
    ]
    return [*chunks, FinishChunk(reason="tool_calls")]


async def run(agent: Agent) -> tuple[list[Event], Any]:
    looked.clear()
    async with agent.stream("weather?") as events:
        seen = [e async for e in events]
    return seen, events.result


@pytest.mark.parametrize("mode", ["hermes", "native"])
async def test_calls_past_the_limit_are_not_run_and_the_model_is_told(mode: str) -> None:
    cities = ("Oslo", "Rome", "Lima", "Kyiv")
    first = hermes(*cities) if mode == "hermes" else native(*cities)
    model = ScriptedModel([first, "All sunny."])
    agent = Agent(model, [look], dialect="hermes", native=mode == "native",
                  max_calls_per_reply=2)
    events, result = await run(agent)
    assert sorted(looked) == ["Oslo", "Rome"]
    assert sorted(e.content for e in events if isinstance(e, ToolResult)) == [
        "Oslo: sunny", "Rome: sunny"
    ]
    refused = [e for e in events if isinstance(e, ToolFailed)]
    assert [(e.index, e.kind) for e in refused] == [(2, "refused"), (3, "refused")]
    assert all("only the first 2 tool calls of a reply are run" in e.message for e in refused)
    assert not any(isinstance(e, Retry) for e in events)  # no repair rung
    assert isinstance(events[-1], Final) and events[-1].text == "All sunny."
    # the model reads why, in the request after the reply
    results = [m for m in result.transcript.messages if isinstance(m, ToolResultMessage)]
    assert [m.is_error for m in results] == [False, False, True, True]
    told = json.dumps([m for m in model.requests[1].messages], default=str)
    assert "was not run: only the first 2 tool calls" in told


async def test_a_call_not_run_for_the_limit_runs_when_made_again() -> None:
    model = ScriptedModel([hermes("Oslo", "Rome"), hermes("Rome"), "Done."])
    agent = Agent(model, [look], dialect="hermes", max_calls_per_reply=1)
    events, _ = await run(agent)
    assert looked == ["Oslo", "Rome"]
    assert not any(isinstance(e, Retry) for e in events)  # Rome's second call is no repeat


async def test_without_the_option_every_call_runs() -> None:
    model = ScriptedModel([hermes("Oslo", "Rome", "Lima"), "Done."])
    await run(Agent(model, [look], dialect="hermes"))
    assert sorted(looked) == ["Lima", "Oslo", "Rome"]


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_the_limit_is_a_whole_number_of_at_least_one(bad: Any) -> None:
    with pytest.raises(UsageError, match="max_calls_per_reply"):
        Agent(ScriptedModel([]), [look], max_calls_per_reply=bad)
    with pytest.raises(UsageError, match="max_calls_per_reply"):
        HybridAgent(ScriptedModel([]), [look], max_calls_per_reply=bad)
