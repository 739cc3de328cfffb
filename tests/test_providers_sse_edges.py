"""SSE streams as servers and gateways really end and frame them: the last
event without its blank line, CRLF and CR line ends, comments and keep-alives
between the fields of an event (MockTransport + FakeServer)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_support import collect, mock, text_of

from streamtools.model import CallChunk, FinishChunk, UsageChunk
from streamtools.providers import OpenAIChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio


def data(obj: Any) -> str:
    return f"data: {json.dumps(obj)}"


TEXT = {"choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}]}
FINISH = {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}
USAGE = {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}


@pytest.mark.parametrize("end", ["\n", "", "\r\n", "\r"], ids=["lf", "none", "crlf", "cr"])
async def test_a_last_event_without_its_blank_line_is_read(anyio_backend: str, end: str) -> None:
    """A gateway that trims the body's trailing blank line (or a server that
    never writes one) lost the last event: its finish reason, then the whole
    answer ended in "stream ended before the answer was complete"."""
    body = f"{data(TEXT)}\n\n{data(FINISH)}{end}"
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    assert text_of(chunks) == "Hi"
    assert chunks[-1] == FinishChunk(reason="length")


async def test_a_last_usage_event_without_its_blank_line_is_read(anyio_backend: str) -> None:
    body = f"{data(TEXT)}\n\n{data(FINISH)}\n\n{data(USAGE)}"
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    usage = UsageChunk(input_tokens=3, output_tokens=1)
    assert chunks[-2:] == [usage, FinishChunk(reason="length")]


async def test_a_last_event_without_its_blank_line_over_http(anyio_backend: str) -> None:
    raw = f": hello\n\n{data(TEXT)}\n\n{data(FINISH)}".encode()
    async with FakeServer([Reply(raw=raw, content_type="text/event-stream")]) as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url))
    assert text_of(chunks) == "Hi" and chunks[-1] == FinishChunk(reason="length")


async def test_a_stream_cut_inside_its_last_event_is_still_an_error(anyio_backend: str) -> None:
    body = f"{data(TEXT)}\n\n{data(FINISH)[:20]}"
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"


@pytest.mark.parametrize(
    ("sent", "read"),
    [
        ("MAX_TOKENS", "length"),  # Gemini's own reasons, passed on by gateways
        ("STOP", "stop"),
        ("SAFETY", "content_filter"),
        ("max_tokens", "length"),  # Anthropic's, through OpenAI-shaped gateways
        ("tool_use", "tool_calls"),
        ("stop_sequence", "stop"),
        ("eos_token", "stop"),
        ("tool_call", "tool_calls"),
    ],
)
async def test_other_apis_finish_reasons_are_read_as_openai_s(
    anyio_backend: str, sent: str, read: str
) -> None:
    """A gateway that passes another API's finish reason through gave it raw:
    a call cut by ``MAX_TOKENS`` was completed (and ran) as if it were whole."""
    finish = {"choices": [{"index": 0, "delta": {}, "finish_reason": sent}]}
    body = f"{data(TEXT)}\n\n{data(finish)}\n\ndata: [DONE]\n\n"
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    assert chunks[-1] == FinishChunk(reason=read)


async def test_a_call_cut_by_max_tokens_is_not_completed(anyio_backend: str) -> None:
    call = {"index": 0, "id": "c1", "function": {"name": "write", "arguments": '{"text": "ab'}}
    start = {"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}
    finish = {"choices": [{"index": 0, "delta": {}, "finish_reason": "MAX_TOKENS"}]}
    body = f"{data(start)}\n\n{data(finish)}\n\ndata: [DONE]\n\n"
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    assert not [c for c in chunks if isinstance(c, CallChunk) and c.done]


async def test_a_bare_json_error_line_ending_a_stream_is_quoted(anyio_backend: str) -> None:
    """A proxy that forwards its backend's error body into a stream already
    begun writes it without ``data:``; the spec ignores such a line, so the
    answer ended "before it was complete" without a word of why."""
    error = {"error": {"code": 400, "message": "request exceeds the available context size"}}
    body = f"{data(TEXT)}\n\n{json.dumps(error)}"
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    last = chunks[-1]
    assert text_of(chunks) == "Hi"
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert "ended before the answer was complete" in (last.message or "")
    assert "exceeds the available context size" in (last.message or "")


async def test_a_stream_cut_inside_an_event_quotes_nothing_more(anyio_backend: str) -> None:
    body = f"{data(TEXT)}\n\ndata: {{\"choices\": [{{\"index\": 0, \"delta\": {{\"cont"
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
