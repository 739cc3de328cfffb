"""Prompt-cache and reasoning token counts, read by each provider from what the
server says (streamed and whole answers; MockTransport and FakeServer): before,
Anthropic's cache counts were only summed into ``input_tokens`` and OpenAI's
``prompt_tokens_details`` / ``completion_tokens_details`` were not read at all."""

from __future__ import annotations

import json
from typing import Any

import httpx
import msgspec
import pytest
from provider_support import DONE, collect, mock, provider_for, sse, usage_of

from streamtools.events import Usage, decode_event, encode_events
from streamtools.model import UsageChunk
from streamtools.providers import AnthropicMessages, OllamaChat, OpenAIChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply, Wire

pytestmark = pytest.mark.anyio


_OPENAI_USAGE = {
    "prompt_tokens": 2006,
    "completion_tokens": 300,
    "total_tokens": 2306,
    "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 192, "audio_tokens": 0},
}
_OPENAI_WANT = UsageChunk(
    input_tokens=2006, output_tokens=300, cache_read_tokens=1920, reasoning_tokens=192
)


async def test_openai_stream_reads_cached_and_reasoning_tokens(anyio_backend: str) -> None:
    choice = {"index": 0, "delta": {"content": "Hi"}, "finish_reason": "stop"}
    body = sse({"choices": [choice]}, {"choices": [], "usage": _OPENAI_USAGE}, DONE)
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    assert usage_of(chunks) == _OPENAI_WANT


async def test_openai_whole_answer_reads_cached_and_reasoning_tokens(anyio_backend: str) -> None:
    answer = {
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi"},
                     "finish_reason": "stop"}],
        "usage": _OPENAI_USAGE,
    }
    client = mock(json.dumps(answer), ctype="application/json")
    chunks = await collect(OpenAIChat("m", client=client))
    assert usage_of(chunks) == _OPENAI_WANT


