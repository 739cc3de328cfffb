"""A model that refuses ``stop`` (OpenAI's reasoning models, some gpt-5, xAI's
grok-4, some of Vertex AI's) failed every request with a 400 unless the caller
knew to pass ``supports_stop=False`` (``--no-stop``), which ``streamtools
chat``, ``ui`` and the proxy's users cannot know in advance. The provider now
asks again without ``stop`` and cuts client-side from then on, exactly as
``supports_stop=False`` does: the text is cut at the stop string, the finish
names it, and the request is closed there. A real server on 127.0.0.1 that
refuses ``stop`` as each words it."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from provider_support import HI, text_of

from streamtools.errors import ProviderError
from streamtools.events import Event, Final, ToolResult
from streamtools.model import ChatMessage, FinishChunk, ModelRequest
from streamtools.providers import OpenAIChat
from streamtools.runtime import Agent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply
from streamtools.tools import tool

pytestmark = pytest.mark.anyio

MARKER = "</am:tool_call>"
CALL = '<am:tool_call name="multiply"><a>6</a><b>7</b>' + MARKER
OPENAI = json.dumps({"error": {
    "message": "Unsupported parameter: 'stop' is not supported with this model.",
    "type": "invalid_request_error", "param": "stop", "code": "unsupported_parameter"}})
XAI = json.dumps({"code": "Client specified an invalid argument",
                  "error": "Argument not supported on this model: stop"})
VERTEX = json.dumps([{"error": {"code": 400, "status": "INVALID_ARGUMENT", "message":
    "Unable to submit request because the model does not support the stopSequences "
    "parameter. Remove it and try again."}}])
FOUNDRY = json.dumps({"detail": "Extra parameters ['stop'] are not allowed when "
                      "extra-parameters is not set or set to be 'error'."})
PYDANTIC = json.dumps({"detail": [{"type": "extra_forbidden", "loc": ["body", "stop"],
                                   "msg": "Extra inputs are not permitted", "input": [MARKER]}]})
REFUSALS = [(400, OPENAI), (400, XAI), (400, VERTEX), (400, FOUNDRY), (422, PYDANTIC)]
NAMES = ["openai", "xai", "vertex", "foundry", "pydantic"]


def _refusing(status: int, body: str, reply: Reply) -> Any:
    def answer(request: dict[str, Any]) -> Reply:
        if "stop" in request:
            return Reply(status=status, body=body, content_type="application/json")
        return reply

    return answer


# the text after the marker is never sent: the server stalls before it, so an
# answer read past the marker would wait for the stall (30 s)
AFTER = Reply(text=f"Adding. {CALL} AFTER the call, the result I expect.", stall_before="AFTER")
ASKED = ModelRequest(messages=HI.messages, stop=(MARKER,))


async def _read(provider: OpenAIChat, request: ModelRequest = ASKED) -> list[Any]:
    with anyio.fail_after(10):
        async with provider.stream(request) as chunks:
            return [c async for c in chunks]


@pytest.mark.parametrize(("status", "body"), REFUSALS, ids=NAMES)
async def test_a_refused_stop_is_cut_client_side(
    anyio_backend: str, status: int, body: str
) -> None:
    answer = _refusing(status, body, AFTER)
    async with FakeServer([answer] * 3, wire="openai") as server:
        provider = OpenAIChat("m", base_url=server.base_url, max_retries=0)
        chunks = await _read(provider)
        assert provider.supports_stop is False
        again = await _read(provider)  # not sent again: one request
        sent = server.requests
    assert [body.get("stop") for body in sent] == [[MARKER], None, None]
    for got in (chunks, again):
        assert text_of(got) == 'Adding. <am:tool_call name="multiply"><a>6</a><b>7</b>'
        assert got[-1] == FinishChunk(reason="stop", stop_sequence=MARKER)


async def test_as_if_supports_stop_false_had_been_given(anyio_backend: str) -> None:
    """The retried answer's chunks are those of a provider that never sent stop."""
    answer = _refusing(400, OPENAI, AFTER)
    async with FakeServer([answer] * 3, wire="openai") as server:
        retried = await _read(OpenAIChat("m", base_url=server.base_url, max_retries=0))
        told = OpenAIChat("m", base_url=server.base_url, max_retries=0, supports_stop=False)
        chosen = await _read(told)
        sent = server.requests
    assert retried == chosen
    assert [body.get("stop") for body in sent] == [[MARKER], None, None]


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


