"""A whole JSON answer (a server that ignored ``stream: true``) preceded by a
UTF-8 byte-order mark was refused ("answered HTTP 200 with application/json,
expected text/event-stream") though the same body without the mark is read as
its stream; the mark is dropped now (MockTransport and a real server)."""

from __future__ import annotations

import json

import pytest
from provider_support import collect, mock, text_of

from streamtools.errors import ProviderError
from streamtools.model import Chunk, FinishChunk
from streamtools.providers import AnthropicMessages, HTTPProvider, OpenAIChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply, Wire

pytestmark = pytest.mark.anyio

BOM = "\ufeff"
ANSWERS: dict[str, tuple[type[HTTPProvider], str]] = {
    "openai": (OpenAIChat, json.dumps({
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi."},
                     "finish_reason": "stop"}],
    })),
    "anthropic": (AnthropicMessages, json.dumps({
        "type": "message", "content": [{"type": "text", "text": "Hi."}],
        "stop_reason": "end_turn", "usage": {"input_tokens": 3, "output_tokens": 2},
    })),
}


@pytest.mark.parametrize("transport", ["mock", "http"])
@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_a_whole_answer_after_a_byte_order_mark_is_read(
    anyio_backend: str, transport: str, wire: Wire
) -> None:
    cls, answer = ANSWERS[wire]
    body = BOM + answer
    chunks: list[Chunk]
    if transport == "mock":
        client = mock(body, ctype="application/json")
        chunks = await collect(cls("m", base_url="http://upstream", client=client))
    else:
        reply = Reply(raw=body.encode(), content_type="application/json")
        async with FakeServer([reply], wire=wire) as server:
            chunks = await collect(cls("m", base_url=server.base_url, max_retries=0))
    assert text_of(chunks) == "Hi."
    assert chunks[-1] == FinishChunk(reason="stop")


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_an_error_body_after_a_byte_order_mark_is_quoted_by_its_message(
    anyio_backend: str, wire: Wire
) -> None:
    """The API's message was lost: the error quoted the raw body, mark and all."""
    cls = ANSWERS[wire][0]
    error = {"error": {"type": "authentication_error", "message": "Invalid API key"}}
    reply = Reply(status=401, body=BOM + json.dumps(error), content_type="application/json")
    async with FakeServer([reply], wire=wire) as server:
        with pytest.raises(ProviderError) as info:
            await collect(cls("m", base_url=server.base_url, max_retries=0))
    assert str(info.value).endswith("answered HTTP 401: Invalid API key")
