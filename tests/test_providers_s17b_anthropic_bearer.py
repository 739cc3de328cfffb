"""MiniMax's Anthropic-compatible endpoints (``https://api.minimax.io/anthropic``,
``https://api.minimaxi.com/anthropic``, the ones MiniMax recommends for its M2
and M3 models) take the key as ``Authorization: Bearer``, not Anthropic's
``x-api-key``: AnthropicMessages sent only ``x-api-key``, so every request was
refused (401) whatever the key. Over MockTransport, with a handler that checks
the key where each server reads it."""

from __future__ import annotations

import json

import httpx
import pytest
from provider_support import collect, text_of

from streamtools.errors import ProviderError
from streamtools.providers import AnthropicMessages

pytestmark = pytest.mark.anyio

KEY = "sk-cp-test"


def _event(kind: str, **fields: object) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n"


ANSWER = (
    _event("message_start", message={"id": "m", "type": "message", "role": "assistant",
                                     "content": [], "usage": {"input_tokens": 3}})
    + _event("content_block_start", index=0, content_block={"type": "text", "text": ""})
    + _event("content_block_delta", index=0, delta={"type": "text_delta", "text": "Hi."})
    + _event("content_block_stop", index=0)
    + _event("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 1})
    + _event("message_stop")
)


def _server(bearer: bool, seen: list[httpx.Request]) -> httpx.AsyncClient:
    """A server that reads the key from one header only, as MiniMax's (Bearer)
    or Anthropic's (x-api-key) do."""
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        given = request.headers.get("authorization") if bearer else request.headers.get(
            "x-api-key")
        if given != (f"Bearer {KEY}" if bearer else KEY):
            error = {"type": "error", "error": {"type": "authentication_error",
                                                "message": "login fail: invalid api key"}}
            return httpx.Response(401, json=error)
        return httpx.Response(200, headers={"content-type": "text/event-stream"},
                              content=ANSWER.encode())

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


@pytest.mark.parametrize(
    "base_url", ["https://api.minimax.io/anthropic", "https://api.minimaxi.com/anthropic/v1"]
)
async def test_minimax_gets_the_key_as_a_bearer_token(anyio_backend: str, base_url: str) -> None:
    seen: list[httpx.Request] = []
    provider = AnthropicMessages("MiniMax-M3", base_url=base_url, api_key=KEY,
                                 client=_server(True, seen), max_retries=0)
    assert text_of(await collect(provider)) == "Hi."
    assert "x-api-key" not in seen[0].headers
    assert seen[0].url.path.endswith("/anthropic/v1/messages")


@pytest.mark.parametrize(
    "base_url", ["https://api.anthropic.com", "https://api.deepseek.com/anthropic",
                 "http://127.0.0.1:8080"]
)
async def test_other_servers_get_x_api_key_as_before(anyio_backend: str, base_url: str) -> None:
    seen: list[httpx.Request] = []
    provider = AnthropicMessages("m", base_url=base_url, api_key=KEY,
                                 client=_server(False, seen), max_retries=0)
    assert text_of(await collect(provider)) == "Hi."
    assert "authorization" not in seen[0].headers
    with pytest.raises(ProviderError, match="invalid api key"):
        bearer_only = AnthropicMessages("m", base_url=base_url, api_key=KEY,
                                        client=_server(True, []), max_retries=0)
        await collect(bearer_only)
