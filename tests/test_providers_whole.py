"""A server that ignores ``stream: true`` and answers with the whole answer as JSON
(some gateways do): each provider reads it as the stream it stands for."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import msgspec
import pytest
from openai.types.chat import ChatCompletionMessageFunctionToolCall
from provider_support import PROVIDERS, collect, mock
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from test_proxy import WEATHER, _anthropic, _openai, serve

from streamtools.errors import ProviderError
from streamtools.model import (
    CallChunk,
    Chunk,
    FinishChunk,
    ReasoningChunk,
    ReasoningOrigin,
    TextChunk,
    UsageChunk,
)
from streamtools.providers import AnthropicMessages, OllamaChat, OpenAIChat
from streamtools.providers.bodies import reasoning_server
from streamtools.proxy import ProxyConfig, create_app

COMPLETION: Any = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "m",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "reasoning_content": "Paris and Oslo.",
                "content": "Checking both.",
                "tool_calls": [
                    {"id": "c1", "type": "function",
                     "function": {"name": "weather", "arguments": '{"city": "Paris"}'}},
                    {"id": "c2", "type": "function",
                     "function": {"name": "weather", "arguments": '{"n": 5000000000000000000000}'}},
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19},
}
MESSAGE: Any = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "m",
    "content": [
        {"type": "thinking", "thinking": "Paris and Oslo.", "signature": "sig"},
        {"type": "text", "text": "Checking both."},
        {"type": "tool_use", "id": "c1", "name": "weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "c2", "name": "weather", "input": {"n": 5000000000000000000000}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 12, "output_tokens": 7},
}
OLLAMA: Any = {
    "model": "m",
    "message": {
        "role": "assistant",
        "thinking": "Paris and Oslo.",
        "content": "Checking both.",
        "tool_calls": [{"function": {"name": "weather", "arguments": {"city": "Paris"}}}],
    },
    "done": True,
    "done_reason": "stop",
    "prompt_eval_count": 12,
    "eval_count": 7,
}
WHOLE = {"openai": COMPLETION, "anthropic": MESSAGE, "ollama": OLLAMA}
BIG = '{"n": 5000000000000000000000}'  # as written: not 5e+21


def calls_of(chunks: list[Chunk]) -> list[tuple[str | None, str]]:
    """Each call's name and its whole arguments, in order."""
    names: dict[int, str | None] = {}
    args: dict[int, str] = {}
    for c in chunks:
        if isinstance(c, CallChunk):
            names.setdefault(c.index, c.name)
            args[c.index] = args.get(c.index, "") + c.arguments
    return [(names[i], args[i]) for i in sorted(names)]


def check_answer(wire: str, chunks: list[Chunk]) -> None:
    # every wire says where its reasoning came from (``ReasoningOrigin``)
    first = chunks[0]
    assert isinstance(first, ReasoningChunk)
    assert first.origin is not None
    assert msgspec.structs.replace(first, origin=None) == ReasoningChunk(text="Paris and Oslo.")
    assert [c for c in chunks if isinstance(c, TextChunk)] == [TextChunk(text="Checking both.")]
    called = calls_of(chunks)
    assert [(name, json.loads(text)) for name, text in called[:1]] == [
        ("weather", {"city": "Paris"})
    ]
    if wire != "ollama":  # (Ollama writes arguments as an object: one call here)
        assert called[1] == ("weather", BIG)
    assert [c for c in chunks if isinstance(c, UsageChunk)] == [
        UsageChunk(input_tokens=12, output_tokens=7)
    ]
    finish = chunks[-1]
    assert isinstance(finish, FinishChunk)
    assert finish.reason == "tool_calls"
    assert sum(isinstance(c, FinishChunk) for c in chunks) == 1


@pytest.mark.anyio
@pytest.mark.parametrize("wire", ["openai", "anthropic", "ollama"])
@pytest.mark.parametrize("ctype", ["application/json", "application/json; charset=utf-8"])
async def test_a_whole_json_answer_is_read_as_its_stream(
    anyio_backend: str, wire: str, ctype: str
) -> None:
    """It was refused ('answered HTTP 200 with application/json, expected
    text/event-stream'), so every request through such a gateway failed."""
    client = mock(json.dumps(WHOLE[wire]), ctype=ctype)
    check_answer(wire, await collect(PROVIDERS[wire]("m", client=client)))


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("wire", "body"),
    [
        ("openai", '{"error": "model not loaded"}'),
        ("openai", '{"choices": 3}'),
        ("openai", "not json"),
        ("anthropic", '{"type": "error", "error": {"type": "overloaded_error"}}'),
        ("anthropic", '{"type": "message", "content": "x"}'),
    ],
)
async def test_other_json_is_still_refused_before_the_stream(
    anyio_backend: str, wire: str, body: str
) -> None:
    provider = PROVIDERS[wire]("m", client=mock(body, ctype="application/json"))
    with pytest.raises(ProviderError, match="answered HTTP 200 with application/json") as info:
        await collect(provider)
    assert info.value.status == 200 and info.value.body == body


