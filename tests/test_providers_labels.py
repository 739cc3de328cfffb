"""Streams under the wrong content type: ``text/plain`` (RAG and Workers
proxies), ``application/x-ndjson`` (LitServe's OpenAI spec), ``application/
octet-stream``, or none at all (an API gateway that drops it). Each was
refused ("expected text/event-stream") before a byte of it was read; each is
now read as the stream its first bytes show (MockTransport + FakeServer)."""

from __future__ import annotations

import json

import httpx
import pytest
from provider_support import collect, mock, text_of

from streamtools.errors import ProviderError
from streamtools.model import FinishChunk
from streamtools.providers import AnthropicMessages, OllamaChat, OpenAIChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio

LABELS = ["text/plain; charset=utf-8", "application/x-ndjson", "application/octet-stream", ""]


def openai_stream(text: str) -> str:
    start = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
    end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    return f"data: {json.dumps(start)}\n\ndata: {json.dumps(end)}\n\ndata: [DONE]\n\n"


def no_label(body: str) -> httpx.AsyncClient:
    """A client whose answer has no content type at all."""

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body.encode())

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


@pytest.mark.parametrize("label", LABELS)
async def test_an_openai_stream_under_another_label_is_read(anyio_backend: str, label: str) -> None:
    body = openai_stream("Hello")
    client = mock(body, ctype=label) if label else no_label(body)
    chunks = await collect(OpenAIChat("m", client=client))
    assert text_of(chunks) == "Hello" and chunks[-1] == FinishChunk(reason="stop")


async def test_an_anthropic_stream_labelled_text_plain_over_http(anyio_backend: str) -> None:
    plain = Reply(text="Hi there", content_type="text/plain")
    async with FakeServer([plain], wire="anthropic") as s:
        chunks = await collect(AnthropicMessages("m", base_url=s.base_url))
    assert text_of(chunks) == "Hi there" and chunks[-1] == FinishChunk(reason="stop")


async def test_an_ollama_stream_labelled_text_plain_over_http(anyio_backend: str) -> None:
    async with FakeServer([Reply(text="Hi there", content_type="text/plain")], wire="ollama") as s:
        chunks = await collect(OllamaChat("m", base_url=s.base_url))
    assert text_of(chunks) == "Hi there" and chunks[-1] == FinishChunk(reason="stop")


@pytest.mark.parametrize(
    ("label", "body"),
    [
        ("text/plain", "Service temporarily unavailable"),
        ("text/html", "<html>data: login</html>"),
    ],
)
async def test_other_bodies_under_those_labels_are_still_refused(
    anyio_backend: str, label: str, body: str
) -> None:
    with pytest.raises(ProviderError, match="expected text/event-stream") as caught:
        await collect(OpenAIChat("m", client=mock(body, ctype=label)))
    assert body.split()[0] in str(caught.value)
