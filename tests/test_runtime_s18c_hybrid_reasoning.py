"""HybridAgent keeps the selection turn's answer with its reasoning.

When the selection turn answers without selecting a tool, its text is the
run's answer and goes into the transcript. It went in without its reasoning
(``AssistantMessage(text=...)``), where an Agent's reply keeps it in
``AssistantMessage.reasoning`` (and where it came from, for the server that
sent it): a chat carried on from that transcript had lost it. Over a real
server on 127.0.0.1, reasoning in its own field and written as ``<think>``.
"""

from __future__ import annotations

import pytest
from provider_support import provider_for

from streamtools.events import Event, ReasoningDelta
from streamtools.runtime.hybrid import HybridAgent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply
from streamtools.tools import tool
from streamtools.transcript import AssistantMessage, UserMessage

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@pytest.mark.parametrize(
    "reply",
    [
        Reply(reasoning="No tool needed.", text="Hello!"),
        Reply(text="<think>No tool needed.</think>Hello!"),
    ],
    ids=["field", "think"],
)
async def test_the_answer_keeps_its_reasoning(reply: Reply) -> None:
    async with FakeServer([reply]) as server:
        async with HybridAgent(provider_for(server), [add]).stream("hi") as stream:
            events: list[Event] = [e async for e in stream]
    assert stream.result is not None
    user, said = stream.result.transcript.messages
    assert user == UserMessage(content="hi")
    assert isinstance(said, AssistantMessage)
    assert (said.text, said.reasoning) == ("Hello!", "No tool needed.")
    # where it came from, as the events said (the provider names it once, on
    # the first chunk; an Agent's reply keeps it too)
    origins = {e.origin for e in events if isinstance(e, ReasoningDelta)} - {None}
    assert origins == ({said.reasoning_origin} if reply.reasoning else set())
    if reply.reasoning:
        assert said.reasoning_origin is not None
        assert said.reasoning_origin.field == "reasoning_content"
