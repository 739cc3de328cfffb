"""A body sniffed as a whole JSON answer (a server that ignored ``stream:
true``) whose strings hold bytes that are no UTF-8: the provider's own error,
not a ``UnicodeDecodeError`` out of ``model.stream`` (the fuzz test's
falsifying example, written down)."""

from __future__ import annotations

import httpx
import pytest
from provider_support import HI

from streamtools.errors import ProviderError
from streamtools.providers import AnthropicMessages, HTTPProvider, OpenAIChat
from streamtools.providers.whole import chat_completion, message

pytestmark = pytest.mark.anyio

OPENAI = b'"\x80data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'
ANTHROPIC = b'{"type": "message", "content": [{"type": "text", "text": "\x80"}]}'


def test_whole_bodies_with_bytes_that_are_no_utf8_are_no_answer() -> None:
    assert chat_completion(b'{"choices": [{"message": {"content": "\x80"}}]}') is None
    assert message(ANTHROPIC) is None


@pytest.mark.parametrize(
    ("cls", "body"), [(OpenAIChat, OPENAI), (AnthropicMessages, ANTHROPIC)]
)
async def test_such_a_body_ends_in_the_provider_s_error(
    anyio_backend: str, cls: type[HTTPProvider], body: bytes
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "application/x-ndjson"}, content=body)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    model = cls("m", base_url="http://mock", client=client, max_retries=0)
    with pytest.raises(ProviderError) as info:
        async with model.stream(HI) as stream:
            async for _ in stream:
                pass
    assert info.value.status == 200
    assert "answered HTTP 200 with application/x-ndjson" in str(info.value)
