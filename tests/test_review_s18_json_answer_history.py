"""A ``json_object`` answer cut at max_tokens (7d5feb2: the answer, marked
truncated) is kept in the history as that answer.

The transcript kept the reply as written, the broken object's raw text after
the answer's text (as for a call to fix): ``The long answ{"thought": "easy",
"final": {"content": "The long answ``, which the next request rendered as the
model's answer, ``{"final": {"content": "The long answ{\\"thought\\"...``: the
model read a garbled copy of what it wrote."""

from __future__ import annotations

import json

import pytest

from streamtools.model import Chunk, FinishChunk, TextChunk
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool
from streamtools.transcript import AssistantMessage, Transcript

pytestmark = pytest.mark.anyio


@tool
def write(path: str, content: str) -> str:
    """Write a text file."""
    return f"wrote {path}"


def cut(text: str) -> list[Chunk]:
    return [TextChunk(text=text), FinishChunk(reason="length")]


async def test_the_history_keeps_the_cut_answer_once() -> None:
    model = ScriptedModel([
        cut('{"thought": "easy", "final": {"content": "The long answ'),
        '{"final": {"content": "More."}}',
    ])
    agent = Agent(model, [write], dialect="json_object")
    transcript = Transcript()
    transcript.user("explain")
    first = await agent.run(transcript)
    assert (first.text, first.truncated) == ("The long answ", True)
    replies = [m for m in transcript.messages if isinstance(m, AssistantMessage)]
    assert [m.text for m in replies] == ["The long answ"]
    assert replies[0].reasoning == "easy"

    transcript.user("go on")
    second = await agent.run(transcript)
    assert second.text == "More."
    sent = [m for m in model.requests[-1].messages if m.role == "assistant"]
    assert len(sent) == 1
    # the model reads its own answer back as one whole object of the dialect
    assert json.loads(sent[0].content) == {"final": {"content": "The long answ"}}


async def test_a_cut_call_is_still_kept_as_written_for_its_repair() -> None:
    raw = '{"thought": "t", "action": {"tool": "write", "args": {"path": "a", "content": "x x'
    model = ScriptedModel([cut(raw), '{"final": {"content": "Done."}}'])
    transcript = Transcript()
    transcript.user("go")
    result = await Agent(model, [write], dialect="json_object").run(transcript)
    assert result.text == "Done."
    # a cut call is no answer: its reply is kept as written, for the repair
    replies = [m.text for m in transcript.messages if isinstance(m, AssistantMessage)]
    assert replies[0] == raw
