"""A test that scripted (or recorded) fewer model calls than the agent makes
is told why and what to do. ``ScriptedModel`` said only "has 1 replies;
request 2 has none", and a new user who scripted the reply with the call but
not the answer after it could not tell what request 2 was; ``Replay`` said the
same of a recording the run outgrew, with no word of how to find out why."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamtools.errors import UsageError
from streamtools.runtime import Agent, Replay, record
from streamtools.testing import ScriptedModel
from streamtools.tools import tool

pytestmark = pytest.mark.anyio

CALL = '<am:tool_call name="add"><a>2</a><b>3</b></am:tool_call>'


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def test_a_script_without_the_answer_says_what_the_request_was() -> None:
    with pytest.raises(UsageError) as raised:
        await Agent(ScriptedModel([CALL]), [add]).run("What is 2 + 3?")
    message = str(raised.value)
    assert message.startswith("ScriptedModel has 1 reply; request 2 has none")
    # the request it could not answer: the tool's result, in the dialect's form
    assert '<am:tool_result name="add">5</am:tool_result>' in message
    assert "asks the model again after each turn whose tool calls ran" in message
    assert "one reply per request" in message


async def test_the_request_shown_is_cut_short() -> None:
    model = ScriptedModel([])
    with pytest.raises(UsageError) as raised:
        await Agent(model).run("word " * 100)
    message = str(raised.value)
    assert message.startswith("ScriptedModel has 0 replies; request 1 has none")
    assert "(its last message, user: 'word word" in message and "…')" in message
    assert len(message) < 400


async def test_a_recording_the_run_outgrew_says_how_to_see_why(tmp_path: Path) -> None:
    path = tmp_path / "short.jsonl"
    await Agent(record(ScriptedModel(["Five."]), path), [add]).run("What is 2 + 3?")
    with pytest.raises(UsageError) as raised:
        # the run now makes a call the recorded one did not: it asks a second time
        agent = Agent(Replay(path), [add])
        await agent.run("What is 2 + 3?")
        await agent.run("And 3 + 4?")
    message = str(raised.value)
    assert "holds 1 model call; call 2 has none" in message
    assert "record it again" in message and "match_requests=True" in message
