"""Shared fixtures of the provider tests: a request, a collector, a MockTransport client."""

from __future__ import annotations

import json
from typing import Any

import httpx

from streamtools.model import (
    ChatMessage,
    Chunk,
    Model,
    ModelRequest,
    TextChunk,
    ToolSpec,
    UsageChunk,
)
from streamtools.providers import AnthropicMessages, HTTPProvider, OllamaChat, OpenAIChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply, Wire

HI = ModelRequest(messages=(ChatMessage(role="user", content="hi"),))
# a request to count tokens of: a prompt, tools, and fields that shape only the answer
COUNTED = ModelRequest(
    messages=(
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="user", content="What is the weather in Paris today?"),
    ),
    stop=("END",),
    temperature=0.5,
    max_tokens=99,
    tools=(ToolSpec(name="weather", description="Weather.", parameters={"type": "object"}),),
)

PROVIDERS: dict[str, type[HTTPProvider]] = {
    "openai": OpenAIChat,
    "anthropic": AnthropicMessages,
    "ollama": OllamaChat,
}


async def collect(model: Model, request: ModelRequest = HI) -> list[Chunk]:
    """Every chunk of one streamed answer."""
    async with model.stream(request) as chunks:
        return [chunk async for chunk in chunks]


def usage_of(chunks: list[Chunk]) -> UsageChunk:
    """The one ``UsageChunk`` of an answer (there must be exactly one)."""
    found = [c for c in chunks if isinstance(c, UsageChunk)]
    assert len(found) == 1, chunks
    return found[0]


# the end of an OpenAI-compatible stream
DONE = "data: [DONE]\n\n"


def sse(*events: Any) -> str:
    """An SSE body: each JSON object as one data event, a string as written."""
    return "".join(e if isinstance(e, str) else f"data: {json.dumps(e)}\n\n" for e in events)


def text_of(chunks: list[Chunk]) -> str:
    return "".join(c.text for c in chunks if isinstance(c, TextChunk))


def provider_for(server: FakeServer, **options: Any) -> HTTPProvider:
    """The provider that speaks ``server``'s wire format, pointed at it."""
    return PROVIDERS[server.wire]("m", base_url=server.base_url, **options)


def mock(
    body: bytes | str,
    *,
    status: int = 200,
    ctype: str | None = None,
    stream_ctype: str = "text/event-stream",
    seen: list[httpx.Request] | None = None,
    headers: dict[str, str] | None = None,
) -> httpx.AsyncClient:
    """A client whose every request gets ``body`` with ``status``; requests go to ``seen``.

    The content type is ``ctype`` if given, else ``stream_ctype`` for a 2xx and
    JSON for an error status.
    """
    data = body.encode() if isinstance(body, str) else body
    if ctype is None:
        ctype = stream_ctype if status < 300 else "application/json"

    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return httpx.Response(
            status, headers={"content-type": ctype, **(headers or {})}, content=data
        )

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


async def read_sse(body: str, transport: str, wire: Wire = "openai") -> list[Chunk]:
    """The chunks the ``wire``'s provider reads from ``body``, an event stream,
    over ``transport``: ``mock`` (``httpx.MockTransport``) or ``http`` (a
    ``FakeServer`` on 127.0.0.1 sending it as written); no retries."""
    provider = PROVIDERS[wire]
    if transport == "mock":
        return await collect(
            provider("m", client=mock(body, ctype="text/event-stream"), max_retries=0)
        )
    reply = Reply(raw=body.encode(), content_type="text/event-stream")
    async with FakeServer([reply], wire=wire) as server:
        return await collect(provider("m", base_url=server.base_url, max_retries=0))
