"""A server that refuses ``stream_options`` (Azure AI Foundry's serverless
models, older Azure OpenAI API versions, servers that forbid unknown fields)
or ``max_tokens`` (OpenAI's reasoning models: "Use 'max_completion_tokens'
instead") is asked again without it: every request failed with a 400, and the
way out (``stream_usage=False``, ``max_tokens_field``) was in a docstring
only. A real server on 127.0.0.1 that refuses the field as each words it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_support import HI, text_of

from streamtools.errors import ProviderError
from streamtools.model import ModelRequest, UsageChunk
from streamtools.providers import OpenAIChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio

FOUNDRY = json.dumps({"detail": "Extra parameters ['stream_options'] are not allowed when "
                      "extra-parameters is not set or set to be 'error'. Set extra-parameters "
                      "to 'pass-through' to pass to the model."})
AZURE_OLD = json.dumps({"error": {"message": "Unrecognized request argument supplied: "
                                  "stream_options", "type": "invalid_request_error",
                                  "param": None, "code": None}})
PYDANTIC = json.dumps({"object": "error", "message": {"detail": [
    {"type": "extra_forbidden", "loc": ["body", "stream_options"],
     "msg": "Extra inputs are not permitted", "input": {"include_usage": True}}]},
    "type": "invalid_request_error"})


def _refusing(status: int, body: str) -> Any:
    def answer(request: dict[str, Any]) -> Reply:
        if "stream_options" in request:
            return Reply(status=status, body=body, content_type="application/json")
        return Reply(text="Hello.")

    return answer


async def _read(provider: OpenAIChat, request: ModelRequest = HI) -> list[Any]:
    async with provider.stream(request) as chunks:
        return [c async for c in chunks]


@pytest.mark.parametrize(
    ("status", "body"), [(400, FOUNDRY), (400, AZURE_OLD), (422, PYDANTIC)],
    ids=["foundry", "azure-old", "pydantic"],
)
async def test_a_refused_stream_options_is_dropped(
    anyio_backend: str, status: int, body: str
) -> None:
    answer = _refusing(status, body)
    async with FakeServer([answer, answer, answer], wire="openai") as server:
        provider = OpenAIChat("m", base_url=server.base_url, max_retries=0)
        assert text_of(await _read(provider)) == "Hello."
        assert provider.stream_usage is False
        assert text_of(await _read(provider)) == "Hello."  # not asked for again
        sent = server.requests
    assert ["stream_options" in body for body in sent] == [True, False, False]


async def test_usage_asked_for_where_it_is_taken(anyio_backend: str) -> None:
    async with FakeServer([Reply(text="Hi.")], wire="openai") as server:
        provider = OpenAIChat("m", base_url=server.base_url, max_retries=0)
        chunks = await _read(provider)
        assert server.requests[0]["stream_options"] == {"include_usage": True}
    assert provider.stream_usage is True
    assert any(isinstance(c, UsageChunk) for c in chunks)


async def test_other_400s_and_the_user_s_own_field_are_not_retried(anyio_backend: str) -> None:
    other = Reply(status=400, body=json.dumps({"error": {"message": "model not found"}}),
                  content_type="application/json")
    async with FakeServer([other], wire="openai") as server:
        provider = OpenAIChat("m", base_url=server.base_url, max_retries=0)
        with pytest.raises(ProviderError, match="model not found"):
            await _read(provider)
        assert len(server.requests) == 1
    assert provider.stream_usage is True

    # the user set it (extra_body): dropping ours would change nothing
    answer = _refusing(400, FOUNDRY)
    async with FakeServer([answer, answer], wire="openai") as server:
        provider = OpenAIChat("m", base_url=server.base_url, max_retries=0,
                              extra_body={"stream_options": {"include_usage": True}})
        with pytest.raises(ProviderError) as info:
            await _read(provider)
        assert info.value.status == 400
        assert len(server.requests) == 1


async def test_an_error_of_the_consumer_is_not_caught(anyio_backend: str) -> None:
    """Only the opening is watched: the consumer's own exception passes through."""
    async with FakeServer([Reply(text="Hi.")], wire="openai") as server:
        provider = OpenAIChat("m", base_url=server.base_url, max_retries=0)
        with pytest.raises(ProviderError, match="the consumer's"):
            async with provider.stream(HI):
                raise ProviderError("the consumer's", status=400, body="stream_options")
        assert len(server.requests) == 1


REASONING_MODEL = json.dumps({"error": {
    "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
               "Use 'max_completion_tokens' instead.",
    "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}})


def _reasoning_model(request: dict[str, Any]) -> Reply:
    if "max_tokens" in request:
        return Reply(status=400, body=REASONING_MODEL, content_type="application/json")
    if "stream_options" in request:
        return Reply(status=400, body=FOUNDRY, content_type="application/json")
    return Reply(text=f"limit {request.get('max_completion_tokens')}")


async def test_max_tokens_goes_as_max_completion_tokens_where_refused(
    anyio_backend: str,
) -> None:
    """Both fields refused, one after the other (a reasoning model behind a
    gateway that forbids stream_options): two more openings, then the answer;
    the provider sends the right fields from then on."""
    limited = ModelRequest(messages=HI.messages, max_tokens=64)
    replies = [_reasoning_model] * 4
    async with FakeServer(replies, wire="openai") as server:
        provider = OpenAIChat("o4-mini", base_url=server.base_url, max_retries=0)
        assert text_of(await _read(provider, limited)) == "limit 64"
        assert provider.max_tokens_field == "max_completion_tokens"
        assert text_of(await _read(provider, limited)) == "limit 64"
        sent = server.requests
    assert [sorted(k for k in b if k in ("max_tokens", "max_completion_tokens",
                                         "stream_options")) for b in sent] == [
        ["max_tokens", "stream_options"],
        ["max_completion_tokens", "stream_options"],
        ["max_completion_tokens"],
        ["max_completion_tokens"],
    ]


async def test_a_request_without_a_limit_changes_nothing(anyio_backend: str) -> None:
    """The refusal names ``max_completion_tokens`` but no limit was sent: the
    error stands (it is about something else)."""
    async with FakeServer([Reply(status=400, body=REASONING_MODEL,
                                 content_type="application/json")], wire="openai") as server:
        provider = OpenAIChat("m", base_url=server.base_url, max_retries=0, stream_usage=False)
        with pytest.raises(ProviderError, match="max_completion_tokens"):
            await _read(provider)
        assert len(server.requests) == 1
    assert provider.max_tokens_field == "max_tokens"
