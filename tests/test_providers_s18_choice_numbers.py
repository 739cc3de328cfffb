"""A server that numbers its one choice up with every chunk: Microsoft's
Foundry Local 0.7.117 (microsoft/foundry-local#263: 0, 1, 2…, each chunk with
both ``delta`` and ``message``) and text-generation-inference before 1.4.4
(huggingface/text-generation-inference#1648: 1, 2, 3…). Only choice 0 was
read, so the answer came back as its first token (or empty) under a plain
``stop``, the finish's own reason lost with the rest."""

from __future__ import annotations

from typing import Any

import pytest
from provider_support import DONE, read_sse, sse, text_of

from streamtools.events import CallEnd
from streamtools.model import CallChunk, FinishChunk
from streamtools.native import NativeCalls

pytestmark = pytest.mark.anyio


def _foundry(index: int, content: str, finish: str | None = None) -> dict[str, Any]:
    said: dict[str, Any] = {"role": "assistant", "content": content, "name": None,
                            "tool_call_id": None, "function_call": None, "tool_calls": []}
    return {"model": "qwen2.5-1.5b-instruct-generic-gpu:3", "object": "chat.completion.chunk",
            "id": "chat.id.1", "usage": None, "error": None, "IsDelta": False,
            "choices": [{"delta": said, "message": said, "index": index,
                         "finish_reason": finish, "finish_details": None, "logprobs": None}]}


def _tgi(index: int, content: str, finish: str | None = None) -> dict[str, Any]:
    return {"id": "", "object": "text_completion", "created": 1710508199,
            "model": "HuggingFaceH4/zephyr-7b-beta", "system_fingerprint": "1.4.3-sha-e6bb3ff",
            "choices": [{"index": index, "delta": {"role": "assistant", "content": content},
                         "logprobs": None, "finish_reason": finish}]}


@pytest.mark.parametrize("transport", ["mock", "http"])
async def test_foundry_local_counts_the_choice_up(anyio_backend: str, transport: str) -> None:
    pieces = ["Wh", "isper", "ing ", "wind", "."]
    events = [_foundry(i, p) for i, p in enumerate(pieces)]
    body = sse(*events, _foundry(len(pieces), "", "length"), DONE)
    chunks = await read_sse(body, transport)
    assert text_of(chunks) == "Whispering wind."
    assert chunks[-1] == FinishChunk(reason="length")


@pytest.mark.parametrize("transport", ["mock", "http"])
async def test_tgi_counts_it_from_one(anyio_backend: str, transport: str) -> None:
    body = sse(_tgi(1, "I"), _tgi(2, "'"), _tgi(3, "m", "length"), DONE)
    chunks = await read_sse(body, transport)
    assert text_of(chunks) == "I'm"
    assert chunks[-1] == FinishChunk(reason="length")


async def test_a_call_under_counted_choices(anyio_backend: str) -> None:
    def chunk(index: int, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"choices": [{"index": index, "delta": delta, "finish_reason": finish}]}

    call = {"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "weather", "arguments": '{"city": '}}
    body = sse(
        chunk(0, {"role": "assistant", "tool_calls": [call]}),
        chunk(1, {"tool_calls": [{"index": 0, "function": {"arguments": '"Oslo"}'}}]}),
        chunk(2, {}, "tool_calls"),
        DONE,
    )
    chunks = await read_sse(body, "mock")
    assert chunks[-1] == FinishChunk(reason="tool_calls")
    native = NativeCalls()
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    ends = [e for e in [*events, *native.end("tool_calls")] if isinstance(e, CallEnd)]
    assert [(e.name, e.arguments) for e in ends] == [("weather", {"city": "Oslo"})]
