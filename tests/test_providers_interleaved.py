"""Parallel tool calls whose deltas a server interleaves (index 0, 1, 0, 1):
each call's events still come one call after another, nothing is lost."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from provider_support import collect, mock, sse

from streamtools.events import ArgsDelta, CallEnd, CallError, CallStart, ParserEvent
from streamtools.model import CallChunk, Chunk, FinishChunk
from streamtools.native import NativeCalls
from streamtools.providers import OpenAIChat
from streamtools.providers.openai_calls import Function, ToolCallDelta, ToolCallDeltas
from streamtools.providers.surrogates import SurrogatePairs
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import FakeCall, Reply

pytestmark = pytest.mark.anyio


def tool_delta(index: int, args: str, call_id: str | None = None, name: str | None = None) -> Any:
    call: dict[str, Any] = {"index": index, "function": {"arguments": args}}
    if call_id is not None:
        call["id"], call["type"] = call_id, "function"
    if name is not None:
        call["function"]["name"] = name
    return {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]}


def finish(reason: str) -> Any:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}


def events_of(chunks: list[Chunk], native: NativeCalls) -> list[ParserEvent]:
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    reason = chunks[-1].reason if isinstance(chunks[-1], FinishChunk) else None
    return events + native.end(reason)


def one_call_at_a_time(events: list[ParserEvent]) -> None:
    """Each call's events are contiguous: its start, its deltas, its end (a
    call cut off has no end: the next may start); the deltas concatenate to
    its arguments."""
    current: int | None = None
    text: dict[int, str] = {}
    for event in events:
        if isinstance(event, CallStart):
            current, text[event.index] = event.index, ""
        elif isinstance(event, ArgsDelta):
            assert event.index == current, f"a delta of call {event.index} inside {current}"
            text[event.index] += event.delta
        elif isinstance(event, CallEnd):
            assert event.index == current
            assert json.loads(text[event.index]) == event.arguments
            current = None


# the deltas of two calls, as a gateway interleaving them sends them
INTERLEAVED = [
    tool_delta(0, "", "call_a", "add"),
    tool_delta(1, "", "call_b", "mul"),
    tool_delta(0, '{"a": '),
    tool_delta(1, '{"b": '),
    tool_delta(0, "1, "),
    tool_delta(1, "2}"),
    tool_delta(0, '"c": 3}'),
]


async def test_interleaved_parallel_calls_are_two_whole_calls(anyio_backend: str) -> None:
    body = sse(*INTERLEAVED, finish("tool_calls"), "data: [DONE]\n\n")
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    events = events_of(chunks, NativeCalls(["add", "mul"]))
    assert not [e for e in events if isinstance(e, CallError)]
    ends = [(e.id, e.name, e.arguments) for e in events if isinstance(e, CallEnd)]
    assert ends == [("call_a", "add", {"a": 1, "c": 3}), ("call_b", "mul", {"b": 2})]
    one_call_at_a_time(events)
    # conservation: every fragment of every call, once, in its call's order
    sent = {0: "", 1: ""}
    for d in INTERLEAVED:
        call = d["choices"][0]["delta"]["tool_calls"][0]
        sent[call["index"]] += call["function"]["arguments"]
    raws = [e.raw for e in events if isinstance(e, CallEnd)]
    assert raws == [sent[0], sent[1]]


async def test_a_call_completes_as_soon_as_it_is_whole_while_another_waits(
    anyio_backend: str,
) -> None:
    """Eager dispatch holds: the first call ends with the delta that makes its
    arguments whole, before the finish reason, while the second is held."""
    body = sse(*INTERLEAVED, tool_delta(1, " "), finish("tool_calls"), "data: [DONE]\n\n")
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    done = [n for n, c in enumerate(chunks) if isinstance(c, CallChunk) and c.done]
    assert len(done) == 2
    first_done = chunks[done[0]]
    assert isinstance(first_done, CallChunk) and first_done.index == 0
    # the first call is done before the second call's chunks start to come out
    second = [n for n, c in enumerate(chunks) if isinstance(c, CallChunk) and c.index == 1]
    assert done[0] < second[0]


async def test_interleaved_calls_cut_by_length_are_unterminated(anyio_backend: str) -> None:
    body = sse(*INTERLEAVED[:-1], finish("length"), "data: [DONE]\n\n")
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    events = events_of(chunks, NativeCalls(["add", "mul"]))
    ended = [e for e in events if isinstance(e, CallEnd | CallError)]
    outcome = [(e.id, getattr(e, "reason", "ran")) for e in ended]
    assert sorted(outcome) == [("call_a", "unterminated"), ("call_b", "ran")]
    one_call_at_a_time(events)


@pytest.mark.parametrize("reason", ["tool_calls", "length"])
async def test_parallel_calls_without_arguments_end_one_after_another(
    anyio_backend: str, reason: str
) -> None:
    """Two calls of a tool without parameters, sent with no argument text: the
    first one stays open (its arguments may come later, interleaved), so it
    ended only in ``NativeCalls.end``, after the second had started."""
    body = sse(
        tool_delta(0, "", "call_a", "now"),
        tool_delta(1, "", "call_b", "now"),
        tool_delta(2, '{"x": 1}', "call_c", "add"),
        finish(reason),
        "data: [DONE]\n\n",
    )
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    events = events_of(chunks, NativeCalls())
    one_call_at_a_time(events)
    outcome = [(e.id, type(e).__name__) for e in events if isinstance(e, CallEnd | CallError)]
    if reason == "tool_calls":
        assert outcome == [("call_a", "CallEnd"), ("call_b", "CallEnd"), ("call_c", "CallEnd")]
    else:  # out of tokens: a call with no arguments may have been cut
        assert sorted(outcome) == [
            ("call_a", "CallError"), ("call_b", "CallError"), ("call_c", "CallEnd")
        ]


async def test_interleaved_calls_over_http(anyio_backend: str) -> None:
    calls = (
        FakeCall(name="add", arguments={"a": 1, "text": "one two three"}),
        FakeCall(name="mul", arguments={"b": 2, "text": "four five six"}),
        FakeCall(name="add", arguments={"a": 3}),
    )
    async with FakeServer([Reply(calls=calls, interleave=True)]) as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url))
    events = events_of(chunks, NativeCalls(["add", "mul"]))
    assert not [e for e in events if isinstance(e, CallError)]
    ends = [(e.name, e.arguments) for e in events if isinstance(e, CallEnd)]
    assert ends == [(c.name, c.arguments) for c in calls]
    one_call_at_a_time(events)


@settings(max_examples=200, deadline=None)
@given(
    args=st.lists(
        st.dictionaries(st.sampled_from("abc"), st.integers() | st.text(max_size=6)),
        min_size=1,
        max_size=4,
    ),
    data=st.data(),
)
def test_any_interleaving_gives_each_call_whole_and_in_one_piece(
    args: list[dict[str, Any]], data: st.DataObject
) -> None:
    """Sans-IO, over any cut of each call's argument text and any interleaving of
    the calls' deltas that keeps each call's own order."""
    pending: list[list[ToolCallDelta]] = []
    for n, arguments in enumerate(args):
        text = json.dumps(arguments)
        cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=5)))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        head = ToolCallDelta(index=n, id=f"id{n}", function=Function(name=f"t{n}", arguments=""))
        rest = [ToolCallDelta(index=n, function=Function(arguments=p)) for p in pieces]
        pending.append([head, *rest])
    calls = ToolCallDeltas(SurrogatePairs(msgspec.json.Decoder(), object))
    native = NativeCalls()
    events: list[ParserEvent] = []
    while any(pending):
        which = data.draw(st.sampled_from([n for n, rest in enumerate(pending) if rest]))
        for chunk in calls.feed(pending[which].pop(0)):
            events += native.feed(chunk)
    for chunk in calls.finish("tool_calls") + calls.rest(complete=True):
        events += native.feed(chunk)
    events += native.end("tool_calls")
    ends = [(e.id, e.arguments) for e in events if isinstance(e, CallEnd)]
    assert sorted(ends, key=lambda e: e[0]) == [(f"id{n}", a) for n, a in enumerate(args)]
    assert not [e for e in events if isinstance(e, CallError)]
    one_call_at_a_time(events)


def delta_events(
    deltas: list[tuple[int, str | None, str | None, str]], reason: str
) -> list[ParserEvent]:
    """The events of an OpenAI server's tool-call ``deltas`` (index, id, name,
    argument piece), read by ``ToolCallDeltas`` and ``NativeCalls`` as the
    provider does, ended with the finish ``reason``."""
    calls = ToolCallDeltas(SurrogatePairs(msgspec.json.Decoder(), object))
    native = NativeCalls()
    events: list[ParserEvent] = []
    for index, call_id, name, args in deltas:
        delta = ToolCallDelta(index=index, id=call_id, function=Function(name=name, arguments=args))
        for chunk in calls.feed(delta):
            events += native.feed(chunk)
    complete = reason in ("tool_calls", "stop")
    for chunk in calls.finish(reason) + calls.rest(complete=complete):
        events += native.feed(chunk)
    return events + native.end(reason)


@settings(max_examples=300, deadline=None)
@given(
    deltas=st.lists(
        st.tuples(
            st.integers(0, 2),
            st.sampled_from([None, "a", "b", "c"]),
            st.sampled_from([None, "t", "u"]),
            st.sampled_from(["", "{", '{"x"', ": 1", "}", '{"x": 1}', " ", '"s"', ","]),
        ),
        max_size=25,
    ),
    reason=st.sampled_from(["tool_calls", "stop", "length", "content_filter", "error"]),
)
def test_any_delta_sequence_gives_contiguous_calls_and_keeps_every_piece(
    deltas: list[tuple[int, str | None, str | None, str]], reason: str
) -> None:
    """Whatever a server sends (indexes, ids and names in any order, pieces
    that resend, repeat or break JSON), the events of each call come together,
    and what the calls' deltas add up to is what the call events report."""
    events = delta_events(deltas, reason)
    one_call_at_a_time([e for e in events if not isinstance(e, CallError)])
    texts: dict[int, str] = {}
    for event in events:
        if isinstance(event, CallStart):
            texts[event.index] = ""
        elif isinstance(event, ArgsDelta):
            texts[event.index] += event.delta
        elif isinstance(event, CallEnd):
            assert texts.pop(event.index) == event.raw or event.raw == "{}"
