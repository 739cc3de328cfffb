"""``ReasoningRetracted``: with ``think_open``, a reply that finishes with no
``</think>`` streams as reasoning, then is read again as its answer (c56ea2c).
A UI that showed the reasoning got the same text again as the answer. The
event, sent once just before the answer, says the reasoning so far was that
answer; the console does not write it twice, the AI SDK stream carries it as a
transient data part, and the chat page drops the reasoning it showed."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from test_ui_support import UIReader

from streamtools.events import (
    Event,
    ReasoningDelta,
    ReasoningRetracted,
    TextDelta,
    decode_event,
    encode_events,
)
from streamtools.runtime import Agent
from streamtools.runtime.console import ConsoleRenderer
from streamtools.runtime.hybrid import HybridAgent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool
from streamtools.ui import UIMessageStreamEncoder
from streamtools.ui.aisdk import RETRACTED

pytestmark = pytest.mark.anyio

ANSWER = "Paris is the capital of France."


@tool
def look(city: str) -> str:
    """Look a city up."""
    return f"{city}: sunny"


def call(city: str) -> str:
    body = json.dumps({"name": "look", "arguments": {"city": city}})
    return f"<tool_call>{body}</tool_call>"


async def events_of(agent: Agent | HybridAgent, prompt: str = "capital of France?") -> list[Event]:
    async with agent.stream(prompt) as stream:
        return [e async for e in stream]


def agent(replies: list[str], *, native: bool = False) -> Agent:
    model = ScriptedModel(replies, chunk_sizes=(1, 7))
    return Agent(model, [look], dialect="hermes", think_open=True, native=native)


@pytest.mark.parametrize("native", [False, True])
async def test_a_reread_reply_says_its_reasoning_was_the_answer(native: bool) -> None:
    events = await events_of(agent([ANSWER], native=native))
    retracted = [i for i, e in enumerate(events) if isinstance(e, ReasoningRetracted)]
    assert [events[i] for i in retracted] == [ReasoningRetracted(text=ANSWER)]
    [at] = retracted
    # after every ReasoningDelta it retracts, before the answer's first text
    assert max(i for i, e in enumerate(events) if isinstance(e, ReasoningDelta)) < at
    assert min(i for i, e in enumerate(events) if isinstance(e, TextDelta)) > at
    # a UI that drops the reasoning shown at the event has the answer once
    shown = "".join(e.text for e in events[:at] if isinstance(e, ReasoningDelta))
    assert shown == retracted_text(events)
    # it encodes and decodes as the other events do
    [line] = encode_events([events[at]]).splitlines()
    assert decode_event(line) == events[at]


def retracted_text(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, ReasoningRetracted))


async def test_a_reply_whose_thinking_closes_retracts_nothing() -> None:
    events = await events_of(agent(["Hm, France.</think>" + ANSWER]))
    assert not any(isinstance(e, ReasoningRetracted) for e in events)


async def test_a_hybrid_selection_answered_without_thinking_retracts_its_reasoning() -> None:
    model = ScriptedModel([ANSWER], chunk_sizes=(1, 6))
    events = await events_of(HybridAgent(model, [look], dialect="hermes", think_open=True))
    assert [e for e in events if isinstance(e, ReasoningRetracted)] == [
        ReasoningRetracted(text=ANSWER)
    ]


def console(events: list[Event]) -> str:
    out = io.StringIO()
    renderer = ConsoleRenderer(out, color=False)
    for event in events:
        renderer.render(event)
    return out.getvalue()


async def test_the_console_shows_a_reread_answer_once() -> None:
    shown = console(await events_of(agent([ANSWER])))
    assert shown.count("Paris") == 1, shown  # twice before: as reasoning, then as text
    assert ANSWER in shown


async def test_the_console_shows_a_reread_call_once_and_the_text_after_its_line() -> None:
    reply = "Checking. " + call("Oslo")
    shown = console(await events_of(agent([reply, "Sunny.</think>It is sunny."])))
    assert shown.count("Checking.") == 1, shown
    lines = shown.splitlines()
    assert '  -> look {"city": "Oslo"}' in lines  # the call's own line, as for any call
    assert "  <- look: Oslo: sunny" in lines
    assert "It is sunny." in lines


def test_the_console_writes_what_the_answer_adds_to_the_reasoning_shown() -> None:
    # The parser holds a possible marker's start back ("<"): the reasoning shown
    # ends before it, and the answer read again has it.
    events: list[Event] = [
        ReasoningDelta(text="a "), ReasoningRetracted(text="a "), TextDelta(text="a < b"),
    ]
    assert console(events) == "a < b"
    # an answer that went another way is written whole
    assert console([*events[:2], TextDelta(text="other")]) == "a other"


class RetractingReader(UIReader):
    """The AI SDK reader, with a client whose ``onData`` drops the parts named."""

    def feed(self, chunk: dict[str, Any]) -> None:
        if chunk["type"] != RETRACTED:
            super().feed(chunk)
            return
        # the SDK's schema for a data chunk: strict, these keys only
        assert set(chunk) <= {"type", "id", "data", "transient"}, chunk
        assert chunk["transient"] is True  # not a part of the message
        assert not self.open, "a reasoning part left open"
        texts = [p["text"] for p in self.parts if p["type"] == "reasoning"]
        assert chunk["data"]["text"] in texts
        self.dropped = chunk["data"]["ids"]
        self.parts = [p for p in self.parts if p.get("text") != chunk["data"]["text"]]


async def test_the_ai_sdk_stream_lets_a_client_drop_the_reasoning() -> None:
    events = await events_of(agent([ANSWER]))
    encoder = UIMessageStreamEncoder()
    reader = RetractingReader()
    for event in events:
        for chunk in encoder.encode(event):
            reader.feed(chunk)
    for chunk in encoder.close():
        reader.feed(chunk)
    parts = [(p["type"], p.get("text")) for p in reader.parts if p["type"] != "step-start"]
    assert parts == [("text", ANSWER)]
    assert reader.dropped == ["reasoning-1"]


def test_the_chat_page_handles_the_retraction() -> None:
    # The page (no browser here): its reader removes the parts the chunk names.
    page = (Path(__file__).parent.parent / "streamtools" / "ui" / "chat.html").read_text()
    at = page.index(f'case "{RETRACTED}"')
    handler = page[at : page.index("break;", at)]
    assert "chunk.data.ids" in handler and ".remove()" in handler and "splice" in handler


async def test_nothing_shown_nothing_retracted() -> None:
    # "</thi" could start </think>: the parser held all of it back, so no reasoning
    # was streamed, and the reply read again is its text alone
    events = await events_of(agent(["</thi"]))
    assert not any(isinstance(e, ReasoningDelta | ReasoningRetracted) for e in events)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "</thi"
