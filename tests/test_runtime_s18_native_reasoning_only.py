"""A reply the server sent only as reasoning, in its reasoning field.

vLLM with a reasoning parser and thinking turned off (``enable_thinking:
false``; vllm-project/vllm#17357, #19222), and LocalAI, send the whole reply,
the answer too, in ``reasoning_content`` (or ``reasoning``) with empty content.
The run asked once for the answer, got the same, and ended with "the model's
reply was empty again", which said nothing of where the text went. The error
names the field and the server setting now. (It is not shown as the answer: it
was streamed and kept as reasoning, and a server that splits right sends the
model's thinking there.) Against FakeServer on 127.0.0.1.
"""

from __future__ import annotations

import pytest
from provider_support import provider_for

from streamtools.errors import RepairExhausted
from streamtools.runtime import Agent
from streamtools.runtime.hybrid import HybridAgent
from streamtools.testing import FakeServer, ScriptedModel
from streamtools.testing.fake_server import Reply
from streamtools.testing.fake_wire import ReasoningField
from streamtools.tools import tool

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
@pytest.mark.parametrize("native", [False, True])
async def test_an_answer_only_in_the_reasoning_field_is_named(
    field: ReasoningField, native: bool
) -> None:
    replies = [Reply(reasoning="2 + 3 is 5. The answer is 5.")] * 2
    async with FakeServer(replies, reasoning_field=field) as server:
        agent = Agent(provider_for(server), [add], native=native)
        with pytest.raises(RepairExhausted) as info:
            await agent.run("2 + 3?")
        assert server.remaining == 0  # asked once more for the answer, as before
    error = info.value
    assert error.reason == "empty_reply"
    message = str(error)
    assert message.startswith("the model's reply was empty again after it was asked")
    assert f"in its `{field}` field" in message
    assert "--reasoning-parser" in message and "enable_thinking" in message


async def test_an_empty_reply_without_server_reasoning_says_no_more() -> None:
    """Reasoning the model wrote in ``<think>`` (no server field) and an empty
    reply: the message does not blame a server's reasoning parser."""
    model = ScriptedModel(["<think>hm</think>", "   "])
    with pytest.raises(RepairExhausted) as info:
        await Agent(model, [add]).run("2 + 3?")
    assert str(info.value) == "the model's reply was empty again after it was asked for its answer"


async def test_hybrid_s_empty_selection_answer_is_not_the_answer() -> None:
    """HybridAgent's selection turn took a reply with nothing in it (all in the
    reasoning field) for the answer: a silent ``Final(text="")``. The work phase
    asks again now, and says why if the reply stays empty."""
    replies = [Reply(reasoning="It is 5.")] * 3
    async with FakeServer(replies) as server:
        with pytest.raises(RepairExhausted, match="in its `reasoning_content` field") as info:
            await HybridAgent(provider_for(server), [add]).run("2 + 3?")
        assert server.remaining == 0
    assert info.value.reason == "empty_reply"
    async with FakeServer([Reply(reasoning="Hm."), "It is 5."]) as server:
        result = await HybridAgent(provider_for(server), [add]).run("2 + 3?")
    assert (result.text, result.turns) == ("It is 5.", 2)
