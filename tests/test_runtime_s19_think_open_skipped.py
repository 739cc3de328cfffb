"""``think_open=True`` and a model that skips its thinking: the reply finishes
(``stop``) with no ``</think>``, and it was all read as reasoning, so the agent
saw an empty reply, asked again ("your reply was empty") and, the model
answering so again, raised ``RepairExhausted``. Such a reply is read again as one
without ``think_open`` when it finishes: its text comes as ``TextDelta`` (after
the ``ReasoningDelta`` it streamed as), it is the answer, a call in it runs, and
the transcript keeps it as text, not reasoning. One cut at the token limit is
unfinished thinking, as vLLM and llama.cpp read it: still reasoning."""

from __future__ import annotations

from typing import Any

import pytest

from streamtools.events import Event, Final, ReasoningDelta, Retry, TextDelta, ToolResult
from streamtools.model import FinishChunk, TextChunk
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool
from streamtools.transcript import AssistantMessage, Transcript

pytestmark = pytest.mark.anyio


@tool
def look(city: str) -> str:
    """Look a city up."""
    return f"{city}: sunny"


async def run(model: ScriptedModel, native: bool) -> tuple[list[Event], Transcript]:
    transcript = Transcript()
    transcript.user("capital of France?")
    agent = Agent(model, [look], dialect="hermes", think_open=True, native=native)
    async with agent.stream(transcript) as events:
        return [e async for e in events], transcript


def replies(transcript: Transcript) -> list[AssistantMessage]:
    return [m for m in transcript.messages if isinstance(m, AssistantMessage)]


@pytest.mark.parametrize("native", [False, True])
@pytest.mark.parametrize("sizes", [(1, 1), (1, 6), (40, 40)])
async def test_an_answer_without_thinking_is_the_answer(
    native: bool, sizes: tuple[int, int]
) -> None:
    answer = "  Paris is the capital."
    model = ScriptedModel([answer], chunk_sizes=sizes)
    events, transcript = await run(model, native)
    assert events[-1] == Final(text=answer, turns=1)
    assert len(model.requests) == 1  # not asked again for an answer
    assert not any(isinstance(e, Retry) for e in events)
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == answer
    # it streamed as reasoning first, then came as the answer
    last_reasoning = max(i for i, e in enumerate(events) if isinstance(e, ReasoningDelta))
    first_text = min(i for i, e in enumerate(events) if isinstance(e, TextDelta))
    assert last_reasoning < first_text
    [reply] = replies(transcript)
    assert (reply.text, reply.reasoning) == (answer, "")


async def test_a_call_written_without_thinking_runs() -> None:
    call = 'Checking. <tool_call>{"name": "look", "arguments": {"city": "Oslo"}}</tool_call>'
    model = ScriptedModel([call, "Sunny in Oslo.</think>It is sunny."])
    events, transcript = await run(model, native=False)
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["Oslo: sunny"]
    assert events[-1] == Final(text="It is sunny.", turns=2)
    first, second = replies(transcript)
    assert first.text == "Checking. " and [c.name for c in first.calls] == ["look"]
    assert second.reasoning == "Sunny in Oslo."  # closed: reasoning as ever


@pytest.mark.parametrize("native", [False, True])
async def test_thinking_cut_at_the_token_limit_stays_reasoning(native: bool) -> None:
    cut: list[Any] = [TextChunk(text="Let me think about"), FinishChunk(reason="length")]
    model = ScriptedModel([cut, "Paris.</think>Paris."])
    events, transcript = await run(model, native)
    assert [e.reason for e in events if isinstance(e, Retry)] == ["empty_reply"]
    assert not any(isinstance(e, TextDelta) and "think" in e.text for e in events)
    assert events[-1] == Final(text="Paris.", turns=2)
    assert replies(transcript)[0].reasoning == "Let me think about"


async def test_a_reply_whose_thinking_closes_is_unchanged() -> None:
    model = ScriptedModel(["Hm, France.</think>Paris."])
    events, transcript = await run(model, native=False)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Paris."
    [reply] = replies(transcript)
    assert (reply.text, reply.reasoning) == ("Paris.", "Hm, France.")

