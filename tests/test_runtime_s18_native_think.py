"""Native mode reads ``<think>`` in the model's text as prompt mode does.

A server that does not split reasoning out (llama-server with
``--reasoning-format none``, vLLM without a reasoning parser, Ollama's OpenAI
endpoint without ``think``) streams a DeepSeek-R1 distill's or Qwen3's
``<think>…</think>`` as content. ``NativeDecoder`` passed it through as visible
text; it is ``ReasoningDelta`` now (the core parser's logic, ``think_open`` and
stop strings included), at any chunking, while the native call deltas still go
through ``NativeCalls``.
"""

from __future__ import annotations

import pytest
from parser_cases import chunkings, merge
from provider_support import provider_for

from streamtools.events import (
    CallEnd,
    Event,
    Final,
    Finish,
    ParserEvent,
    ReasoningDelta,
    TextDelta,
    ToolResult,
)
from streamtools.model import CallChunk, FinishChunk
from streamtools.runtime import Agent
from streamtools.runtime.decoders import NativeDecoder
from streamtools.runtime.hybrid import HybridAgent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import FakeCall, Reply
from streamtools.tools import tool
from streamtools.transcript import AssistantMessage

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


CALL = '<tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>'


def decode(
    chunks: list[str], *, stop: tuple[str, ...] = (), think_open: bool = False
) -> list[ParserEvent]:
    """``chunks`` of text through a ``NativeDecoder``, a native call's two deltas
    fed around the first (before any stop string can end the reply), then the end."""
    decoder = NativeDecoder(None, id_prefix="n_", stop=stop, think_open=think_open)
    events: list[ParserEvent] = []
    for i, chunk in enumerate(chunks):
        if i == 0:
            events += decoder.call(CallChunk(index=0, id="c1", name="add", arguments='{"a": 2,'))
        events += decoder.text(chunk)
        if i == 0:
            events += decoder.call(CallChunk(index=0, arguments=' "b": 3}'))
        if decoder.stopped:
            break
    return events + decoder.end(FinishChunk(reason="tool_calls"))


@pytest.mark.parametrize(
    ("text", "think_open", "stop", "reasoning", "visible", "hit"),
    [
        # a call written while reasoning is reasoning, as in prompt mode
        (
            f"<think>Maybe {CALL}? No.</think>Adding.", False, (),
            f"Maybe {CALL}? No.", "Adding.", None,
        ),
        ("\n<think>a</think> there", False, (), "a", "\n there", None),
        # after the answer began, the tag is the answer's text (core's Decisions)
        ("Hi <think>a</think> there", False, (), "", "Hi <think>a</think> there", None),
        ("an orphan </think> is text", False, (), "", "an orphan </think> is text", None),
        ("<think>unclosed, all reasoning", False, (), "unclosed, all reasoning", "", None),
        # the chat template opened <think>: the reply starts inside reasoning
        ("Plan it.\n</think>\n\nAdding.", True, (), "Plan it.\n", "\n\nAdding.", None),
        (" <think>Plan.</think>Adding.", True, (), " Plan.", "Adding.", None),
        # a stop string ends the text, a provider's stop as a prompt dialect's
        ("<think>x END y</think>z", False, ("END",), "x ", "", "END"),
        ("<think>x</think>ok END more", False, ("END",), "x", "ok ", "END"),
    ],
)
def test_native_text_reads_think_at_every_chunking(
    text: str,
    think_open: bool,
    stop: tuple[str, ...],
    reasoning: str,
    visible: str,
    hit: str | None,
) -> None:
    results = []
    for how, chunks in chunkings(text):
        events = decode(chunks, stop=stop, think_open=think_open)
        got = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
        assert got == reasoning, how
        assert "".join(e.text for e in events if isinstance(e, TextDelta)) == visible, how
        [end] = [e for e in events if isinstance(e, CallEnd)]
        assert (end.id, end.name, end.arguments) == ("c1", "add", {"a": 2, "b": 3}), how
        assert events[-1] == Finish(reason="tool_calls", stop_sequence=hit), how
        assert sum(isinstance(e, Finish) for e in events) == 1, how
        # the text's events, apart from where the call's fall among them
        results.append(merge([e for e in events if isinstance(e, (TextDelta, ReasoningDelta))]))
    assert all(r == results[0] for r in results)


def _reasoning(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, ReasoningDelta))


def _visible(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


@pytest.mark.parametrize("think_open", [False, True])
async def test_a_native_agent_over_http_keeps_think_as_reasoning(think_open: bool) -> None:
    """End to end over a real server on 127.0.0.1 (the text streamed in token-like
    pieces, so the tags arrive cut): the reasoning is reasoning, the native call
    runs, and the transcript keeps the reasoning beside each reply, as prompt
    mode's does, not in its text."""
    opened = "" if think_open else "<think>"
    replies = [
        Reply(
            text=f"{opened}I should add 2 and 3.</think>Adding.",
            calls=(FakeCall(name="add", arguments={"a": 2, "b": 3}),),
        ),
        Reply(text=f"{opened}Got 5.</think>It is 5."),
    ]
    async with FakeServer(replies, wire="openai") as server:
        agent = Agent(provider_for(server), [add], native=True, think_open=think_open)
        async with agent.stream("2 + 3?") as stream:
            events = [e async for e in stream]
        assert server.remaining == 0
    assert _reasoning(events) == "I should add 2 and 3.Got 5."
    assert _visible(events) == "Adding.It is 5."
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["5"]
    assert events[-1] == Final(text="It is 5.", turns=2)
    assert stream.result is not None
    said = [m for m in stream.result.transcript.messages if isinstance(m, AssistantMessage)]
    assert [(m.text, m.reasoning) for m in said] == [
        ("Adding.", "I should add 2 and 3."),
        ("It is 5.", "Got 5."),
    ]


async def test_hybrid_selection_turn_reads_think_as_reasoning() -> None:
    """HybridAgent's native selection turn reads its text as an Agent's native
    reply does: ``<think>`` there was shown as the answer's text."""
    async with FakeServer([Reply(text="<think>No tool needed.</think>Hello!")]) as server:
        async with HybridAgent(provider_for(server), [add]).stream("hi") as stream:
            events = [e async for e in stream]
    assert _reasoning(events) == "No tool needed."
    assert _visible(events) == "Hello!"
    assert stream.result is not None and stream.result.text == "Hello!"
