"""The proxy, when the upstream's token limit cuts a call before it was
announced on the wire (before its name), or cuts a ``json_object`` answer in
its text: the turn ends with the length finish, as for an announced call.

Such a cut was repaired as a broken call: the upstream was asked again with
the same limit, and the client got the first reply's text, then the second's,
then (cut again, or no repair left) the first reply's markup as text. For
``json_object`` that was the answer's start, the new answer after it, and
the whole broken object: ``The long answ`` ``Second.`` (7d5feb2 made the
agent read such a cut as the truncated answer; the proxy did not)."""

from __future__ import annotations

from typing import Any

import pytest

from streamtools.events import CallStart, Event, Finish, TextDelta
from streamtools.model import Chunk, FinishChunk, TextChunk, ToolSpec
from streamtools.proxy.request import ProxyCall
from streamtools.proxy.turn import run_turn
from streamtools.testing import ScriptedModel
from streamtools.transcript import Transcript, UserMessage

pytestmark = pytest.mark.anyio

TOOLS = [
    ToolSpec(
        name="weather",
        description="Weather for a city.",
        parameters={"type": "object", "properties": {"city": {"type": "string"}}},
    )
]


def cut(text: str) -> list[Chunk]:
    return [TextChunk(text=text), FinishChunk(reason="length")]


async def run(dialect: str, first: str, **call: Any) -> tuple[list[Event], ScriptedModel]:
    # a second reply for a re-prompt, which a length cut must not get
    model = ScriptedModel([cut(first), "Second."])
    transcript = Transcript(messages=[UserMessage(content="Weather in Paris?")])
    events: list[Event] = []

    async def emit(event: Event) -> None:
        events.append(event)

    proxied = ProxyCall(model="m", transcript=transcript, tools=list(TOOLS), **call)
    await run_turn(model, proxied, emit, dialect=dialect)
    return events, model


def text(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def finish(events: list[Event]) -> Finish:
    ends = [e for e in events if isinstance(e, Finish)]
    assert len(ends) == 1
    return ends[0]


async def test_a_json_object_answer_cut_in_its_text_ends_with_length() -> None:
    events, model = await run(
        "json_object", '{"thought": "easy", "final": {"content": "The long answ'
    )
    assert len(model.requests) == 1  # not asked again into the same limit
    assert text(events) == "The long answ"  # the answer so far, no object markup
    assert finish(events).reason == "length"


@pytest.mark.parametrize(
    ("dialect", "reply"),
    [
        ("am_xml", 'Let me check. <am:tool_call name="weat'),
        ("hermes", 'Let me check. <tool_call>{"name": "wea'),
    ],
)
async def test_a_call_cut_before_its_name_ends_with_length(dialect: str, reply: str) -> None:
    events, model = await run(dialect, reply)
    assert len(model.requests) == 1
    assert text(events) == "Let me check. "  # its markup is not passed on as text
    assert not any(isinstance(e, CallStart) for e in events)
    assert finish(events).reason == "length"


async def test_a_call_broken_otherwise_is_still_repaired() -> None:
    # not a length cut: the unknown tool is re-prompted, and the second reply
    # is the answer
    events, model = await run("am_xml", '<am:tool_call name="nope"><a>1</a></am:tool_call>')
    assert len(model.requests) == 2
    assert text(events) == "Second."
    assert finish(events).reason == "stop"
