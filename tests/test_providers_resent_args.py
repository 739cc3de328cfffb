"""Servers that send a call's arguments again: all of them so far in every
delta (DeepSeek's and Baidu Qianfan's cumulative mode, gateways that map
another API's stream), or the whole arguments once more at the end (GPT-5
through some gateways). Each call still gets its arguments once."""

from __future__ import annotations

from typing import Any

import pytest
from provider_support import collect, mock, sse

from streamtools.events import CallEnd, CallError
from streamtools.model import CallChunk
from streamtools.native import NativeCalls
from streamtools.providers import OpenAIChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio


def tool(index: int, args: str, call_id: str | None = None, name: str | None = None) -> Any:
    call: dict[str, Any] = {"index": index, "function": {"arguments": args}}
    if call_id is not None:
        call["id"] = call_id
    if name is not None:
        call["function"]["name"] = name
    return {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]}


END = [{"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}, "data: [DONE]\n\n"]


async def ends_of(body: str) -> list[tuple[str, dict[str, Any]]]:
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    native = NativeCalls()
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    events += native.end("tool_calls")
    assert not [e for e in events if isinstance(e, CallError)]
    deltas = "".join(c.arguments for c in chunks if isinstance(c, CallChunk))
    ends = [e for e in events if isinstance(e, CallEnd)]
    assert deltas == "".join(e.raw for e in ends)  # each piece once
    return [(e.name, e.arguments) for e in ends]


def cumulative(text: str, cuts: list[int]) -> list[str]:
    return [text[:cut] for cut in [*cuts, len(text)]]


async def test_cumulative_arguments_are_taken_once(anyio_backend: str) -> None:
    text = '{"path": "/tmp/a.txt", "lines": [1, 2]}'
    first, *rest = cumulative(text, [1, 3, 9, 20, 30])
    body = sse(tool(0, first, "c1", "read"), *[tool(0, t) for t in rest], *END)
    assert await ends_of(body) == [("read", {"path": "/tmp/a.txt", "lines": [1, 2]})]


async def test_cumulative_parallel_calls(anyio_backend: str) -> None:
    a, b = '{"q": "alpha"}', '{"q": "beta"}'
    deltas = [tool(0, a[:4], "c1", "search"), tool(0, a[:9]), tool(0, a)]
    deltas += [tool(1, b[:2], "c2", "search"), tool(1, b)]
    assert await ends_of(sse(*deltas, *END)) == [
        ("search", {"q": "alpha"}),
        ("search", {"q": "beta"}),
    ]


async def test_whole_arguments_sent_again_at_the_end_are_taken_once(anyio_backend: str) -> None:
    pieces = ['{"q"', ': "we', 'ather"}']
    deltas = [tool(0, pieces[0], "c1", "search"), *[tool(0, p) for p in pieces[1:]]]
    deltas.append(tool(0, "".join(pieces), "c1", "search"))  # the name and arguments again
    assert await ends_of(sse(*deltas, *END)) == [("search", {"q": "weather"})]


async def test_an_object_whose_value_repeats_its_start_is_no_resend(anyio_backend: str) -> None:
    """``{"node":`` then ``{"node": 1}}``: a nested object with the same key,
    streamed in two pieces, is the incremental text it looks like."""
    body = sse(tool(0, '{"node":', "c1", "tree"), tool(0, '{"node": 1}}'), *END)
    assert await ends_of(body) == [("tree", {"node": {"node": 1}})]


async def test_cumulative_arguments_over_http(anyio_backend: str) -> None:
    text = '{"city": "Paris", "days": 3}'
    frames = [tool(0, text[:6], "call_1", "weather")]
    frames += [tool(0, text[:cut]) for cut in (12, 20, len(text))]
    raw = sse(*frames, *END).encode()
    async with FakeServer([Reply(raw=raw, content_type="text/event-stream")]) as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url))
    native = NativeCalls()
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    ends = [e for e in events + native.end("tool_calls") if isinstance(e, CallEnd)]
    assert [(e.name, e.arguments) for e in ends] == [("weather", {"city": "Paris", "days": 3})]


async def test_a_finish_reason_on_every_chunk_does_not_end_a_call_mid_way(
    anyio_backend: str,
) -> None:
    """Gateways in front of Gemini (one-api, new-api, gcli2api) put
    ``finish_reason: "stop"`` on every chunk. The first one ended the call
    being written: it ran with ``{}`` and the rest of its arguments became a
    malformed part."""

    def stop(chunk: Any) -> Any:
        chunk["choices"][0]["finish_reason"] = "stop"
        return chunk

    frames = [tool(0, "", "c1", "search"), tool(0, '{"q": '), tool(0, '"rain"}')]
    frames += [tool(1, '{"q": "sun"}', "c2", "search")]
    body = sse(*[stop(f) for f in frames], "data: [DONE]\n\n")
    assert await ends_of(body) == [("search", {"q": "rain"}), ("search", {"q": "sun"})]
