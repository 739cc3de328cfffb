"""A run the consumer stops mid-turn: what its transcript keeps."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from streamtools.events import CallEnd, TextDelta, ToolResult
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool
from streamtools.transcript import AssistantMessage, ToolResultMessage, Transcript, UserMessage

pytestmark = pytest.mark.anyio


def hermes(name: str, **arguments: Any) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


sent: list[str] = []


@tool
async def send_email(to: str) -> str:
    """Send an email."""
    sent.append(to)
    return f"sent to {to}"


@tool
async def slow_report() -> str:
    """Take a long time."""
    await anyio.sleep_forever()
    return "unreachable"


async def test_a_stopped_turn_keeps_what_ran_and_what_was_said() -> None:
    """The user stops the run while the reply goes on after a call that ran (an
    email sent) and one that still runs: the transcript lost the whole turn, so
    the next question ("did you send it?") went to a model that knew nothing of
    the email, and could send it again."""
    sent.clear()
    reply = (
        "Sending it now. " + hermes("send_email", to="bob") + hermes("slow_report") + " More text"
    )
    model = ScriptedModel([reply, "unreachable"], chunk_sizes=(4, 4), delay=0.01)
    agent = Agent(model, [send_email, slow_report], dialect="hermes")
    transcript = Transcript()
    transcript.user("Email Bob, then report.")
    async with agent.stream(transcript) as events:
        sent_seen = report_seen = False
        async for event in events:
            sent_seen |= isinstance(event, ToolResult)
            report_seen |= isinstance(event, CallEnd) and event.name == "slow_report"
            if sent_seen and report_seen:
                break  # the user presses stop: the email is sent, the report runs
    assert sent == ["bob"]
    messages = transcript.messages
    assert [type(m) for m in messages] == [
        UserMessage,
        AssistantMessage,
        ToolResultMessage,
        ToolResultMessage,
    ]
    assistant = messages[1]
    assert isinstance(assistant, AssistantMessage)
    assert assistant.text.startswith("Sending it now. ")
    assert [c.name for c in assistant.calls] == ["send_email", "slow_report"]
    done, running = messages[2], messages[3]
    assert isinstance(done, ToolResultMessage) and done.content == "sent to bob"
    assert isinstance(running, ToolResultMessage) and running.is_error
    assert running.content == "`slow_report` did not finish: the run was stopped while it ran."


async def test_text_said_before_the_stop_is_kept_and_nothing_when_nothing_was_said() -> None:
    model = ScriptedModel(["The answer is forty-two, because"], chunk_sizes=(5, 5), delay=0.05)
    transcript = Transcript()
    transcript.user("Why?")
    async with Agent(model, [send_email], dialect="hermes").stream(transcript) as events:
        seen = ""
        async for event in events:
            if isinstance(event, TextDelta):
                seen += event.text
                if len(seen) >= 10:
                    break
    assistant = transcript.messages[-1]
    assert isinstance(assistant, AssistantMessage)
    assert assistant.text.startswith(seen) and len(assistant.text) < len(
        "The answer is forty-two, because"
    )

    silent = Transcript()
    silent.user("Why?")
    with anyio.move_on_after(0.001):
        await Agent(ScriptedModel(["x"], delay=1.0), [send_email]).run(silent)
    assert silent.messages == [UserMessage(content="Why?")]
