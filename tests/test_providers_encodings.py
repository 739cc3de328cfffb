"""Bodies compressed with a coding this client cannot decode (``br`` without
brotli, ``zstd`` without zstandard): the error names the coding
(MockTransport + FakeServer)."""

from __future__ import annotations

import pytest
from provider_support import PROVIDERS, collect, mock, text_of

from streamtools.errors import ProviderError
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio


GARBAGE = b"\x1b\x07\x00\xf8\xa5\x8f\x94\xd4\x01\x00\xff\x00"  # not text, not JSON


@pytest.mark.parametrize("wire", sorted(PROVIDERS))
@pytest.mark.parametrize("coding", ["br", "zstd"])
@pytest.mark.parametrize("status", [200, 400, 503])
async def test_a_body_in_a_coding_the_client_cannot_decode_is_named(
    anyio_backend: str, wire: str, coding: str, status: int
) -> None:
    """httpx leaves a body in a coding it has no decoder for as it came: the
    compressed bytes were read as the stream ("malformed JSON", "unreadable
    stream") or quoted as the error body, without a word of the encoding."""
    ctype = {"openai": "text/event-stream", "anthropic": "text/event-stream"}.get(
        wire, "application/x-ndjson"
    )
    if status >= 400:
        ctype = "application/json"
    client = mock(GARBAGE, status=status, ctype=ctype, headers={"content-encoding": coding})
    provider = PROVIDERS[wire]("m", client=client, max_retries=0)
    with pytest.raises(ProviderError) as caught:
        await collect(provider)
    error = caught.value
    assert error.status == status
    assert f"compressed as {coding}" in str(error) and "cannot decode" in str(error)
    assert error.retryable is (status == 503)
    assert "\ufffd" not in str(error) and "\ufffd" not in (error.body or "")


async def test_an_encoded_error_body_over_http_is_named_and_still_retried(
    anyio_backend: str,
) -> None:
    replies: list[Reply | str] = [
        Reply(status=503, body="\x1b\x07garbage", headers={"content-encoding": "br"}),
        "fine",
    ]
    async with FakeServer(replies) as server:
        provider = PROVIDERS["openai"]("m", base_url=server.base_url, retry_base=0.01)
        chunks = await collect(provider)
    assert text_of(chunks) == "fine"
    packed = Reply(status=401, body="\x1b\x07", headers={"content-encoding": "zstd"})
    async with FakeServer([packed]) as server:
        with pytest.raises(ProviderError, match="compressed as zstd"):
            await collect(PROVIDERS["openai"]("m", base_url=server.base_url))
