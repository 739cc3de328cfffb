"""Fuzz: whatever bytes a server sends, a provider yields chunks ending in exactly one
FinishChunk, or raises ProviderError, and never anything else (no hang, no httpx traceback)."""

from __future__ import annotations

import ast
from pathlib import Path

import anyio
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamtools.native
from streamtools.errors import ProviderError
from streamtools.model import ChatMessage, Chunk, FinishChunk, ModelRequest, TextChunk
from streamtools.providers import AnthropicMessages, HTTPProvider, OllamaChat, OpenAIChat

HI = ModelRequest(messages=(ChatMessage(role="user", content="hi"),), stop=("STOP",))

FRAGMENTS = [
    b"data: [DONE]\n\n",
    b": keep-alive\n\n",
    b"data: \n\n",
    b'data: {"choices":[{"index":0,"delta":{"content":"hi STO"}}]}\n\n',
    b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a",'
    b'"function":{"name":"t","arguments":"{"}}]}}]}\n\n',
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
    b'data: {"choices":5}\n\n',
    b'data: {"error":{"message":"boom"}}\n\n',
    b"event: error\ndata: x\n\n",
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
    b'"content_block":{"type":"tool_use","id":"t","name":"n","input":{}}}\n\n',
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    b'"delta":{"type":"text_delta","text":"P a"}}\n\n',
    b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"}}\n\n',
    b'data: {"type":"message_stop"}\n\n',
    b'data: {"type":"error","error":{"type":"overloaded_error","message":"x"}}\n\n',
    b'{"message":{"content":"a"},"done":false}\n',
    b'{"message":{"tool_calls":[{"function":{"name":"t","arguments":{"a":1}}}]},"done":false}\n',
    b'{"done":true,"done_reason":"stop"}\n',
    b'{"error":"x"}\n',
    b"{not json\n",
    b"\xff\xfe garbage \x00\n",
    b"\r\n",
    b'data: {"choices":[',
]


def provider(kind: str, body: bytes, status: int, ctype: str) -> HTTPProvider:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, headers={"content-type": ctype}, content=body)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    cls: type[HTTPProvider] = {
        "openai": OpenAIChat,
        "anthropic": AnthropicMessages,
        "ollama": OllamaChat,
    }[kind]
    return cls(
        "m", base_url="http://mock", client=client, max_retries=0, supports_stop=kind != "ollama"
    )


async def collect(model: HTTPProvider) -> list[Chunk]:
    async with model.stream(HI) as chunks:
        return [c async for c in chunks]


@settings(max_examples=150, deadline=None)
@given(
    kind=st.sampled_from(["openai", "anthropic", "ollama"]),
    parts=st.lists(st.sampled_from(FRAGMENTS) | st.binary(max_size=20), max_size=12),
    status=st.sampled_from([200, 200, 200, 400, 429, 500]),
    ctype=st.sampled_from(["text/event-stream", "application/x-ndjson", "text/html", ""]),
    backend=st.sampled_from(["asyncio", "trio"]),
)
def test_any_bytes_give_chunks_or_provider_error(
    kind: str, parts: list[bytes], status: int, ctype: str, backend: str
) -> None:
    model = provider(kind, b"".join(parts), status, ctype)
    try:
        chunks = anyio.run(collect, model, backend=backend)
    except ProviderError as exc:
        assert exc.status == status
        return
    assert chunks and isinstance(chunks[-1], FinishChunk)
    assert sum(isinstance(c, FinishChunk) for c in chunks) == 1


def test_native_is_core() -> None:
    """streamtools.native imports only the standard library, msgspec and the core."""
    tree = ast.parse(Path(streamtools.native.__file__).read_text(encoding="utf-8"))
    imported = {
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
    } | {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert imported <= {"__future__", "collections", "typing", "msgspec", "streamtools"}


DEEP = "[" * 5000 + "]" * 5000  # past every JSON decoder's nesting limit (about 1000)
DEEP_EVENTS = {
    "openai": f'data: {{"choices":[{{"delta":{{"content":"kept"}}}}]}}\n\ndata: {{"x":{DEEP}}}\n\n',
    "anthropic": 'data: {"type":"content_block_delta","index":0,'
    '"delta":{"type":"text_delta","text":"kept"}}\n\n'
    f'data: {{"type":"ping","x":{DEEP}}}\n\n',
    "ollama": f'{{"message":{{"content":"kept"}}}}\n{{"x":{DEEP}}}\n',
}


@pytest.mark.parametrize("kind", sorted(DEEP_EVENTS))
@pytest.mark.anyio
async def test_json_nested_too_deeply_is_an_error_finish(kind: str, anyio_backend: str) -> None:
    """A server's JSON nested deeper than the decoder goes raises RecursionError in
    the decoder; it ends the stream as malformed JSON does, the text kept."""
    body = DEEP_EVENTS[kind].encode()
    chunks = await collect(provider(kind, body, 200, ctype_of(kind)))
    assert chunks[0] == TextChunk(text="kept")
    assert isinstance(chunks[-1], FinishChunk) and chunks[-1].reason == "error"
    assert "nested too deeply" in (chunks[-1].message or "")


@pytest.mark.parametrize("kind", sorted(DEEP_EVENTS))
@pytest.mark.anyio
async def test_an_error_body_nested_too_deeply_is_a_provider_error(
    kind: str, anyio_backend: str
) -> None:
    model = provider(kind, f'{{"error":{DEEP}}}'.encode(), 400, "application/json")
    with pytest.raises(ProviderError) as caught:
        await collect(model)
    assert caught.value.status == 400


@pytest.mark.anyio
async def test_a_side_answer_nested_too_deeply_is_a_provider_error(anyio_backend: str) -> None:
    model = provider("anthropic", f'{{"input_tokens":{DEEP}}}'.encode(), 200, "application/json")
    with pytest.raises(ProviderError, match="nested too deeply"):
        await model.count_tokens(HI)  # type: ignore[attr-defined]


def ctype_of(kind: str) -> str:
    return "application/x-ndjson" if kind == "ollama" else "text/event-stream"