async def test_an_agent_ends_its_reply_at_the_call(anyio_backend: str) -> None:
    """``stop_at_call`` as ``streamtools chat`` sets it, against a model that
    refuses ``stop`` (FakeServer's reject_stop): the call runs on the text up to
    its marker, and what the model wrote after it never reaches the next request."""
    replies: list[Reply | str] = [AFTER, "6 times 7 is 42."]
    async with FakeServer(replies, wire="openai", reject_stop=True) as server:
        provider = OpenAIChat("m", base_url=server.base_url, max_retries=0)
        agent = Agent(provider, [multiply], dialect="am_xml", stop_at_call=True)
        with anyio.fail_after(20):
            async with agent.stream("What is 6*7?") as stream:
                events: list[Event] = [e async for e in stream]
        sent = server.requests
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["42"]
    assert events[-1] == Final(text="6 times 7 is 42.", turns=2)
    assert [body.get("stop") for body in sent] == [[MARKER], None, None]
    assert "AFTER" not in json.dumps(sent[2]["messages"])


async def test_other_refusals_and_the_user_s_own_stop_are_not_retried(
    anyio_backend: str,
) -> None:
    limit = Reply(status=400, content_type="application/json", body=json.dumps(
        {"error": {"message": "'stop' must have at most 4 items", "param": "stop"}}))
    async with FakeServer([limit], wire="openai") as server:
        provider = OpenAIChat("m", base_url=server.base_url, max_retries=0)
        with pytest.raises(ProviderError, match="at most 4 items"):
            await _read(provider)
        assert len(server.requests) == 1 and provider.supports_stop is True
    refused = Reply(status=400, body=OPENAI, content_type="application/json")
    async with FakeServer([refused], wire="openai") as server:
        provider = OpenAIChat("m", base_url=server.base_url, max_retries=0,
                              extra_body={"stop": ["END"]})
        with pytest.raises(ProviderError, match="'stop' is not supported"):
            await _read(provider)
        assert len(server.requests) == 1 and provider.supports_stop is True


async def test_a_refused_max_tokens_is_no_refused_stop(anyio_backend: str) -> None:
    """OpenAI's words for max_tokens name no stop: the stop still goes to the server."""
    words = ("Unsupported parameter: 'max_tokens' is not supported with this model. "
             "Use 'max_completion_tokens' instead.")
    refusal = json.dumps({"error": {"message": words, "type": "invalid_request_error",
                                    "param": "max_tokens", "code": "unsupported_parameter"}})

    def answer(request: dict[str, Any]) -> Reply:
        if "max_tokens" in request:
            return Reply(status=400, body=refusal, content_type="application/json")
        return Reply(text="Hello.")

    request = ModelRequest(messages=HI.messages, stop=("END",), max_tokens=50)
    async with FakeServer([answer, answer], wire="openai") as server:
        provider = OpenAIChat("m", base_url=server.base_url, max_retries=0)
        assert text_of(await _read(provider, request)) == "Hello."
        sent = server.requests
    assert provider.supports_stop is True
    assert [body.get("stop") for body in sent] == [["END"], ["END"]]


async def test_every_refused_field_in_turn(anyio_backend: str) -> None:
    """An older Azure OpenAI deployment of a reasoning model may refuse
    stream_options, max_tokens and stop, one after the other: four requests,
    the last of which is answered."""
    words = {
        "stream_options": "Unrecognized request argument supplied: stream_options",
        "max_tokens": "Unsupported parameter: 'max_tokens' is not supported with this model. "
                      "Use 'max_completion_tokens' instead.",
        "stop": "Unsupported parameter: 'stop' is not supported with this model.",
    }

    def answer(request: dict[str, Any]) -> Reply:
        for field, said in words.items():
            if field in request:
                body = json.dumps({"error": {"message": said, "param": field}})
                return Reply(status=400, body=body, content_type="application/json")
        return Reply(text="Hello. END and more")

    messages = (ChatMessage(role="user", content="hi"),)
    request = ModelRequest(messages=messages, stop=("END",), max_tokens=50)
    async with FakeServer([answer] * 4, wire="openai") as server:
        provider = OpenAIChat("m", base_url=server.base_url, max_retries=0)
        chunks = await _read(provider, request)
        sent = server.requests
    assert len(sent) == 4 and sent[-1]["max_completion_tokens"] == 50
    assert text_of(chunks) == "Hello. "
    assert chunks[-1] == FinishChunk(reason="stop", stop_sequence="END")
