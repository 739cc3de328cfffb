"""An answer that fails in-band before any of it came (Anthropic's
``overloaded_error`` event after a 200, OpenRouter's ``{"error": {"code":
502}}``) is asked again, as an error status would be; one that fails after
some of it came ends in an error finish, as before (FakeServer over HTTP)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from provider_support import collect, text_of
from wait_support import until

from streamtools.model import FinishChunk
from streamtools.providers import AnthropicMessages, OpenAIChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio


def ev(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


START = ev({"type": "message_start", "message": {"usage": {"input_tokens": 3}}})
PING = ev({"type": "ping"})


def anthropic_error(kind: str, message: str) -> Reply:
    body = START + PING + ev({"type": "error", "error": {"type": kind, "message": message}})
    return Reply(raw=body, content_type="text/event-stream")


OVERLOADED = anthropic_error("overloaded_error", "Overloaded")


def anthropic(**options: Any) -> dict[str, Any]:
    return {"retry_base": 0.01, **options}


async def test_an_overload_before_any_content_is_asked_again(anyio_backend: str) -> None:
    async with FakeServer([OVERLOADED, "All good."], wire="anthropic") as server:
        chunks = await collect(AnthropicMessages("m", base_url=server.base_url, **anthropic()))
        asked = len(server.requests)
    assert text_of(chunks) == "All good."
    assert chunks[-1] == FinishChunk(reason="stop")
    assert asked == 2


@pytest.mark.parametrize("kind", ["rate_limit_error", "api_error"])
async def test_other_passing_errors_are_asked_again(anyio_backend: str, kind: str) -> None:
    async with FakeServer([anthropic_error(kind, "try later"), "ok"], wire="anthropic") as server:
        chunks = await collect(AnthropicMessages("m", base_url=server.base_url, **anthropic()))
    assert text_of(chunks) == "ok"


async def test_a_request_error_in_band_is_not_asked_again(anyio_backend: str) -> None:
    bad = anthropic_error("invalid_request_error", "prompt is too long")
    async with FakeServer([bad, "never"], wire="anthropic") as server:
        chunks = await collect(AnthropicMessages("m", base_url=server.base_url, **anthropic()))
        asked = len(server.requests)
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert "prompt is too long" in (last.message or "") and asked == 1


async def test_an_overload_after_content_is_an_error_finish(anyio_backend: str) -> None:
    late = Reply(text="a b c d e", error_after=4)  # text went out before the error
    async with FakeServer([late, "never"], wire="anthropic") as server:
        chunks = await collect(AnthropicMessages("m", base_url=server.base_url, **anthropic()))
        asked = len(server.requests)
    assert text_of(chunks)
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert "Overloaded" in (last.message or "") and asked == 1


async def test_asking_again_is_bounded_by_max_retries(anyio_backend: str) -> None:
    async with FakeServer([OVERLOADED] * 3 + ["never"], wire="anthropic") as server:
        provider = AnthropicMessages("m", base_url=server.base_url, **anthropic(max_retries=2))
        chunks = await collect(provider)
        asked = len(server.requests)
    assert asked == 3
    assert chunks == [FinishChunk(reason="error", message="overloaded_error: Overloaded")]


async def test_refusals_and_in_band_failures_share_one_retry_budget(anyio_backend: str) -> None:
    """A 503 refused before the stream and an overload inside it are both retries
    of one request: ``max_retries=2`` sends it three times in all, not three
    times for each time it is asked again (nine)."""
    busy = Reply(status=503, body='{"error": {"type": "x", "message": "busy"}}')
    replies = [busy, OVERLOADED] * 5
    async with FakeServer(replies, wire="anthropic") as server:
        provider = AnthropicMessages("m", base_url=server.base_url, **anthropic(max_retries=2))
        chunks = await collect(provider)
        asked = len(server.requests)
    assert asked == 3
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"


async def test_a_failed_request_when_asking_again_is_an_error_finish(anyio_backend: str) -> None:
    refused = Reply(status=401, body='{"error": {"type": "x", "message": "key revoked"}}')
    async with FakeServer([OVERLOADED, refused], wire="anthropic") as server:
        chunks = await collect(AnthropicMessages("m", base_url=server.base_url, **anthropic()))
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert "401" in (last.message or "") and "key revoked" in (last.message or "")


def openai_error(error: dict[str, Any]) -> Reply:
    body = b": OPENROUTER PROCESSING\n\n" + f"data: {json.dumps({'error': error})}\n\n".encode()
    return Reply(raw=body, content_type="text/event-stream")


@pytest.mark.parametrize(
    "error",
    [
        {"code": 502, "message": "Provider returned error"},
        {"code": "429", "message": "Rate limited upstream"},
        {"type": "server_error", "message": "The server had an error"},
    ],
)
async def test_openrouter_s_passing_in_band_error_is_asked_again(
    anyio_backend: str, error: dict[str, Any]
) -> None:
    async with FakeServer([openai_error(error), "Fine."]) as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url, retry_base=0.01))
    assert text_of(chunks) == "Fine." and chunks[-1] == FinishChunk(reason="stop")


async def test_openai_in_band_request_error_is_not_asked_again(anyio_backend: str) -> None:
    error = {"code": 400, "message": "context length exceeded"}
    async with FakeServer([openai_error(error), "never"]) as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url, retry_base=0.01))
        asked = len(server.requests)
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error" and asked == 1


async def test_a_passing_error_after_a_call_began_keeps_the_call_s_name(
    anyio_backend: str,
) -> None:
    """Once something came, the error ends the stream as before, with the
    name held for the open call (so ``NativeCalls`` names the call it cuts)."""
    call = {"index": 0, "id": "c1", "function": {"name": "search", "arguments": ""}}
    frames = [
        {"choices": [{"index": 0, "delta": {"content": "Let me look."}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
        {"error": {"code": 502, "message": "Provider returned error"}},
    ]
    raw = "".join(f"data: {json.dumps(f)}\n\n" for f in frames).encode()
    async with FakeServer([Reply(raw=raw, content_type="text/event-stream"), "no"]) as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url, retry_base=0.01))
        asked = len(server.requests)
    assert asked == 1 and text_of(chunks) == "Let me look."
    assert any(getattr(c, "name", None) == "search" for c in chunks)
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert "Provider returned error" in (last.message or "")


async def test_leaving_during_the_wait_to_ask_again_returns_promptly(anyio_backend: str) -> None:
    async with FakeServer([OVERLOADED, "never"], wire="anthropic") as server:
        provider = AnthropicMessages("m", base_url=server.base_url, retry_base=30.0)
        # Leaving 0.3 s after the start left before the first request on a busy
        # machine; it is 0.3 s after the overloaded answer, into the 30 s wait,
        # which leaving must end at once (the bound is well under it).
        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                tg.start_soon(collect, provider)
                await until(lambda: len(server.requests) == 1)
                await anyio.sleep(0.3)
                tg.cancel_scope.cancel()
        assert len(server.requests) == 1


@pytest.mark.parametrize("retries", [0, -1])
async def test_no_retries_reads_the_one_answer(anyio_backend: str, retries: int) -> None:
    """``max_retries`` of 0 (the proxy's) or below asks once: the answer is read."""
    async with FakeServer(["Hello."], wire="anthropic") as server:
        provider = AnthropicMessages("m", base_url=server.base_url, max_retries=retries)
        chunks = await collect(provider)
    assert text_of(chunks) == "Hello." and chunks[-1] == FinishChunk(reason="stop")
