"""A call whose head comes on the index of the call before it and whose rest
comes on an index of its own, as DeepSeek V4 Flash behind ollama.com's
OpenAI-compatible endpoint streams a second parallel call
(agno-agi/agno#8879): the rest began a call with no name (a ``CallError``)
and the call ran with what its head held. The rest now continues the call
begun last, while that call's arguments are unfinished."""

from __future__ import annotations

from typing import Any

import pytest
from provider_support import DONE, collect, mock, sse

from streamtools.events import CallEnd, CallError
from streamtools.model import CallChunk, Chunk, FinishChunk
from streamtools.native import NativeCalls
from streamtools.providers import OpenAIChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio


def _delta(index: int, args: str, call_id: str | None = None, name: str | None = None,
           ) -> dict[str, Any]:
    call: dict[str, Any] = {"index": index, "function": {"arguments": args}}
    if call_id is not None:
        call |= {"id": call_id, "type": "function"}
        call["function"]["name"] = name
    return {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]}


def _finish() -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}


async def _ends(body: str, transport: str) -> list[CallEnd | CallError]:
    if transport == "mock":
        chunks: list[Chunk] = await collect(OpenAIChat("m", client=mock(body), max_retries=0))
    else:
        reply = Reply(raw=body.encode(), content_type="text/event-stream")
        async with FakeServer([reply], wire="openai") as server:
            chunks = await collect(OpenAIChat("m", base_url=server.base_url, max_retries=0))
    assert chunks[-1] == FinishChunk(reason="tool_calls")
    native = NativeCalls()
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    return [e for e in [*events, *native.end("tool_calls")] if isinstance(e, CallEnd | CallError)]


@pytest.mark.parametrize("transport", ["mock", "http"])
@pytest.mark.parametrize("tail_id", [None, "call_b"])
async def test_a_head_on_the_index_before(
    anyio_backend: str, transport: str, tail_id: str | None
) -> None:
    body = sse(
        _delta(0, '{"kpi": ', "call_a", "kpi"),
        _delta(0, '"revenue"}'),
        _delta(0, '{"chart": "b', "call_b", "chart"),  # B's head, on A's index
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 1, "function": {"arguments": 'ar", "series": '}}
            | ({"id": tail_id} if tail_id else {})
        ]}}]},
        _delta(1, '"q3"}'),
        _finish(),
        DONE,
    )
    ends = await _ends(body, transport)
    assert [(type(e), e.name, getattr(e, "arguments", None), e.id) for e in ends] == [
        (CallEnd, "kpi", {"kpi": "revenue"}, "call_a"),
        (CallEnd, "chart", {"chart": "bar", "series": "q3"}, "call_b"),
    ]


async def test_a_new_call_is_still_one(anyio_backend: str) -> None:
    # a nameless delta on a new index after a whole call, or with another id, is
    # not the call before's: it is a call of its own (without a name: an error)
    body = sse(
        _delta(0, '{"kpi": ', "call_a", "kpi"),
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 1, "id": "call_x", "function": {"arguments": '{"y": 1}'}}]}}]},
        _delta(0, '"revenue"}'),
        _delta(2, '{"z": 2}'),
        _finish(),
        DONE,
    )
    ends = await _ends(body, "mock")
    assert [(type(e), e.name) for e in ends] == [
        (CallEnd, "kpi"), (CallError, None), (CallError, None),
    ]
    first = ends[0]
    assert isinstance(first, CallEnd) and first.arguments == {"kpi": "revenue"}


async def test_an_empty_first_delta_takes_nothing(anyio_backend: str) -> None:
    # a delta with no text on a new index, before that call's name and id, starts
    # that call (it stays the later call's), while the call before is still open
    body = sse(
        _delta(0, '{"kpi": ', "call_a", "kpi"),
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 1, "function": {"arguments": ""}}]}}]},
        _delta(1, "", "call_b", "chart"),
        _delta(0, '"revenue"}'),
        _delta(1, '{"chart": "bar"}'),
        _finish(),
        DONE,
    )
    ends = await _ends(body, "mock")
    assert [(type(e), e.name, getattr(e, "arguments", None), e.id) for e in ends] == [
        (CallEnd, "kpi", {"kpi": "revenue"}, "call_a"),
        (CallEnd, "chart", {"chart": "bar"}, "call_b"),
    ]
