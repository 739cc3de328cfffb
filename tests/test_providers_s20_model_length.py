"""Mistral's API ends an answer that ran into the model's context length with
``finish_reason: "model_length"`` (a reason of its chat API's schema, beside
``length``). It was passed on as sent: the text was taken as a whole answer,
and a call cut off there was ``invalid_json``, its model told to fix JSON it
had not finished writing. It is ``length`` now: the cut call is
``unterminated`` (MockTransport and FakeServer on 127.0.0.1)."""

from __future__ import annotations

from typing import Any

import pytest
from provider_support import DONE, read_sse, sse

from streamtools.events import CallEnd, CallError
from streamtools.model import CallChunk, FinishChunk
from streamtools.native import NativeCalls

pytestmark = pytest.mark.anyio


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"object": "chat.completion.chunk", "choices": [choice]}


@pytest.mark.parametrize("transport", ["mock", "http"])
async def test_a_call_cut_by_the_context_length_is_unterminated(
    anyio_backend: str, transport: str
) -> None:
    call = {"index": 0, "id": "AbCdE1234", "function": {"name": "add", "arguments": '{"a": 1,'}}
    body = sse(_chunk({"tool_calls": [call]}), _chunk({}, "model_length"), DONE)
    chunks = await read_sse(body, transport)
    assert chunks[-1] == FinishChunk(reason="length")
    native = NativeCalls(["add"])
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    events += native.end("length")
    errors = [(e.reason, e.raw) for e in events if isinstance(e, CallError)]
    assert errors == [("unterminated", '{"a": 1,')]
    assert not any(isinstance(e, CallEnd) for e in events)
