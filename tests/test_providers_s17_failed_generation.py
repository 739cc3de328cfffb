"""Groq answers a tool call it could not parse with ``tool_use_failed``: "Failed
to call a function. Please adjust your prompt. See 'failed_generation' for
more details." The message quoted only that, so the user was sent to a field
no message showed; it now ends with what the model wrote (shortened). Before
the stream (HTTP 400) and inside it (an error event), against a real server."""

from __future__ import annotations

import json

import pytest
from provider_support import HI

from streamtools.errors import ProviderError
from streamtools.model import Chunk, FinishChunk
from streamtools.providers import OpenAIChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio

WROTE = '<function=get_weather>{"city":\n  "Paris"}</function>'
ERROR = {
    "message": "Failed to call a function. Please adjust your prompt. "
               "See 'failed_generation' for more details.",
    "type": "invalid_request_error",
    "code": "tool_use_failed",
    "failed_generation": WROTE,
}
SHOWN = '(the model wrote: <function=get_weather>{"city": "Paris"}</function>)'


async def _read(provider: OpenAIChat) -> list[Chunk]:
    async with provider.stream(HI) as chunks:
        return [c async for c in chunks]


async def test_a_400_shows_the_failed_generation(anyio_backend: str) -> None:
    reply = Reply(status=400, body=json.dumps({"error": ERROR}), content_type="application/json")
    async with FakeServer([reply], wire="openai") as server:
        with pytest.raises(ProviderError) as info:
            await _read(OpenAIChat("m", base_url=server.base_url, max_retries=0))
    message = str(info.value)
    assert "See 'failed_generation' for more details." in message
    assert message.endswith(SHOWN)


async def test_an_error_event_shows_the_failed_generation(anyio_backend: str) -> None:
    text = {"choices": [{"index": 0, "delta": {"content": "Let me check."}}]}
    raw = f"data: {json.dumps(text)}\n\ndata: {json.dumps({'error': ERROR})}\n\n"
    reply = Reply(raw=raw.encode(), content_type="text/event-stream")
    async with FakeServer([reply], wire="openai") as server:
        chunks = await _read(OpenAIChat("m", base_url=server.base_url, max_retries=0))
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert last.message is not None and last.message.endswith(SHOWN)
    assert "(code tool_use_failed)" in last.message


async def test_an_error_without_it_reads_as_before(anyio_backend: str) -> None:
    plain = {"message": "Invalid API key", "type": "invalid_request_error"}
    reply = Reply(status=401, body=json.dumps({"error": plain}), content_type="application/json")
    async with FakeServer([reply], wire="openai") as server:
        with pytest.raises(ProviderError) as info:
            await _read(OpenAIChat("m", base_url=server.base_url, max_retries=0))
    assert str(info.value) == "OpenAI-compatible server answered HTTP 401: Invalid API key"
