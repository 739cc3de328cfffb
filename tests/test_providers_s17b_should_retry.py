"""``x-should-retry``: OpenAI's and Anthropic's servers say with it whether a
failed request is worth asking again, and their SDKs obey it over the status
(``true``: retry even a status they would not; ``false``: never retry). The
providers ignored it: a 500 that said ``false`` (FakeServer's "no scripted
reply left" says so) was asked again ``max_retries`` times, each after its
backoff, and a 400 that said ``true`` was not asked again. Over MockTransport
and a real server on 127.0.0.1, all three wires."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from provider_support import collect, provider_for, text_of

from streamtools.errors import ProviderError
from streamtools.providers import OpenAIChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply, Wire

pytestmark = pytest.mark.anyio

WIRES: list[Wire] = ["openai", "anthropic", "ollama"]
FAST: dict[str, Any] = {"retry_base": 0.01, "max_retries": 2}


def _answering(status: int, header: str | None, seen: list[httpx.Request]) -> httpx.AsyncClient:
    said = {} if header is None else {"x-should-retry": header}

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        body = {"error": {"message": "it failed", "type": "server_error"}}
        return httpx.Response(status, headers=said, json=body)

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


@pytest.mark.parametrize(
    ("status", "header", "asked", "retryable"),
    [
        (500, "false", 1, False),  # the server says no: one request
        (429, "false", 1, False),
        (503, " False ", 1, False),
        (500, None, 3, True),  # no word: the status decides, as before
        (400, None, 1, False),
        (400, "true", 3, True),  # the server says yes: a 400 asked again
        (409, "maybe", 3, True),  # neither word: the status decides
    ],
)
async def test_the_header_decides_over_the_status(
    anyio_backend: str, status: int, header: str | None, asked: int, retryable: bool
) -> None:
    seen: list[httpx.Request] = []
    async with _answering(status, header, seen) as client:
        with pytest.raises(ProviderError) as info:
            await collect(OpenAIChat("m", client=client, **FAST))
    assert len(seen) == asked
    assert info.value.status == status and info.value.retryable is retryable
    assert "it failed" in str(info.value)


@pytest.mark.parametrize("wire", WIRES)
async def test_no_scripted_reply_left_is_asked_once(anyio_backend: str, wire: Wire) -> None:
    """FakeServer out of replies answers 500 with ``x-should-retry: false``:
    one request, not ``max_retries + 1`` of them."""
    async with FakeServer([], wire=wire) as server:
        with pytest.raises(ProviderError, match="no scripted reply left") as info:
            await collect(provider_for(server, **FAST))
        assert len(server.requests) == 1
    assert info.value.should_retry is False and info.value.retryable is False


@pytest.mark.parametrize("wire", WIRES)
async def test_a_refusal_that_asks_for_a_retry_gets_one(anyio_backend: str, wire: Wire) -> None:
    replies: list[Any] = [Reply(status=400, headers={"x-should-retry": "true"}), "done"]
    async with FakeServer(replies, wire=wire) as server:
        chunks = await collect(provider_for(server, **FAST))
        assert len(server.requests) == 2
    assert text_of(chunks) == "done"


@pytest.mark.parametrize("wire", WIRES)
async def test_a_busy_server_that_says_no_is_not_asked_again(
    anyio_backend: str, wire: Wire
) -> None:
    replies: list[Any] = [Reply(status=503, headers={"x-should-retry": "false"}), "unused"]
    async with FakeServer(replies, wire=wire) as server:
        with pytest.raises(ProviderError) as info:
            await collect(provider_for(server, **FAST))
        assert len(server.requests) == 1 and server.remaining == 1
    assert info.value.status == 503 and info.value.retryable is False
