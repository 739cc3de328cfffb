"""An Ollama-compatible stream whose body begins with a UTF-8 byte-order mark:
the sniffer of mislabelled streams looked past the mark and took the body for
NDJSON, then the first line failed as malformed JSON, under any label. The
mark is dropped now (MockTransport and a real server on 127.0.0.1)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_support import collect, mock, text_of

from streamtools.model import Chunk, FinishChunk
from streamtools.providers import OllamaChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio

BOM = "\ufeff"
DONE = {"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"}


def _msg(text: str) -> dict[str, Any]:
    return {"message": {"role": "assistant", "content": text}, "done": False}


NDJSON = "".join(json.dumps(o) + "\n" for o in (_msg("Hel"), _msg("lo"), DONE))
FRAMED = "".join(f"data: {json.dumps(o)}\n\n" for o in (_msg("Hel"), _msg("lo"), DONE))


async def _read(body: str, ctype: str, transport: str) -> list[Chunk]:
    if transport == "mock":
        return await collect(OllamaChat("m", client=mock(body, ctype=ctype)))
    reply = Reply(raw=body.encode(), content_type=ctype)
    async with FakeServer([reply], wire="ollama") as server:
        return await collect(OllamaChat("m", base_url=server.base_url))


@pytest.mark.parametrize("transport", ["mock", "http"])
@pytest.mark.parametrize(
    ("body", "ctype"),
    [
        (NDJSON, "application/x-ndjson"),
        (NDJSON, "text/plain"),
        (NDJSON, "application/json"),
        (FRAMED, "text/event-stream"),
    ],
    ids=["ndjson", "text-plain", "json", "sse"],
)
async def test_a_byte_order_mark_before_the_first_line_is_dropped(
    anyio_backend: str, transport: str, body: str, ctype: str
) -> None:
    chunks = await _read(BOM + body, ctype, transport)
    assert text_of(chunks) == "Hello"
    assert chunks[-1] == FinishChunk(reason="stop")


async def test_text_that_is_no_json_after_the_mark_is_still_malformed(
    anyio_backend: str,
) -> None:
    chunks = await _read(BOM + "oops\n" + NDJSON, "application/x-ndjson", "mock")
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert "malformed JSON" in (last.message or "")
