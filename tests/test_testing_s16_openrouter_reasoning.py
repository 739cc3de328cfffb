"""``FakeServer(reasoning_field=...)``: the openai wire streams reasoning where a
given server does. OpenRouter (``"reasoning_details"``) sends the text in
``delta.reasoning`` and again as ``reasoning_details`` fragments, which a client
must send back with the reply's tool calls; ``OpenAIChat`` reads them back
from the fake as it does from OpenRouter."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from provider_support import collect, provider_for

from streamtools.model import (
    CallChunk,
    Chunk,
    FinishChunk,
    ReasoningChunk,
    TextChunk,
)
from streamtools.providers import OpenAIChat
from streamtools.providers.openrouter import DETAILS
from streamtools.providers.whole import chat_completion
from streamtools.runtime import Agent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import FakeCall, Reply
from streamtools.tools import tool
from streamtools.transcript import AssistantMessage


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


SIX = Reply(
    reasoning="Six by seven.", calls=(FakeCall(name="multiply", arguments={"a": 6, "b": 7}),)
)
# a signed thinking block streamed in two pieces, then a redacted one (a recording
# of an Anthropic model, say)
SIGNED: list[Chunk] = [
    ReasoningChunk(text="Six "),
    ReasoningChunk(text="by seven.", signature="sig0"),
    ReasoningChunk(text="", redacted="b3BhcXVl"),
    CallChunk(index=0, id="c1", name="multiply", arguments='{"a": 6, "b": 7}'),
    FinishChunk(reason="tool_calls"),
]

REDACTED = {"type": "reasoning.encrypted", "data": "b3BhcXVl", "format": "unknown", "index": 1}


def _deltas(raw: bytes) -> list[dict[str, Any]]:
    events = [line[6:] for line in raw.decode().splitlines() if line.startswith("data: {")]
    return [json.loads(e)["choices"][0]["delta"] for e in events if json.loads(e)["choices"]]


def _post(server: FakeServer, **extra: Any) -> httpx.Response:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], **extra}
    return httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=10)


def test_openrouter_sends_reasoning_and_reasoning_details() -> None:
    with FakeServer([SIX, SIGNED], reasoning_field="reasoning_details") as server:
        first = _deltas(_post(server, stream=True).content)
        second = _deltas(_post(server, stream=True).content)
    thought = [d for d in first if d.get("reasoning_details")]
    assert "".join(d["reasoning"] for d in thought) == "Six by seven."
    for d in thought:  # each piece twice: as text, and as a fragment of block 0
        [detail] = d["reasoning_details"]
        assert detail == {
            "type": "reasoning.text",
            "text": d["reasoning"],
            "format": "unknown",
            "index": 0,
        }
    assert not any("reasoning_content" in d for d in first)
    details = [x for d in second for x in d.get("reasoning_details") or ()]
    assert details == [
        {"type": "reasoning.text", "text": "Six ", "format": "unknown", "index": 0},
        {
            "type": "reasoning.text",
            "text": "by seven.",
            "format": "unknown",
            "index": 0,
            "signature": "sig0",
        },
        REDACTED,
    ]


async def test_openai_chat_reads_openrouters_details_from_the_fake(anyio_backend: str) -> None:
    async with FakeServer([SIX, SIGNED], reasoning_field="reasoning_details") as server:
        provider = provider_for(server)
        plain = await collect(provider)
        signed = await collect(provider)
    assert "".join(c.text for c in plain if isinstance(c, ReasoningChunk)) == "Six by seven."
    [origin] = [c.origin for c in plain if isinstance(c, ReasoningChunk) and c.origin]
    assert origin.field == "reasoning"
    extras = [c.extra for c in plain if isinstance(c, CallChunk) and c.extra]
    block = {"type": "reasoning.text", "text": "Six by seven.", "format": "unknown", "index": 0}
    assert extras == [{DETAILS: [block]}]
    # a signed block's fragments joined, its signature kept; the redacted one as it came
    extras = [c.extra for c in signed if isinstance(c, CallChunk) and c.extra]
    assert extras == [
        {
            DETAILS: [
                {
                    "type": "reasoning.text",
                    "text": "Six by seven.",
                    "format": "unknown",
                    "index": 0,
                    "signature": "sig0",
                },
                REDACTED,
            ]
        }
    ]


async def test_an_agent_sends_openrouters_details_back(anyio_backend: str) -> None:
    """The reply's ``reasoning_details`` go back on the next request's assistant
    message with its calls, as OpenRouter asks."""
    async with FakeServer([SIGNED, "42."], reasoning_field="reasoning_details") as server:
        result = await Agent(provider_for(server), [multiply], native=True).run("go")
        second = server.requests[1]
    assert result.text == "42."
    reply = second["messages"][1]
    assert [d["type"] for d in reply["reasoning_details"]] == [
        "reasoning.text",
        "reasoning.encrypted",
    ]
    assert reply["reasoning_details"][0]["text"] == "Six by seven."
    assert reply["reasoning_details"][0]["signature"] == "sig0"
    kept = [m for m in result.transcript.messages if isinstance(m, AssistantMessage)][0]
    assert kept.calls[0].extra == {DETAILS: reply["reasoning_details"]}


async def test_a_whole_openrouter_answer_reads_as_the_stream(anyio_backend: str) -> None:
    """Asked for no stream, the fake answers OpenRouter's whole message
    (``reasoning`` and the blocks whole); read back, it gives what the stream did."""
    with FakeServer([SIGNED, SIGNED], reasoning_field="reasoning_details") as server:
        answer = _post(server)
        streamed = _post(server, stream=True).content
    message = answer.json()["choices"][0]["message"]
    assert message["reasoning"] == "Six by seven."
    assert [d.get("text", d.get("data")) for d in message["reasoning_details"]] == [
        "Six by seven.",
        "b3BhcXVl",
    ]
    assert [d["index"] for d in message["reasoning_details"]] == [0, 1]
    as_stream = chat_completion(answer.content)
    assert as_stream is not None

    def client(body: bytes) -> httpx.AsyncClient:
        def reply(request: httpx.Request) -> httpx.Response:
            return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

        return httpx.AsyncClient(transport=httpx.MockTransport(reply))

    from_whole = await collect(OpenAIChat("m", client=client(as_stream)))
    from_stream = await collect(OpenAIChat("m", client=client(streamed)))

    def details(chunks: list[Chunk]) -> list[Any]:
        return [c.extra for c in chunks if isinstance(c, CallChunk) and c.extra]

    assert details(from_whole) == details(from_stream) != []


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_a_single_reasoning_field(anyio_backend: str, field: str) -> None:
    async with FakeServer([SIX, SIX], reasoning_field=field) as server:  # type: ignore[arg-type]
        chunks = await collect(provider_for(server))
        raw = _post(server, stream=True).content
    thought = [d for d in _deltas(raw) if field in d]
    assert "".join(d[field] for d in thought) == "Six by seven."
    assert not any("reasoning_details" in d for d in _deltas(raw))
    assert "".join(c.text for c in chunks if isinstance(c, ReasoningChunk)) == "Six by seven."
    [origin] = [c.origin for c in chunks if isinstance(c, ReasoningChunk) and c.origin]
    assert origin.field == field
    assert not any(c.extra for c in chunks if isinstance(c, CallChunk))
    assert not any(isinstance(c, TextChunk) and c.text for c in chunks)


def test_an_unknown_reasoning_field_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown reasoning_field 'thinking'"):
        FakeServer(reasoning_field="thinking")  # type: ignore[arg-type]
