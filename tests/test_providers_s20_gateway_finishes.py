"""Gateways in front of Anthropic or Amazon Bedrock pass on those APIs' own
stop reasons as ``finish_reason`` (the module already read Anthropic's
``max_tokens`` and ``tool_use`` so). Bedrock's Converse ``stopReason`` has
``guardrail_intervened``, ``content_filtered``, ``malformed_tool_use``,
``malformed_model_output`` and ``model_context_window_exceeded`` (its API
reference, MessageStopEvent); Anthropic's has ``refusal`` and the last one. Each
was passed on as sent, a finish no consumer knew: the text was taken for a
whole answer and a call open then ran when its arguments were whole. Each is
now read as OpenAI's word for it, and the open call is cut
(MockTransport and FakeServer)."""

from __future__ import annotations

import pytest
from provider_support import DONE, read_sse, sse

from streamtools.events import CallEnd, CallError
from streamtools.model import CallChunk, FinishChunk
from streamtools.native import NativeCalls

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("transport", ["mock", "http"])
@pytest.mark.parametrize("sent, reason, error", [
    ("guardrail_intervened", "content_filter", "unterminated"),
    ("content_filtered", "content_filter", "unterminated"),
    ("refusal", "content_filter", "unterminated"),
    ("model_context_window_exceeded", "length", None),  # whole arguments may run after length
    ("malformed_tool_use", "malformed_call", "malformed"),
    ("malformed_model_output", "error", "unterminated"),
])
async def test_a_passed_on_reason_is_read(
    anyio_backend: str, transport: str, sent: str, reason: str, error: str | None
) -> None:
    call = {"index": 0, "id": "tooluse_1", "type": "function",
            "function": {"name": "add", "arguments": '{"a": 1}'}}
    body = sse(
        {"choices": [{"index": 0, "delta": {"content": "Adding.", "tool_calls": [call]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": sent}]},
        DONE,
    )
    chunks = await read_sse(body, transport)
    finish = chunks[-1]
    assert isinstance(finish, FinishChunk) and finish.reason == reason
    native = NativeCalls(["add"])
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    events += native.end(finish.reason)
    errors = [e.reason for e in events if isinstance(e, CallError)]
    ran = [e.arguments for e in events if isinstance(e, CallEnd)]
    assert (errors, ran) == (([error], []) if error else ([], [{"a": 1}]))
