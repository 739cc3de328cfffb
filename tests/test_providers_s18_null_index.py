"""A null ``index`` on a tool-call delta or a choice, as OpenAI-compatible
servers whose schemas make it optional send it (mlx-openai-server's
``ChoiceDeltaToolCall.index: int | None = None``, serialised as ``null``;
mistral.rs before EricLBuehler/mistral.rs#1507; gateways such as
chatanywhere/GPT_API_free#254), is read as a missing one: index 0. It was
refused as malformed JSON, and the answer ended in an error at its first
call."""

from __future__ import annotations

from typing import Any

import pytest
from provider_support import DONE, read_sse, sse, text_of

from streamtools.events import CallEnd
from streamtools.model import CallChunk, Chunk, FinishChunk
from streamtools.native import NativeCalls

pytestmark = pytest.mark.anyio

TRANSPORTS = pytest.mark.parametrize("transport", ["mock", "http"])


def _choice(delta: dict[str, Any], finish: str | None = None, index: Any = 0) -> dict[str, Any]:
    return {"choices": [{"index": index, "delta": delta, "finish_reason": finish}]}


def _call(call_id: str | None, name: str | None, args: str) -> dict[str, Any]:
    # mlx-openai-server's ChoiceDeltaToolCall, every field written, index null
    return {"index": None, "id": call_id, "type": "function" if name else None,
            "function": {"name": name, "arguments": args}}


def _calls(chunks: list[Chunk]) -> list[tuple[str, dict[str, Any]]]:
    native = NativeCalls()
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    events += native.end("tool_calls")
    return [(e.name, e.arguments) for e in events if isinstance(e, CallEnd)]


@TRANSPORTS
async def test_null_tool_call_index(anyio_backend: str, transport: str) -> None:
    body = sse(
        _choice({"role": "assistant", "content": "Looking."}),
        _choice({"tool_calls": [_call("call_a", "weather", "")]}),
        _choice({"tool_calls": [_call(None, None, '{"city": ')]}),
        _choice({"tool_calls": [_call(None, None, '"Paris"}')]}),
        _choice({"tool_calls": [_call("call_b", "time", '{"zone": "UTC"}')]}),
        _choice({}, "tool_calls"),
        DONE,
    )
    chunks = await read_sse(body, transport)
    assert text_of(chunks) == "Looking."
    assert chunks[-1] == FinishChunk(reason="tool_calls")
    assert _calls(chunks) == [("weather", {"city": "Paris"}), ("time", {"zone": "UTC"})]
    ids = [c.id for c in chunks if isinstance(c, CallChunk) and c.id]
    assert ids == ["call_a", "call_b"]


@TRANSPORTS
async def test_null_choice_index(anyio_backend: str, transport: str) -> None:
    body = sse(
        _choice({"role": "assistant", "content": "Hel"}, index=None),
        _choice({"content": "lo"}, index=None),
        _choice({}, "length", index=None),
        DONE,
    )
    chunks = await read_sse(body, transport)
    assert text_of(chunks) == "Hello"
    assert chunks[-1] == FinishChunk(reason="length")


async def test_another_choice_is_still_left_out(anyio_backend: str) -> None:
    # a server sending choice 1 beside choice 0 (n > 1 all the same) is followed on 0
    both = {"choices": [
        {"index": 1, "delta": {"content": "other"}, "finish_reason": None},
        {"index": None, "delta": {"content": "mine"}, "finish_reason": None},
    ]}
    chunks = await read_sse(sse(both, _choice({}, "stop"), DONE), "mock")
    assert text_of(chunks) == "mine"
