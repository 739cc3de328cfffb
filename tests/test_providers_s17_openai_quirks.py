"""Streaming forms of OpenAI-compatible servers that no other test pinned, read
as each server sends them (MockTransport and a real server on 127.0.0.1):
Azure's prompt-filter chunk before the answer and its asynchronous-filter
chunks after the finish, OpenRouter's mid-stream error on a choice whose
``finish_reason`` is ``error``, Together's ``text`` beside ``delta.content``,
and text whose ``finish_reason`` is ``tool_calls`` with no call."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_support import read_sse, text_of

from streamtools.model import CallChunk, FinishChunk

pytestmark = pytest.mark.anyio


def _sse(*events: dict[str, Any] | str) -> str:
    return "".join(f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n" for e in events)


def _choice(delta: dict[str, Any], finish: str | None = None, **rest: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish, **rest}]}


TRANSPORTS = pytest.mark.parametrize("transport", ["mock", "http"])
FILTERED = {"hate": {"filtered": False, "severity": "safe"}}


@TRANSPORTS
async def test_azure_filter_chunks_around_the_answer(anyio_backend: str, transport: str) -> None:
    body = _sse(
        {"choices": [], "prompt_filter_results": [{"prompt_index": 0,
                                                   "content_filter_results": FILTERED}]},
        _choice({"role": "assistant", "content": "Hel"}),
        {"choices": [{"index": 0, "finish_reason": None, "content_filter_results": FILTERED}]},
        _choice({"content": "lo"}),
        _choice({}, "stop"),
        {"choices": [{"index": 0, "finish_reason": None,
                      "content_filter_offsets": {"check_offset": 0, "start_offset": 0,
                                                 "end_offset": 5},
                      "content_filter_results": FILTERED}]},
        "[DONE]",
    )
    chunks = await read_sse(body, transport)
    assert text_of(chunks) == "Hello"
    assert chunks[-1] == FinishChunk(reason="stop")


@TRANSPORTS
async def test_openrouter_error_on_an_errored_choice(anyio_backend: str, transport: str) -> None:
    error = {
        "id": "gen-1",
        "object": "chat.completion.chunk",
        "error": {"code": 502, "message": "Provider disconnected"},
        "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
    }
    chunks = await read_sse(_sse(_choice({"content": "Hi"}), error, "[DONE]"), transport)
    assert text_of(chunks) == "Hi"
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert "Provider disconnected" in (last.message or "")


@TRANSPORTS
async def test_together_s_text_beside_the_delta_is_not_doubled(
    anyio_backend: str, transport: str
) -> None:
    body = _sse(
        {"choices": [{"index": 0, "text": "Hi", "delta": {"content": "Hi"}}]},
        {"choices": [{"index": 0, "text": "", "delta": {"content": ""},
                      "finish_reason": "eos"}]},
        "[DONE]",
    )
    chunks = await read_sse(body, transport)
    assert text_of(chunks) == "Hi"
    assert chunks[-1] == FinishChunk(reason="stop")


@TRANSPORTS
async def test_tool_calls_finish_without_a_call_is_passed_on(
    anyio_backend: str, transport: str
) -> None:
    """The reason is the server's; what a consumer does keys on the calls
    (the runtime and the proxy decide by calls made, not by this reason)."""
    chunks = await read_sse(_sse(_choice({"content": "Hi"}), _choice({}, "tool_calls"), "[DONE]"),
                         transport)
    assert text_of(chunks) == "Hi"
    assert not [c for c in chunks if isinstance(c, CallChunk)]
    assert chunks[-1] == FinishChunk(reason="tool_calls")
