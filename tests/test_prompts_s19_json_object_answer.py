"""json_object: an answer whose text is JSON beginning as one of the dialect's
objects (``{"action": …``, ``{"thought": …``, ``{"final": …``) went back into the
history unwrapped since 8fea4cc, which took such text for the raw text of a call
that failed to parse: the model read its answer as a broken call. The transcript
now says which replies hold a failed call's raw text (``AssistantMessage.unparsed``,
set by the runtime and the proxy's repair), and only those go back as written."""

from __future__ import annotations

import json

import pytest

from streamtools import Agent, tool
from streamtools.prompts import project
from streamtools.testing import ScriptedModel
from streamtools.transcript import AssistantMessage, Transcript, UserMessage


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


ANSWER = '{"action": "deploy", "thought": "ok"}'


@pytest.mark.anyio
async def test_an_answer_that_is_json_goes_back_as_an_answer() -> None:
    first = json.dumps({"final": {"content": ANSWER}})
    model = ScriptedModel([first, '{"final": {"content": "done"}}'])
    agent = Agent(model, [add], dialect="json_object")
    result = await agent.run("Give me the deploy object.")
    assert result.text == ANSWER
    result.transcript.add(UserMessage(content="Again?"))
    await agent.run(result.transcript)
    said = [m.content for m in model.requests[1].messages if m.role == "assistant"]
    assert [json.loads(s) for s in said] == [{"final": {"content": ANSWER}}]


@pytest.mark.anyio
async def test_a_failed_call_is_marked_and_goes_back_as_written() -> None:
    broken = '{"thought": "sum", "action": {"tool": "add", "args": {"a": 1, "b": 2}'
    model = ScriptedModel([broken, '{"final": {"content": "3"}}'])
    result = await Agent(model, [add], dialect="json_object").run("1+2?")
    replies = [m for m in result.transcript.messages if isinstance(m, AssistantMessage)]
    assert [(m.text, m.unparsed) for m in replies] == [(broken, True), ("3", False)]
    said = [m.content for m in model.requests[1].messages if m.role == "assistant"]
    assert said == [broken]


@pytest.mark.parametrize("unparsed", [False, True])
def test_merged_replies_keep_the_mark(unparsed: bool) -> None:
    transcript = Transcript(messages=[
        UserMessage(content="q"),
        AssistantMessage(text=ANSWER, unparsed=unparsed),
        AssistantMessage(text=""),
    ])
    messages = project(transcript, "json_object", [])
    (said,) = [m.content for m in messages if m.role == "assistant"]
    assert (said == ANSWER) is unparsed
