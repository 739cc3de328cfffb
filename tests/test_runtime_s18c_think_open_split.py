"""``think_open`` against a server that splits reasoning into its own field.

``think_open=True`` says the chat template ends the prompt with ``<think>``:
the reply begins inside reasoning, until ``</think>``. A server that splits
reasoning out (llama-server's default ``--reasoning-format``, vLLM's and
SGLang's reasoning parsers, Ollama's ``thinking``) has read that tag itself:
its reasoning comes in ``reasoning_content`` / ``thinking`` and the text holds
the answer alone, with no ``</think>``. The whole answer was then read as
reasoning, in prompt and native mode alike: nothing visible, a prompt-mode call
never run. The provider's reasoning now ends the opening reasoning: the text
after it is text, at any chunking.
"""

from __future__ import annotations

import pytest
from parser_cases import chunkings, merge
from provider_support import provider_for

from streamtools.events import (
    Event,
    Final,
    ParserEvent,
    ReasoningDelta,
    TextDelta,
    ToolResult,
)
from streamtools.model import FinishChunk
from streamtools.runtime import Agent
from streamtools.runtime.decoders import NativeDecoder, PromptDecoder
from streamtools.runtime.hybrid import HybridAgent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import FakeCall, Reply
from streamtools.tools import tool
from streamtools.transcript import AssistantMessage

pytestmark = pytest.mark.anyio

CALL = '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>'


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _reasoning(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, ReasoningDelta))


def _visible(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


@pytest.mark.parametrize("wire", ["openai", "ollama"])
@pytest.mark.parametrize("native", [False, True], ids=["prompt", "native"])
async def test_the_answer_after_split_reasoning_is_text(wire: str, native: bool) -> None:
    first = (
        Reply(reasoning="I should add 2 and 3.", text="Adding.", calls=(FakeCall(
            name="add", arguments={"a": 2, "b": 3}),))
        if native
        else Reply(reasoning="I should add 2 and 3.", text=f"Adding.{CALL}")
    )
    replies = [first, Reply(reasoning="Got 5.", text="It is 5.")]
    async with FakeServer(replies, wire=wire) as server:  # type: ignore[arg-type]
        agent = Agent(
            provider_for(server), [add], dialect="hermes", native=native, think_open=True
        )
        async with agent.stream("2 + 3?") as stream:
            events = [e async for e in stream]
        assert server.remaining == 0
    assert _reasoning(events) == "I should add 2 and 3.Got 5."
    assert _visible(events) == "Adding.It is 5."
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["5"]
    assert events[-1] == Final(text="It is 5.", turns=2)
    assert stream.result is not None
    said = [m for m in stream.result.transcript.messages if isinstance(m, AssistantMessage)]
    assert [m.reasoning for m in said] == ["I should add 2 and 3.", "Got 5."]
    assert said[-1].text == "It is 5."


async def test_the_hybrid_selection_turn_too() -> None:
    replies = [Reply(reasoning="No tool needed.", text="Hello!")]
    async with FakeServer(replies) as server:
        agent = HybridAgent(provider_for(server), [add], think_open=True)
        async with agent.stream("hi") as stream:
            events = [e async for e in stream]
    assert _reasoning(events) == "No tool needed."
    assert _visible(events) == "Hello!"
    assert stream.result is not None and stream.result.text == "Hello!"


def _decode(native: bool, before: list[str], after: list[str]) -> list[ParserEvent]:
    """Text ``before`` the provider's reasoning, the reasoning, text ``after``."""
    decoder = (
        NativeDecoder(None, stop=("END",), think_open=True)
        if native
        else PromptDecoder("hermes", None, ("END",), id_prefix="c_", think_open=True)
    )
    events: list[ParserEvent] = []
    for piece in before:
        events += decoder.text(piece)
    events += decoder.reasoning()
    events.append(ReasoningDelta(text="R"))
    for piece in after:
        events += decoder.text(piece)
        if decoder.stopped:
            break
    return events + decoder.end(FinishChunk(reason="stop"))


@pytest.mark.parametrize("native", [False, True], ids=["prompt", "native"])
@pytest.mark.parametrize(
    ("before", "after", "reasoning", "visible"),
    [
        ("", "\n<think>x</think>there. END no", "Rx", "\nthere. "),
        # what came as text before it was reasoning, held text included
        ("\n<thi", "\nAnswer.", "\n<thiR", "\nAnswer."),
        # the reply had left its reasoning already: the provider's changes nothing
        ("plan</think>Hi", " there", "planR", "Hi there"),
    ],
)
def test_at_every_chunking(
    native: bool, before: str, after: str, reasoning: str, visible: str
) -> None:
    results = []
    for how, chunks in chunkings(after):
        events = _decode(native, [before], chunks)
        assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == reasoning, how
        assert "".join(e.text for e in events if isinstance(e, TextDelta)) == visible, how
        results.append(merge([e for e in events if isinstance(e, TextDelta | ReasoningDelta)]))
    assert all(r == results[0] for r in results)


def test_without_think_open_nothing_changes() -> None:
    decoder = PromptDecoder("hermes", None, (), id_prefix="c_")
    assert decoder.reasoning() == []
    assert decoder.text("plain") == [TextDelta(text="plain")]
