"""Native mode with a provider that reuses tool-call ids: the same id in every
turn (``call_0``), or twice in one reply. What the runtime keeps about a call
is not keyed by the provider's id alone, so no result is quoted, paired or lost
for another call's. An Agent over real HTTP against FakeServer."""

from __future__ import annotations

import pytest
from provider_support import provider_for

from streamtools.events import Event, Final, ToolFailed, ToolResult
from streamtools.runtime import Agent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import FakeCall, Reply, Wire
from streamtools.tools import tool
from streamtools.transcript import AssistantMessage, ToolResultMessage, Transcript

pytestmark = pytest.mark.anyio

WIRES: list[Wire] = ["openai", "anthropic"]


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def call(name: str, a: int, b: int) -> FakeCall:
    return FakeCall(name=name, arguments={"a": a, "b": b}, id="call_0")


def pairs(transcript: Transcript) -> list[tuple[str, str, str]]:
    """(call name, its result, the result's call id) in transcript order, each
    result matched to the call of its reply with its id."""
    out: list[tuple[str, str, str]] = []
    calls: dict[str, str] = {}
    for message in transcript.messages:
        if isinstance(message, AssistantMessage):
            calls = {c.id: c.name for c in message.calls}
        elif isinstance(message, ToolResultMessage):
            out.append((calls[message.call_id], message.content, message.call_id))
    return out


@pytest.mark.parametrize("wire", WIRES)
async def test_a_repeat_quotes_its_own_result_when_ids_repeat_across_turns(
    anyio_backend: str, wire: Wire
) -> None:
    replies: list[str | Reply] = [
        Reply(calls=(call("add", 1, 2),)),
        Reply(calls=(call("multiply", 20, 5),)),  # the same id in the next turn
        Reply(calls=(call("add", 1, 2),)),  # the first call again: not run, redirected
        "The sum is 3.",
    ]
    async with FakeServer(replies, wire=wire) as server:
        agent = Agent(provider_for(server), [add, multiply], native=True)
        async with agent.stream("1+2, then 20*5") as stream:
            events: list[Event] = [e async for e in stream]
    ran = [(e.name, e.content) for e in events if isinstance(e, ToolResult)]
    assert ran == [("add", "3"), ("multiply", "100")]
    refused = [e.message for e in events if isinstance(e, ToolFailed)]
    assert len(refused) == 1
    assert "Its result was:\n3" in refused[0] and "100" not in refused[0]
    assert events[-1] == Final(text="The sum is 3.", turns=4)


@pytest.mark.parametrize("wire", WIRES)
async def test_results_pair_with_their_calls_when_ids_repeat(
    anyio_backend: str, wire: Wire
) -> None:
    replies: list[str | Reply] = [
        Reply(calls=(call("add", 1, 2), call("multiply", 2, 3))),  # one id, twice in a reply
        Reply(calls=(call("multiply", 4, 5),)),  # and again in the next turn
        "Done.",
    ]
    async with FakeServer(replies, wire=wire) as server:
        result = await Agent(provider_for(server), [add, multiply], native=True).run("go")
        sent = server.requests
    paired = pairs(result.transcript)
    assert [(name, content) for name, content, _ in paired] == [
        ("add", "3"),
        ("multiply", "6"),
        ("multiply", "20"),
    ]
    first, second, third = (call_id for _, _, call_id in paired)
    assert first == "call_0" and second != "call_0" and third == "call_0"
    # the model is sent each result once, under its own call's id
    last = str(sent[2])
    assert last.count("call_0") == 4 and last.count(second) == 2
