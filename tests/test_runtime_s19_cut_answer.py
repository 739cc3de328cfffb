"""A ``json_object`` answer cut at the output token limit is the answer cut
short, with the same events as an answer cut so in native mode: its text so far,
``Finish(length)``, ``TurnEnd(final)``, ``Final(truncated=True)``. A consumer saw
a ``CallError`` first ("The call to the tool was cut off"), for what was no call.
An object cut in its call is still a ``CallError``, repaired."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamtools.events import CallError, Event, Final, ReasoningDelta, Retry, TextDelta
from streamtools.model import FinishChunk, TextChunk
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool
from streamtools.transcript import AssistantMessage, Transcript

pytestmark = pytest.mark.anyio


@tool
def look(city: str) -> str:
    """Look a city up."""
    return "sunny"


def cut(text: str) -> list[Any]:
    return [TextChunk(text=text[:9]), TextChunk(text=text[9:]), FinishChunk(reason="length")]


async def run(agent: Agent, transcript: Transcript) -> list[Event]:
    async with agent.stream(transcript) as events:
        return [e async for e in events]


def shape(events: list[Event]) -> list[str]:
    """The kinds of events, adjacent text deltas as one, reasoning left out."""
    kinds: list[str] = []
    for event in events:
        kind = type(event).__name__
        if isinstance(event, ReasoningDelta) or (kinds and kinds[-1] == kind == "TextDelta"):
            continue
        kinds.append(kind)
    return kinds


async def test_an_answer_cut_at_max_tokens_has_the_events_native_mode_gives() -> None:
    answer = '{"thought": "easy", "final": {"content": "The long answ'
    prompt_transcript, native_transcript = Transcript(), Transcript()
    prompt_transcript.user("explain")
    native_transcript.user("explain")
    prompt = await run(
        Agent(ScriptedModel([cut(answer)]), [look], dialect="json_object"), prompt_transcript
    )
    native = await run(
        Agent(ScriptedModel([cut("The long answ")]), [look], native=True), native_transcript
    )
    assert not any(isinstance(e, CallError) for e in prompt)
    assert shape(prompt) == shape(native) == [
        "TurnStart", "TextDelta", "Finish", "TurnEnd", "Final"
    ]
    assert prompt[-1] == native[-1] == Final(text="The long answ", turns=1, truncated=True)
    assert "".join(e.text for e in prompt if isinstance(e, TextDelta)) == "The long answ"
    # the history keeps the answer as text, not the broken object
    [reply] = [m for m in prompt_transcript.messages if isinstance(m, AssistantMessage)]
    assert reply.text == "The long answ"


async def test_an_object_cut_in_its_call_is_still_a_call_error() -> None:
    action = '{"thought": "t", "action": {"tool": "look", "args": {"city": "Os'
    done = json.dumps({"final": {"content": "Sunny."}})
    transcript = Transcript()
    transcript.user("weather?")
    events = await run(
        Agent(ScriptedModel([cut(action), done]), [look], dialect="json_object"), transcript
    )
    [error] = [e for e in events if isinstance(e, CallError)]
    assert (error.name, error.reason) == ("look", "unterminated")
    assert [e.reason for e in events if isinstance(e, Retry)] == ["call_error"]
    assert events[-1] == Final(text="Sunny.", turns=2)
