"""A reply with nothing in it is not the answer: one re-prompt, then RepairExhausted."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamtools.errors import RepairExhausted
from streamtools.events import Event, Final, Retry, TurnEnd
from streamtools.model import Chunk, FinishChunk, ReasoningChunk, TextChunk
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool
from streamtools.transcript import UserMessage

pytestmark = pytest.mark.anyio


def hermes(name: str, **arguments: Any) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def test_an_empty_reply_after_results_is_asked_again() -> None:
    """Models now and then answer tool results with nothing; the run ended with
    ``Final(text="")``, which a caller cannot tell from an answer."""
    model = ScriptedModel([hermes("add", a=1, b=2), "", "1 + 2 = 3."])
    agent = Agent(model, [add], dialect="hermes")
    async with agent.stream("1 + 2?") as stream:
        events: list[Event] = [e async for e in stream]
    retries = [e for e in events if isinstance(e, Retry)]
    assert [r.reason for r in retries] == ["empty_reply"]
    assert TurnEnd(turn=2, reason="retry") in events
    assert events[-1] == Final(text="1 + 2 = 3.", turns=3)
    last = model.requests[-1].messages[-1]
    assert "Your reply was empty" in str(last.content)
    assert "using the tool results above" in str(last.content)


async def test_empty_again_is_an_error_that_says_why() -> None:
    thinking_only: list[Chunk] = [ReasoningChunk(text="Let me think"), FinishChunk(reason="length")]
    model = ScriptedModel(["   ", thinking_only])
    with pytest.raises(RepairExhausted, match="output token limit") as info:
        await Agent(model, [add], dialect="hermes").run("hi")
    # the limit cut it, reasoning (test_runtime_s20_cut_thinking): no empty reply
    assert info.value.reason == "max_tokens"
    assert "Raise max_tokens" in str(info.value)
    assert info.value.transcript is not None
    assert isinstance(info.value.transcript.messages[0], UserMessage)


async def test_an_answer_is_not_asked_again_and_a_refusal_still_comes_first() -> None:
    model = ScriptedModel([[TextChunk(text="Hello."), FinishChunk(reason="stop")]])
    result = await Agent(model, [add], dialect="hermes").run("hi")
    assert result.text == "Hello." and len(model.requests) == 1
    required = ScriptedModel(["", hermes("add", a=1, b=1), "2"])
    agent = Agent(required, [add], dialect="hermes", tool_choice="required")
    async with agent.stream("1 + 1?") as stream:
        reasons = [e.reason async for e in stream if isinstance(e, Retry)]
    assert reasons == ["missing_call"]  # a call is what the empty reply lacked
