"""Ollama's lines framed as SSE (a gateway or proxy in front of Ollama) with
heartbeats whose data is no JSON object (``data: ping``, ``data: "ping"``):
skipped, as ``OpenAIChat`` skips them; the first one ended the answer as
malformed JSON (MockTransport and a real server on 127.0.0.1)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_support import collect, mock, read_sse, text_of

from streamtools.model import FinishChunk
from streamtools.providers import OllamaChat

pytestmark = pytest.mark.anyio

DONE = {"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"}


def msg(text: str) -> dict[str, Any]:
    return {"message": {"role": "assistant", "content": text}, "done": False}


def event(data: str) -> str:
    return f"data: {data}\n\n"


@pytest.mark.parametrize("transport", ["mock", "http"])
@pytest.mark.parametrize("beat", ["ping", "keep-alive", '"ping"', "[]"])
async def test_a_heartbeat_between_framed_lines_is_skipped(
    anyio_backend: str, transport: str, beat: str
) -> None:
    body = (
        event(json.dumps(msg("Hel")))
        + event(beat)
        + event(json.dumps(msg("lo")))
        + event(beat)
        + event(json.dumps(DONE))
    )
    chunks = await read_sse(body, transport, "ollama")
    assert text_of(chunks) == "Hello"
    assert chunks[-1] == FinishChunk(reason="stop")


@pytest.mark.parametrize("transport", ["mock", "http"])
async def test_a_stream_that_ends_after_words_quotes_them(
    anyio_backend: str, transport: str
) -> None:
    """A gateway that gives up says why in plain words, and ends the stream."""
    body = event(json.dumps(msg("Hel"))) + event("upstream   timed out\tafter 60 s")
    chunks = await read_sse(body, transport, "ollama")
    assert text_of(chunks) == "Hel"
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert last.message is not None
    assert last.message.endswith("its last data was: upstream timed out after 60 s")


async def test_framed_data_that_begins_as_an_object_is_still_malformed(
    anyio_backend: str,
) -> None:
    body = event(json.dumps(msg("a"))) + event('{"message": oops}') + event(json.dumps(DONE))
    chunks = await read_sse(body, "mock", "ollama")
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert "malformed JSON" in (last.message or "")


async def test_a_plain_text_ndjson_line_is_still_malformed(anyio_backend: str) -> None:
    """Only SSE data is a heartbeat: Ollama's own NDJSON has no such lines."""
    body = json.dumps(msg("a")) + "\nping\n" + json.dumps(DONE) + "\n"
    chunks = await collect(OllamaChat("m", client=mock(body, ctype="application/x-ndjson")))
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert "malformed JSON" in (last.message or "")