@pytest.mark.anyio
async def test_an_anthropic_answer_keeps_its_blocks_in_order(anyio_backend: str) -> None:
    """Thinking (with its signature, which the next request needs back),
    redacted thinking, text and a cut-off call, as the stream would give them."""
    body = {
        **MESSAGE,
        "content": [
            {"type": "redacted_thinking", "data": "xyz"},
            {"type": "text", "text": "a"},
            {"type": "tool_use", "id": "c1", "name": "weather", "input": {}},
            {"type": "thinking", "thinking": "b", "signature": "s"},
        ],
        "stop_reason": "end_turn",
    }
    client = mock(json.dumps(body), ctype="application/json")
    chunks = await collect(AnthropicMessages("m", client=client))
    server = reasoning_server(AnthropicMessages.default_base_url, "m")
    origin = ReasoningOrigin(field="thinking", server=server)
    assert chunks == [
        ReasoningChunk(text="", redacted="xyz"),
        TextChunk(text="a"),
        CallChunk(index=2, id="c1", name="weather", arguments=""),
        CallChunk(index=2, arguments="{}"),
        CallChunk(index=2, arguments="", done=True),
        ReasoningChunk(text="b", origin=origin),  # the first reasoning text says it
        ReasoningChunk(text="", signature="s"),
        UsageChunk(input_tokens=12, output_tokens=7),
        FinishChunk(reason="stop"),
    ]


@asynccontextmanager
async def whole_server(answer: Any) -> AsyncIterator[str]:
    """A real HTTP server on 127.0.0.1 that answers every POST with ``answer``
    as one JSON body, as a gateway that ignores ``stream: true`` does."""
    body = json.dumps(answer).encode()

    async def handle(conn: anyio.abc.SocketStream) -> None:
        async with conn:
            seen = b""
            while b"\r\n\r\n" not in seen:
                seen += await conn.receive()
            head, _, rest = seen.partition(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1]) for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            while len(rest) < length:
                rest += await conn.receive()
            await conn.send(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
                + f"content-length: {len(body)}\r\n\r\n".encode() + body
            )

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handle)
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        yield f"http://127.0.0.1:{port}"
        tg.cancel_scope.cancel()


@pytest.mark.anyio
@pytest.mark.parametrize("wire", ["openai", "anthropic", "ollama"])
async def test_a_whole_answer_from_a_real_server(anyio_backend: str, wire: str) -> None:
    async with whole_server(WHOLE[wire]) as url:
        base = f"{url}/v1" if wire == "openai" else url
        model = {"openai": OpenAIChat, "anthropic": AnthropicMessages, "ollama": OllamaChat}[wire]
        with anyio.fail_after(10):  # stops a hang only
            check_answer(wire, await collect(model("m", base_url=base)))


def whole_upstream(text: str) -> Starlette:
    """An OpenAI-compatible upstream that answers every request whole."""

    async def chat(request: Request) -> JSONResponse:
        assert (await request.json())["stream"] is True  # asked for a stream all the same
        answer = {**COMPLETION, "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text},
             "finish_reason": "stop"}
        ]}
        return JSONResponse(answer)

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


@pytest.mark.parametrize("stream", [True, False])
def test_the_proxy_serves_a_whole_upstream_answer(stream: bool) -> None:
    """Every proxied request was a 502. Now the model's call comes back as a
    real tool call, to the openai and the anthropic SDK alike."""
    call = '<am:tool_call name="weather"><city>Paris</city></am:tool_call>'
    with serve(whole_upstream(f"Let me check. {call}")) as upstream:
        with serve(create_app(ProxyConfig(upstream=f"{upstream}/v1"))) as url:
            user: Any = [{"role": "user", "content": "Weather in Paris?"}]
            client = _openai(url)
            kw: Any = {"model": "m", "messages": user, "tools": [WEATHER]}
            if stream:
                chunks = list(client.chat.completions.create(stream=True, **kw))
                finish = [c.choices[0].finish_reason for c in chunks if c.choices]
                calls = [
                    t.function for c in chunks if c.choices
                    for t in c.choices[0].delta.tool_calls or ()
                ]
                assert finish[-1] == "tool_calls"
                assert calls[0] is not None and calls[0].name == "weather"
                arguments = "".join(f.arguments or "" for f in calls if f is not None)
            else:
                completion = client.chat.completions.create(**kw)
                choice = completion.choices[0]
                assert choice.finish_reason == "tool_calls" and choice.message.tool_calls
                tool_call = choice.message.tool_calls[0]
                assert isinstance(tool_call, ChatCompletionMessageFunctionToolCall)
                arguments = tool_call.function.arguments
            assert json.loads(arguments) == {"city": "Paris"}
            tool = {"name": "weather", "input_schema": WEATHER["function"]["parameters"]}
            message = _anthropic(url).messages.create(
                model="m", max_tokens=50, messages=user, tools=[tool]  # type: ignore[list-item]
            )
            assert message.stop_reason == "tool_use"
            assert [b.type for b in message.content] == ["text", "tool_use"]
