"""A reply the output token limit cut while it was still reasoning (``think_open``
with no ``</think>``, or a server's reasoning field; finish ``length``) stays
reasoning, as vLLM's and SGLang's reasoning parsers and llama.cpp return it
(reasoning, no content, finish ``length``). The model is told once that the
limit went on reasoning; cut so again, the run ended with
``RepairExhausted(reason="empty_reply")`` saying the reply "was empty": the
reply was not empty and the cause was the limit. It now ends with
``reason="max_tokens"``, as a call cut twice does, saying how much reasoning
there was (kept in the transcript the error carries) and which limit to raise."""

from __future__ import annotations

from typing import Any

import pytest

from streamtools.errors import RepairExhausted
from streamtools.events import Event, Retry, TextDelta, TurnEnd
from streamtools.model import FinishChunk, ReasoningChunk, TextChunk
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool
from streamtools.transcript import AssistantMessage

pytestmark = pytest.mark.anyio


@tool
def look(city: str) -> str:
    """Look a city up."""
    return f"{city}: sunny"


def cut_in_text(thought: str) -> list[Any]:
    return [TextChunk(text=thought), FinishChunk(reason="length")]


def cut_in_field(thought: str) -> list[Any]:
    return [ReasoningChunk(text=thought), FinishChunk(reason="length")]


@pytest.mark.parametrize(
    ("think_open", "cut"), [(True, cut_in_text), (False, cut_in_field)], ids=["text", "field"]
)
async def test_thinking_cut_twice_ends_saying_max_tokens(think_open: bool, cut: Any) -> None:
    model = ScriptedModel([cut("Let me think about Oslo"), cut("Briefly: Oslo, hmm")])
    agent = Agent(model, [look], dialect="hermes", think_open=think_open, max_tokens=64)
    events: list[Event] = []
    with pytest.raises(RepairExhausted) as info:
        async with agent.stream("weather in Oslo?") as stream:
            async for event in stream:
                events.append(event)
    error = info.value
    assert error.reason == "max_tokens"  # "empty_reply" before
    said = str(error)
    assert "max_tokens (64)" in said and "reasoning (18 characters" in said
    assert "empty" not in said
    assert [e.reason for e in events if isinstance(e, Retry)] == ["empty_reply"]
    assert [e.reason for e in events if isinstance(e, TurnEnd)] == ["retry", "error"]
    assert not any(isinstance(e, TextDelta) for e in events)  # never shown as an answer
    assert error.transcript is not None
    replies = [m for m in error.transcript.messages if isinstance(m, AssistantMessage)]
    assert [(r.text, r.reasoning) for r in replies] == [
        ("", "Let me think about Oslo"), ("", "Briefly: Oslo, hmm")
    ]
    assert len(model.requests) == 2


async def test_a_cut_after_an_empty_reply_is_still_the_limit() -> None:
    model = ScriptedModel(["", cut_in_field("Hm")])
    with pytest.raises(RepairExhausted, match=r"Raise max_tokens, or") as info:
        await Agent(model, [look]).run("weather?")
    assert info.value.reason == "max_tokens"


async def test_an_empty_reply_twice_is_still_an_empty_reply() -> None:
    with pytest.raises(RepairExhausted, match="was empty again") as info:
        await Agent(ScriptedModel(["", " "]), [look]).run("weather?")
    assert info.value.reason == "empty_reply"


async def test_thinking_cut_once_then_an_answer_is_the_answer() -> None:
    model = ScriptedModel([cut_in_text("Let me think"), "Oslo.</think>Sunny in Oslo."])
    result = await Agent(model, [look], dialect="hermes", think_open=True).run("weather?")
    assert (result.text, result.turns, result.truncated) == ("Sunny in Oslo.", 2, False)
