"""SGLang names the stop string it ended the text at in ``matched_stop`` (its
``ChatCompletionResponseStreamChoice``; a token id when the model's own end
token stopped it), where vLLM says ``stop_reason``. It was not read, so a
stream SGLang cut at a stop string finished with no ``stop_sequence``."""

from __future__ import annotations

from typing import Any

import pytest
from provider_support import DONE, collect, mock, sse, text_of

from streamtools.model import ChatMessage, FinishChunk, ModelRequest
from streamtools.providers import OpenAIChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio
ASKED = ModelRequest(messages=(ChatMessage(role="user", content="hi"),), stop=("\nUser:",))


def _chunk(content: str | None, finish: str | None = None, matched: Any = None) -> dict[str, Any]:
    delta = {"role": None, "content": content, "reasoning_content": None, "tool_calls": None}
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish,
              "matched_stop": matched}
    return {"id": "5c2e", "object": "chat.completion.chunk", "created": 1, "model": "qwen",
            "choices": [choice], "usage": None}


def _usage() -> dict[str, Any]:
    return {"id": "5c2e", "object": "chat.completion.chunk", "created": 1, "model": "qwen",
            "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 3}}


async def test_the_stop_string_sglang_matched(anyio_backend: str) -> None:
    body = sse(_chunk("Hello"), _chunk(" there"), _chunk("", "stop", "\nUser:"), _usage(), DONE)
    reply = Reply(raw=body.encode(), content_type="text/event-stream")
    async with FakeServer([reply], wire="openai") as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url, max_retries=0), ASKED)
    assert text_of(chunks) == "Hello there"
    assert chunks[-1] == FinishChunk(reason="stop", stop_sequence="\nUser:")


async def test_an_end_token_is_no_stop_string(anyio_backend: str) -> None:
    body = sse(_chunk("Hello"), _chunk("", "stop", 151645), DONE)
    chunks = await collect(OpenAIChat("m", client=mock(body), max_retries=0), ASKED)
    assert chunks[-1] == FinishChunk(reason="stop")