async def test_openai_reads_deepseek_and_openrouter_cache_fields(anyio_backend: str) -> None:
    choice = {"index": 0, "delta": {"content": "Hi"}, "finish_reason": "stop"}
    deepseek = {"prompt_tokens": 80, "completion_tokens": 5, "prompt_cache_hit_tokens": 64,
                "prompt_cache_miss_tokens": 16}
    chunks = await collect(OpenAIChat("m", client=mock(sse({"choices": [choice],
                                                               "usage": deepseek}, DONE))))
    assert usage_of(chunks) == UsageChunk(input_tokens=80, output_tokens=5, cache_read_tokens=64)
    openrouter = {"prompt_tokens": 80, "completion_tokens": 5,
                  "prompt_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 70}}
    chunks = await collect(OpenAIChat("m", client=mock(sse({"choices": [choice],
                                                               "usage": openrouter}, DONE))))
    assert usage_of(chunks) == UsageChunk(
        input_tokens=80, output_tokens=5, cache_read_tokens=0, cache_write_tokens=70
    )


async def test_openai_without_details_says_nothing_of_the_cache(anyio_backend: str) -> None:
    choice = {"index": 0, "delta": {"content": "Hi"}, "finish_reason": "stop"}
    plain = {"prompt_tokens": 12, "completion_tokens": 3}
    chunks = await collect(OpenAIChat("m", client=mock(sse({"choices": [choice],
                                                               "usage": plain}, DONE))))
    assert usage_of(chunks) == UsageChunk(input_tokens=12, output_tokens=3)
    assert usage_of(chunks).cache_read_tokens is None


def _anthropic_sse(*events: dict[str, Any]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


async def test_anthropic_stream_keeps_the_cache_counts_apart(anyio_backend: str) -> None:
    start_usage = {"input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": 1000,
                   "cache_creation_input_tokens": 200}
    body = _anthropic_sse(
        {"type": "message_start", "message": {"type": "message", "usage": start_usage}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
         "usage": {"output_tokens": 50, "output_tokens_details": {"thinking_tokens": 20}}},
        {"type": "message_stop"},
    )
    chunks = await collect(AnthropicMessages("c", client=mock(body)))
    # input_tokens is all the input (the API's 10 leave the cached 1200 out)
    assert usage_of(chunks) == UsageChunk(
        input_tokens=1210, output_tokens=50, cache_read_tokens=1000, cache_write_tokens=200,
        reasoning_tokens=20,
    )


async def test_anthropic_whole_answer_keeps_the_cache_counts_apart(anyio_backend: str) -> None:
    answer = {
        "type": "message", "role": "assistant", "content": [{"type": "text", "text": "Hi"}],
        "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 7, "cache_read_input_tokens": 4000,
                  "cache_creation_input_tokens": 0},
    }
    client = mock(json.dumps(answer), ctype="application/json")
    chunks = await collect(AnthropicMessages("c", client=client))
    assert usage_of(chunks) == UsageChunk(
        input_tokens=4003, output_tokens=7, cache_read_tokens=4000, cache_write_tokens=0
    )


_GIVEN = UsageChunk(
    input_tokens=900, output_tokens=40, cache_read_tokens=600, cache_write_tokens=100,
    reasoning_tokens=12,
)


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_fake_server_sends_cache_counts_the_provider_reads(
    anyio_backend: str, wire: Wire
) -> None:
    async with FakeServer([Reply(text="Hello", usage=_GIVEN)], wire=wire) as server:
        chunks = await collect(provider_for(server))
    assert usage_of(chunks) == _GIVEN
    sent = server.requests[0]
    assert sent.get("stream") is True


def test_fake_server_whole_answers_carry_the_cache_counts() -> None:
    # the whole bodies (a request with no "stream"), in each wire's own field names
    paths: list[tuple[Wire, str]] = [("openai", "/chat/completions"), ("anthropic", "/messages")]
    for wire, path in paths:
        with FakeServer([Reply(text="Hello", usage=_GIVEN)], wire=wire) as server:
            answer = httpx.post(server.base_url + path, json={"model": "m", "messages": []}).json()
        usage = answer["usage"]
        if wire == "openai":
            assert usage["prompt_tokens"] == 900
            assert usage["prompt_tokens_details"] == {"cached_tokens": 600,
                                                      "cache_write_tokens": 100}
            assert usage["completion_tokens_details"] == {"reasoning_tokens": 12}
        else:
            assert usage["input_tokens"] == 200  # the API's meaning: without the cached
            assert usage["cache_read_input_tokens"] == 600
            assert usage["cache_creation_input_tokens"] == 100
            assert usage["output_tokens_details"] == {"thinking_tokens": 12}


async def test_ollama_reports_no_cache(anyio_backend: str) -> None:
    async with FakeServer([Reply(text="Hello", usage=_GIVEN)], wire="ollama") as server:
        chunks = await collect(OllamaChat("m", base_url=server.base_url))
    assert usage_of(chunks) == UsageChunk(input_tokens=900, output_tokens=40)


@pytest.mark.parametrize("wire", ["openai", "anthropic", "ollama"])
async def test_a_reply_without_cache_counts_says_none(anyio_backend: str, wire: Wire) -> None:
    async with FakeServer(["Hello"], wire=wire) as server:
        usage = usage_of(await collect(provider_for(server)))
    assert usage.input_tokens is not None and usage.input_tokens > 0
    assert (usage.cache_read_tokens, usage.cache_write_tokens, usage.reasoning_tokens) == (
        None, None, None,
    )


def test_old_usage_lines_still_decode_and_unknown_counts_are_left_out() -> None:
    old = decode_event(b'{"type":"usage","input_tokens":5,"output_tokens":null}')
    assert old == Usage(input_tokens=5)
    line = encode_events([Usage(input_tokens=5, cache_read_tokens=3)])
    assert json.loads(line) == {"type": "usage", "input_tokens": 5, "cache_read_tokens": 3}
    chunk = msgspec.json.decode(b'{"type":"usage","input_tokens":5}', type=UsageChunk)
    assert chunk == UsageChunk(input_tokens=5)
