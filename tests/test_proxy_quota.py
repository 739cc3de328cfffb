"""A used-up quota is not a rate limit: OpenAI answers it with a 429 whose
type and code are ``insufficient_quota``, which no wait cures. Passed on as a
plain rate limit, every client retried it (the SDKs twice, coding agents for
minutes) and reported a rate limit."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anthropic
import openai
import pytest
from test_proxy import _ask, _openai, proxy
from test_proxy_stream_errors import _REQUIRED, _error_event, _kind

from streamtools.errors import ProviderError
from streamtools.model import Chunk, FinishChunk, ModelRequest, TextChunk
from streamtools.testing import ScriptedModel
from streamtools.testing.fake_server import Reply

QUOTA = json.dumps({"error": {
    "message": "You exceeded your current quota, please check your plan and billing details.",
    "type": "insufficient_quota", "param": None, "code": "insufficient_quota",
}})


@pytest.mark.parametrize("stream", [False, True])
def test_a_used_up_quota_is_one_for_every_client(stream: bool) -> None:
    with proxy([Reply(status=429, body=QUOTA)] * 3) as (url, upstream):
        with pytest.raises(openai.RateLimitError) as chat:
            _ask("openai", url, stream, retries=2)
        with pytest.raises(openai.RateLimitError) as responses:
            answer: Any = _openai(url, retries=2).responses.create(
                model="m", input="hi", stream=stream
            )
            for _ in answer if stream else []:
                pass
        with pytest.raises(anthropic.RateLimitError) as messages:
            _ask("anthropic", url, stream, retries=2)
        assert len(upstream.received) == 3  # no retries
    for error in (chat.value, responses.value):
        body: Any = error.body
        assert body["type"] == "insufficient_quota" and body["code"] == "insufficient_quota"
        assert error.response.headers["x-should-retry"] == "false"
    said: Any = messages.value.body
    assert said["error"]["type"] == "billing_error"
    assert messages.value.response.headers["x-should-retry"] == "false"


def test_a_plain_rate_limit_stays_one() -> None:
    limit = json.dumps({"error": {"message": "slow down", "type": "requests",
                                  "code": "rate_limit_exceeded"}})
    with proxy([Reply(status=429, body=limit)]) as (url, _):
        with pytest.raises(openai.RateLimitError) as info:
            _ask("openai", url, False)
    body: Any = info.value.body
    assert body["type"] == "rate_limit_error"
    assert "x-should-retry" not in info.value.response.headers


class _QuotaOnRepair(ScriptedModel):
    """Answers without the required call; the re-prompt finds the quota used up."""

    def __init__(self) -> None:
        super().__init__(["No call."])

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[Chunk]]:
        if self.requests:
            raise ProviderError("HTTP 429", status=429, body=QUOTA)
        async with super().stream(request) as chunks:
            yield chunks


@pytest.mark.anyio
@pytest.mark.parametrize("wire", ["openai", "anthropic", "responses"])
async def test_a_used_up_quota_after_the_stream_began_is_one(wire: str) -> None:
    event = await _error_event(wire, _QuotaOnRepair(), **_REQUIRED[wire])
    expected = {"openai": "insufficient_quota", "anthropic": "billing_error"}
    assert _kind(wire, event) == expected.get(wire, "insufficient_quota")


def _cut(message: str) -> ScriptedModel:
    return ScriptedModel([[TextChunk(text="Hello"), FinishChunk(reason="error", message=message)]])


@pytest.mark.anyio
@pytest.mark.parametrize("wire", ["openai", "anthropic", "responses"])
@pytest.mark.parametrize(
    ("code", "kinds"),
    [
        ("insufficient_quota", ("insufficient_quota", "billing_error", "insufficient_quota")),
        ("rate_limit_exceeded", ("rate_limit_error", "rate_limit_error", "rate_limit_exceeded")),
    ],
)
async def test_an_error_chunks_word_code_keeps_its_kind(
    wire: str, code: str, kinds: tuple[str, str, str]
) -> None:
    """An OpenAI-style error chunk in the upstream's stream, its code a word as
    OpenAI writes it (the provider appends ``(code …)``), not a status."""
    event = await _error_event(wire, _cut(f"You exceeded your current quota (code {code})"))
    assert _kind(wire, event) == kinds[("openai", "anthropic", "responses").index(wire)]
