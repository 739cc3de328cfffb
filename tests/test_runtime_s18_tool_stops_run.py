"""A tool that stops the run (a ``BaseException`` that is not an ``Exception``:
``KeyboardInterrupt``, a class of its own) left the transcript passed in
without the reply, though its other calls had run: a chat that catches the
interrupt and goes on had the model make them again. The reply is now kept as
for a consumer who leaves: the results of the calls that finished, and a tool
error for the others ("the run was stopped while it ran"). So is a reply with
calls whose model stream raised something other than ``ProviderError``."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from streamtools.model import Chunk, TextChunk
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool
from streamtools.transcript import AssistantMessage, ToolResultMessage, Transcript

pytestmark = pytest.mark.anyio

ran: list[str] = []


class Halt(BaseException):
    """A tool's own way to stop everything (not an ``Exception``)."""


@tool
async def pay(amount: int) -> str:
    """Pay an amount."""
    ran.append(f"pay {amount}")
    return f"paid {amount}"


@tool
async def wait_long(seconds: int) -> str:
    """Wait."""
    try:
        await anyio.sleep(seconds)
    finally:
        ran.append("wait_long ended")
    return "waited"  # pragma: no cover


@tool
async def halt(reason: str) -> str:
    """Stop everything."""
    await anyio.wait_all_tasks_blocked()  # the other calls have started
    await anyio.sleep(0.05)
    raise Halt(reason)


def hermes(name: str, **arguments: Any) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def results(transcript: Transcript) -> dict[str, tuple[str, bool]]:
    return {
        m.name: (m.content, m.is_error)
        for m in transcript.messages
        if isinstance(m, ToolResultMessage)
    }


async def test_a_tool_that_stops_the_run_leaves_what_ran_in_the_transcript() -> None:
    ran.clear()
    reply = "Paying. " + hermes("pay", amount=5) + hermes("wait_long", seconds=60)
    reply += hermes("halt", reason="operator")
    model = ScriptedModel([reply, "Paid 5 before the stop."])
    agent = Agent(model, [pay, wait_long, halt], dialect="hermes")
    chat = Transcript()
    chat.user("pay 5")
    with pytest.raises(Halt):
        await agent.run(chat)
    assert ran == ["pay 5", "wait_long ended"]
    said = chat.messages[1]
    assert isinstance(said, AssistantMessage) and said.text.startswith("Paying. ")
    assert [c.name for c in said.calls] == ["pay", "wait_long", "halt"]
    stopped = "did not finish: the run was stopped while it ran."
    assert results(chat) == {
        "pay": ("paid 5", False),
        "wait_long": (f"`wait_long` {stopped}", True),
        "halt": (f"`halt` {stopped}", True),
    }
    # the chat goes on: the model is told pay ran, and it is not made again
    chat.user("did it pay?")
    result = await agent.run(chat)
    assert result.text == "Paid 5 before the stop."
    assert "paid 5" in str(model.requests[-1].messages)
    assert ran == ["pay 5", "wait_long ended"]


async def test_a_stream_that_raises_another_error_keeps_the_calls_that_ran() -> None:
    ran.clear()
    broken: list[Chunk | Exception] = [
        TextChunk(text=hermes("pay", amount=3)),
        RuntimeError("the client broke"),
    ]
    chat = Transcript()
    chat.user("pay 3")
    with pytest.raises(RuntimeError, match="the client broke"):
        # (the delay before the error lets the dispatched call run)
        await Agent(ScriptedModel([broken], delay=0.05), [pay], dialect="hermes").run(chat)
    assert ran == ["pay 3"]
    assert results(chat) == {"pay": ("paid 3", False)}


async def test_a_stream_that_raises_with_no_call_leaves_the_transcript_as_it_was() -> None:
    broken: list[Chunk | Exception] = [TextChunk(text="Half a sent"), RuntimeError("broke")]
    chat = Transcript()
    chat.user("hi")
    with pytest.raises(RuntimeError):
        await Agent(ScriptedModel([broken]), [pay], dialect="hermes").run(chat)
    assert len(chat.messages) == 1
