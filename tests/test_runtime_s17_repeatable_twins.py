"""Two identical calls in one reply of a tool marked ``repeatable`` (its result
may differ from one call to the next: a die, a fresh id, a clock) are two
calls: "roll two dice" is ``roll()`` twice in parallel. The second was refused
as a twin ("only the first of them is answered"), so the model got one roll
and was told it had written the call by mistake. A twin of any other tool is
still refused (tests/test_agent_repeats.py)."""

from __future__ import annotations

import itertools

import anyio
import pytest

from streamtools.events import ToolFailed, ToolResult
from streamtools.model import CallChunk, Chunk, FinishChunk
from streamtools.runtime.agent import Agent
from streamtools.testing import ScriptedModel
from streamtools.tools import Tool, tool

pytestmark = pytest.mark.anyio

ROLL = '<tool_call>{"name": "roll", "arguments": {}}</tool_call>'


def dice() -> tuple[Tool, list[int]]:
    faces = itertools.cycle([3, 5, 1])
    rolled: list[int] = []

    @tool(repeatable=True)
    def roll() -> int:
        """Roll a die."""
        face = next(faces)
        rolled.append(face)
        return face

    return roll, rolled


async def test_twins_of_a_repeatable_tool_each_run(anyio_backend: str) -> None:
    roll, rolled = dice()
    model = ScriptedModel([ROLL + ROLL, "You rolled 3 and 5."])
    agent = Agent(model, [roll], dialect="hermes")
    with anyio.fail_after(10):
        async with agent.stream("roll two dice") as stream:
            events = [e async for e in stream]
    assert sorted(rolled) == [3, 5]
    assert not [e for e in events if isinstance(e, ToolFailed)]
    results = sorted(e.content for e in events if isinstance(e, ToolResult))
    assert results == ["3", "5"]
    told = str(model.requests[1].messages)
    assert "3" in told and "5" in told and "only the first" not in told


async def test_native_twins_of_a_repeatable_tool_each_run(anyio_backend: str) -> None:
    roll, rolled = dice()
    reply: list[Chunk] = [
        CallChunk(index=0, id="a", name="roll", arguments="{}", done=True),
        CallChunk(index=1, id="b", name="roll", arguments="{}", done=True),
        FinishChunk(reason="tool_calls"),
    ]
    model = ScriptedModel([reply, "3 and 5."])
    with anyio.fail_after(10):
        result = await Agent(model, [roll], native=True).run("roll two dice")
    assert sorted(rolled) == [3, 5]
    sent = [(m.tool_call_id, m.content) for m in model.requests[1].messages if m.role == "tool"]
    assert [call_id for call_id, _ in sent] == ["a", "b"]
    assert sorted(content for _, content in sent) == ["3", "5"]
    assert result.text == "3 and 5."
