"""Heartbeats between the chunks of an OpenAI-compatible stream: SSE comments
(``: keep-alive``, OpenRouter's ``: OPENROUTER PROCESSING``), and data that is
no JSON object (``data: ping``), which some gateways send. None of them may end
or break the answer (MockTransport and a real server on 127.0.0.1)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
from provider_support import collect, mock, text_of

from streamtools.model import CallChunk, Chunk, FinishChunk
from streamtools.providers import OpenAIChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio


def data(obj: Any) -> str:
    return f"data: {json.dumps(obj)}\n\n"


def text(piece: str) -> str:
    return data({"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})


FINISH = data({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})

BEATS = [
    ": keep-alive\n\n",
    ": OPENROUTER PROCESSING\n\n",
    "data: ping\n\n",
    "data: keep-alive\n\n",
    "event: ping\ndata: ping\n\n",
    'data: "ping"\n\n',
    'data: {"type":"ping"}\n\n',
    "data: null\n\n",
    "data: [PING]\n\n",
]


async def over(transport: str, body: str) -> list[Chunk]:
    """The chunks of ``body`` read over MockTransport or from a real server."""
    if transport == "mock":
        return await collect(OpenAIChat("m", client=mock(body)))
    reply = Reply(raw=body.encode(), content_type="text/event-stream")
    async with FakeServer([reply]) as server:
        return await collect(OpenAIChat("m", base_url=server.base_url))


@pytest.mark.parametrize("transport", ["mock", "http"])
@pytest.mark.parametrize("beat", BEATS)
async def test_a_heartbeat_between_chunks_is_skipped(
    anyio_backend: str, transport: str, beat: str
) -> None:
    """``data: ping`` ended the answer after its first token ("sent malformed
    JSON in the stream"); comments and JSON pings were skipped already."""
    body = beat + text("Hel") + beat + beat + text("lo") + FINISH + beat + "data: [DONE]\n\n"
    chunks = await over(transport, body)
    assert text_of(chunks) == "Hello"
    assert chunks[-1] == FinishChunk(reason="stop")


@pytest.mark.parametrize("transport", ["mock", "http"])
async def test_a_heartbeat_inside_a_call_keeps_its_arguments(
    anyio_backend: str, transport: str
) -> None:
    def call(**fields: Any) -> str:
        tc = {"index": 0, **fields}
        return data({"choices": [{"index": 0, "delta": {"tool_calls": [tc]}}]})

    first = call(id="c1", type="function", function={"name": "add", "arguments": '{"a":'})
    done = data({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    rest = call(function={"arguments": " 1}"})
    body = first + "data: ping\n\n" + rest + done + "data: [DONE]\n\n"
    chunks = await over(transport, body)
    args = "".join(c.arguments for c in chunks if isinstance(c, CallChunk))
    assert json.loads(args) == {"a": 1}
    assert chunks[-1] == FinishChunk(reason="tool_calls")


async def test_a_malformed_json_chunk_still_ends_the_answer(anyio_backend: str) -> None:
    body = text("Hi") + 'data: {"choices": [\n\n' + FINISH + "data: [DONE]\n\n"
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert last.message is not None and "malformed JSON" in last.message


async def test_a_stream_that_ends_after_plain_words_quotes_them(anyio_backend: str) -> None:
    """A gateway that gives up in plain words and closes the stream: the error
    says what it last sent, not only that the answer was cut."""
    body = text("Hi") + "data: upstream   timed out\n\n"
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert last.message is not None
    assert "ended before the answer was complete" in last.message
    assert last.message.endswith("its last data was: upstream timed out")


class _Pings(httpx.AsyncByteStream):
    """``data: ping`` every 10 ms, 200 times (2 s), and nothing else."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for _ in range(200):
            await anyio.sleep(0.01)
            yield b"data: ping\n\n"


async def test_only_heartbeats_are_no_content_for_the_stall_bound(anyio_backend: str) -> None:
    """Heartbeats are skipped, not counted as content: a server that sends only
    ``data: ping`` is still cut by ``stall_timeout``, well before it stops."""

    def handler(request: httpx.Request) -> httpx.Response:
        ctype = {"content-type": "text/event-stream"}
        return httpx.Response(200, headers=ctype, stream=_Pings())

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    chunks = await collect(OpenAIChat("m", client=client, stall_timeout=0.2))
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert last.message is not None and "stall_timeout" in last.message
