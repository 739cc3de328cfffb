"""OpenRouter's errors for a failed upstream provider say only "Provider
returned error"; the reason is in ``error.metadata.raw`` (the provider's own
error, often JSON) with ``provider_name``. It was dropped, in error answers and
in in-band errors alike (MockTransport + FakeServer)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_support import collect, mock

from streamtools.errors import ProviderError
from streamtools.model import FinishChunk
from streamtools.providers import OpenAIChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio

INNER = {"error": {"type": "invalid_request_error", "message": "supports at most 1 image"}}


def openrouter(code: int, raw: Any) -> dict[str, Any]:
    meta = {"raw": raw, "provider_name": "Crucible", "is_byok": False}
    return {"error": {"message": "Provider returned error", "code": code, "metadata": meta}}


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (json.dumps(INNER), "supports at most 1 image"),  # the provider's JSON, as text
        (INNER, "supports at most 1 image"),  # or as an object
        ("temporarily rate-limited upstream", "temporarily rate-limited upstream"),
    ],
)
async def test_an_error_answer_names_the_upstream_reason(
    anyio_backend: str, raw: Any, says: str
) -> None:
    body = json.dumps(openrouter(400, raw))
    with pytest.raises(ProviderError) as caught:
        await collect(OpenAIChat("m", client=mock(body, status=400)))
    message = str(caught.value)
    assert "Provider returned error" in message
    assert says in message and "Crucible" in message
    assert caught.value.body == body  # kept whole as before


async def test_an_in_band_error_names_the_upstream_reason(anyio_backend: str) -> None:
    raw = f"data: {json.dumps(openrouter(400, json.dumps(INNER)))}\n\n".encode()
    async with FakeServer([Reply(raw=raw, content_type="text/event-stream")]) as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url))
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert "supports at most 1 image" in (last.message or "")
    assert "Crucible" in (last.message or "")


async def test_an_error_without_metadata_reads_as_before(anyio_backend: str) -> None:
    body = json.dumps({"error": {"message": "Incorrect API key", "code": 401}})
    with pytest.raises(ProviderError) as caught:
        await collect(OpenAIChat("m", client=mock(body, status=401)))
    assert str(caught.value) == "OpenAI-compatible server answered HTTP 401: Incorrect API key"
