"""Moonshot (Kimi) says its prompt-cache hits in ``usage.cached_tokens``, at the
top level of ``usage`` beside ``prompt_tokens`` (its chat API reference:
``{"prompt_tokens": 19, "completion_tokens": 21, "total_tokens": 40,
"cached_tokens": 10}``), not in ``prompt_tokens_details``: it was not read, so
every Kimi answer looked like a cache miss (MockTransport and a real server)."""

from __future__ import annotations

import json

import pytest
from provider_support import DONE, collect, mock, sse, usage_of

from streamtools.model import UsageChunk
from streamtools.providers import OpenAIChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio

KIMI_USAGE = {"prompt_tokens": 19, "completion_tokens": 21, "total_tokens": 40, "cached_tokens": 10}
WANT = UsageChunk(input_tokens=19, output_tokens=21, cache_read_tokens=10)


# Kimi streams its usage on the last chunk's choice
KIMI_STREAM = sse(
    {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}]},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop", "usage": KIMI_USAGE}]},
    DONE,
)


@pytest.mark.parametrize("transport", ["mock", "http"])
async def test_kimi_s_streamed_cache_hits_are_read(anyio_backend: str, transport: str) -> None:
    if transport == "mock":
        chunks = await collect(OpenAIChat("kimi-k2.6", client=mock(KIMI_STREAM)))
    else:
        reply = Reply(raw=KIMI_STREAM.encode(), content_type="text/event-stream")
        async with FakeServer([reply], wire="openai") as server:
            chunks = await collect(OpenAIChat("kimi-k2.6", base_url=server.base_url))
    assert usage_of(chunks) == WANT


async def test_kimi_s_usage_at_the_top_of_a_chunk_is_read(anyio_backend: str) -> None:
    body = sse(
        {"choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": "stop"}]},
        {"choices": [], "usage": KIMI_USAGE}, DONE)
    assert usage_of(await collect(OpenAIChat("kimi-k2.6", client=mock(body)))) == WANT


async def test_kimi_s_whole_answer_cache_hits_are_read(anyio_backend: str) -> None:
    answer = {
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "Hi"}, "finish_reason": "stop"}
        ],
        "usage": KIMI_USAGE,
    }
    client = mock(json.dumps(answer), ctype="application/json")
    assert usage_of(await collect(OpenAIChat("kimi-k2.6", client=client))) == WANT


async def test_the_nested_count_wins_where_both_are_given(anyio_backend: str) -> None:
    """A gateway that adds OpenAI's field to Moonshot's: OpenAI's place first,
    as for DeepSeek's ``prompt_cache_hit_tokens``."""
    usage = {**KIMI_USAGE, "prompt_tokens_details": {"cached_tokens": 16}}
    body = sse(
        {"choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": "stop"}]},
        {"choices": [], "usage": usage}, DONE)
    got = usage_of(await collect(OpenAIChat("m", client=mock(body))))
    assert got == UsageChunk(input_tokens=19, output_tokens=21, cache_read_tokens=16)
