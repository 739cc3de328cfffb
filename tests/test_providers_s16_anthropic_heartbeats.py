"""Heartbeats in an Anthropic stream that are no JSON object (a gateway's
``event: ping`` with ``data: ping``, a bare ``data: keep-alive``) are skipped
like the API's own ``ping``; the API's events with such data are still
malformed (MockTransport and a real server on 127.0.0.1)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_support import collect, mock, text_of

from streamtools.model import CallChunk, Chunk, FinishChunk
from streamtools.providers import AnthropicMessages
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio


def ev(data: dict[str, Any]) -> str:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n"


START = ev({"type": "message_start", "message": {"usage": {"input_tokens": 7, "output_tokens": 1}}})
EMPTY = {"type": "text", "text": ""}
TEXT = ev({"type": "content_block_start", "index": 0, "content_block": EMPTY})
USE = {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}
CALL = ev({"type": "content_block_start", "index": 1, "content_block": USE})


def delta(index: int, d: dict[str, Any]) -> str:
    return ev({"type": "content_block_delta", "index": index, "delta": d})


def end(reason: str) -> str:
    stop = ev({"type": "content_block_stop", "index": 0})
    finish = {"type": "message_delta", "delta": {"stop_reason": reason}, "usage": {}}
    return stop + ev(finish) + ev({"type": "message_stop"})


BEATS = ["event: ping\ndata: ping\n\n", "data: ping\n\n", "data: keep-alive\n\n", 'data: "x"\n\n']


async def over(transport: str, body: str) -> list[Chunk]:
    if transport == "mock":
        return await collect(AnthropicMessages("c", client=mock(body)))
    reply = Reply(raw=body.encode(), content_type="text/event-stream")
    async with FakeServer([reply], wire="anthropic") as server:
        return await collect(AnthropicMessages("c", base_url=server.base_url))


@pytest.mark.parametrize("transport", ["mock", "http"])
@pytest.mark.parametrize("beat", BEATS)
async def test_a_heartbeat_that_is_no_json_is_skipped(
    anyio_backend: str, transport: str, beat: str
) -> None:
    """It ended the answer at the first one ("sent malformed JSON")."""
    hi = delta(0, {"type": "text_delta", "text": "Hi"})
    args = delta(1, {"type": "input_json_delta", "partial_json": '{"a": 1}'})
    body = START + beat + TEXT + hi + beat + CALL + beat + args + beat + end("tool_use")
    chunks = await over(transport, body)
    assert text_of(chunks) == "Hi"
    arguments = "".join(c.arguments for c in chunks if isinstance(c, CallChunk))
    assert json.loads(arguments) == {"a": 1}
    assert chunks[-1] == FinishChunk(reason="tool_calls")


async def test_an_api_event_that_is_no_json_is_still_malformed(anyio_backend: str) -> None:
    """Skipping it would lose the answer's content without a word."""
    body = START + TEXT + "event: content_block_delta\ndata: Hi\n\n" + end("end_turn")
    chunks = await collect(AnthropicMessages("c", client=mock(body)))
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert last.message is not None and "malformed JSON" in last.message
