"""OllamaChat: NDJSON lines, whole tool calls, thinking, errors (MockTransport + FakeServer)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import httpx
import provider_support
import pytest
from provider_support import collect

from streamtools.errors import ProviderError
from streamtools.events import CallEnd
from streamtools.model import (
    CallChunk,
    ChatMessage,
    FinishChunk,
    ModelRequest,
    NativeCall,
    ReasoningChunk,
    TextChunk,
    ToolSpec,
    UsageChunk,
)
from streamtools.native import NativeCalls
from streamtools.providers import OllamaChat, base
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import FakeCall, Reply

pytestmark = pytest.mark.anyio

mock = partial(provider_support.mock, stream_ctype="application/x-ndjson")


def lines(*objs: Any) -> str:
    return "".join(json.dumps(o) + "\n" for o in objs)


def msg(**fields: Any) -> dict[str, Any]:
    return {"model": "m", "message": {"role": "assistant", "content": "", **fields}, "done": False}


DONE = {
    "model": "m",
    "message": {"role": "assistant", "content": ""},
    "done": True,
    "done_reason": "stop",
    "prompt_eval_count": 5,
    "eval_count": 6,
}


async def test_whole_calls_over_http(anyio_backend: str) -> None:
    reply = Reply(
        reasoning="thinking",
        text="Two calls.",
        calls=(FakeCall(name="add", arguments={"a": 1}), FakeCall(name="add", arguments={"a": 2})),
    )
    async with FakeServer([reply], wire="ollama") as server:
        chunks = await collect(OllamaChat("qwen3", base_url=server.base_url))
        assert server.received[0].path == "/api/chat"
    assert "".join(c.text for c in chunks if isinstance(c, ReasoningChunk)) == "thinking"
    assert "".join(c.text for c in chunks if isinstance(c, TextChunk)) == "Two calls."
    calls = [c for c in chunks if isinstance(c, CallChunk)]
    assert calls == [
        CallChunk(index=0, name="add", arguments='{"a":1}', done=True),
        CallChunk(index=1, name="add", arguments='{"a":2}', done=True),
    ]
    native = NativeCalls(["add"])
    events = [e for c in calls for e in native.feed(c)]
    assert native.end() == []  # whole calls end on arrival
    ends = [e for e in events if isinstance(e, CallEnd)]
    assert [(e.id, e.arguments) for e in ends] == [("call_0", {"a": 1}), ("call_1", {"a": 2})]
    assert chunks[-1] == FinishChunk(reason="tool_calls")  # although Ollama said "stop"


async def test_text_usage_and_length(anyio_backend: str) -> None:
    body = lines(msg(content="Hel"), msg(content="lo"), {**DONE, "done_reason": "length"})
    chunks = await collect(OllamaChat("m", client=mock(body)))
    assert chunks == [
        TextChunk(text="Hel"),
        TextChunk(text="lo"),
        UsageChunk(input_tokens=5, output_tokens=6),
        FinishChunk(reason="length"),
    ]


async def test_error_line_and_cut_stream(anyio_backend: str) -> None:
    async with FakeServer([Reply(text="a b c", error_after=2)], wire="ollama") as s:
        chunks = await collect(OllamaChat("m", base_url=s.base_url))
    assert chunks[-1] == FinishChunk(
        reason="error", message="Ollama error: model runner stopped unexpectedly"
    )
    cut = await collect(OllamaChat("m", client=mock(lines(msg(content="a")))))
    assert isinstance(cut[-1], FinishChunk) and cut[-1].reason == "error"


async def test_lines_end_at_newline_only(anyio_backend: str) -> None:
    """Go's JSON encoder leaves U+0085, U+2028 and U+2029 raw inside strings;
    they are text, not line ends. Lines split across the body's parts (and a
    CRLF) are joined before they are decoded."""
    text = "a\u0085b\u2028c\u2029d 你好"
    line = json.dumps(msg(content=text), ensure_ascii=False)  # as Go writes them: raw
    raw = (line + "\r\n" + lines(DONE)).encode()
    parts = [raw[i : i + 5] for i in range(0, len(raw), 5)]  # cuts inside UTF-8 too

    async def body() -> AsyncIterator[bytes]:
        for part in parts:
            yield part

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "application/x-ndjson"}, content=body())

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    chunks = await collect(OllamaChat("m", client=client))
    assert chunks[0] == TextChunk(text=text)
    assert chunks[-1] == FinishChunk(reason="stop")


async def test_malformed_line(anyio_backend: str) -> None:
    chunks = await collect(OllamaChat("m", client=mock(lines(msg(content="a")) + "{not json\n")))
    assert chunks[0] == TextChunk(text="a")
    assert isinstance(chunks[-1], FinishChunk) and "malformed JSON" in (chunks[-1].message or "")


async def test_model_not_found(anyio_backend: str) -> None:
    body = '{"error":"model \\"nope\\" not found, try pulling it first"}'
    with pytest.raises(ProviderError) as info:
        await collect(OllamaChat("nope", client=mock(body, status=404, ctype="application/json")))
    assert info.value.status == 404
    assert 'model "nope" not found' in str(info.value)


async def test_request_body(anyio_backend: str) -> None:
    seen: list[httpx.Request] = []
    request = ModelRequest(
        messages=(
            ChatMessage(role="user", content="add"),
            ChatMessage(
                role="assistant",
                content="",
                tool_calls=(NativeCall(id="c0", name="add", arguments={"a": 1}),),
            ),
            ChatMessage(role="tool", content="2", tool_call_id="c0"),
        ),
        stop=("STOP",),
        tools=(ToolSpec(name="add", description="Add.", parameters={"type": "object"}),),
        tool_choice="auto",
        temperature=0.0,
        max_tokens=64,
        top_p=0.8,
        top_k=20,
        seed=7,
        presence_penalty=1.5,
        frequency_penalty=0.0,
        extra={"think": True},
    )
    await collect(OllamaChat("qwen3", client=mock(lines(DONE), seen=seen)), request)
    assert seen[0].url == "http://127.0.0.1:11434/api/chat"
    assert json.loads(seen[0].content) == {
        "model": "qwen3",
        "stream": True,
        "messages": [
            {"role": "user", "content": "add"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c0", "function": {"name": "add", "arguments": {"a": 1}}}],
            },
            {"role": "tool", "content": "2", "tool_name": "add", "tool_call_id": "c0"},
        ],
        "options": {
            "stop": ["STOP"],
            "temperature": 0.0,
            "num_predict": 64,
            "top_p": 0.8,
            "top_k": 20,
            "seed": 7,
            "presence_penalty": 1.5,
            "frequency_penalty": 0.0,
        },
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "add",
                    "description": "Add.",
                    "parameters": {"type": "object"},
                },
            }
        ],
        "think": True,
    }


async def test_extra_body_adds_to_options_over_http(anyio_backend: str) -> None:
    # Ollama's default context is short: num_ctx goes with every request, added to
    # the options the request sets (stop and sampling kept); request.extra wins
    request = ModelRequest(
        messages=(ChatMessage(role="user", content="hi"),),
        stop=("</am:tool_call>",),
        temperature=0.2,
        extra={"options": {"temperature": 0.9}, "keep_alive": "1m"},
    )
    async with FakeServer(["Hi."], wire="ollama") as server:
        model = OllamaChat(
            "qwen3", base_url=server.base_url,
            extra_body={"options": {"num_ctx": 16384}, "keep_alive": "10m", "think": False},
        )
        await collect(model, request)
        body = server.received[0].body
    assert body["options"] == {"stop": ["</am:tool_call>"], "temperature": 0.9, "num_ctx": 16384}
    assert (body["keep_alive"], body["think"]) == ("1m", False)
async def test_ndjson_labelled_as_an_event_stream_is_read(anyio_backend: str) -> None:
    """Ollama-compatible servers and proxies that label NDJSON
    ``text/event-stream`` were refused before a line was read."""
    body = lines(msg(thinking="hmm"), msg(content="Hel"), msg(content="lo"), DONE)
    chunks = await collect(OllamaChat("m", client=mock(body, ctype="text/event-stream")))
    assert "".join(c.text for c in chunks if isinstance(c, TextChunk)) == "Hello"
    assert [c.text for c in chunks if isinstance(c, ReasoningChunk)] == ["hmm"]
    assert chunks[-2:] == [UsageChunk(input_tokens=5, output_tokens=6), FinishChunk(reason="stop")]


async def test_lines_framed_as_sse_events_are_read(anyio_backend: str) -> None:
    """A proxy that wraps each line in an SSE event (``data: {…}``), with a
    comment, an event name, CRLF line ends and a closing ``[DONE]``."""
    framed = [f"data: {json.dumps(o)}\r\n\r\n" for o in (msg(content="Hi"), msg(content="!"))]
    body = ": keep-alive\r\n\r\nevent: message\r\n" + "".join(framed)
    body += f"data:{json.dumps(DONE)}\r\n\r\ndata: [DONE]\r\n\r\n"
    chunks = await collect(OllamaChat("m", client=mock(body, ctype="text/event-stream")))
    assert "".join(c.text for c in chunks if isinstance(c, TextChunk)) == "Hi!"
    assert chunks[-1] == FinishChunk(reason="stop")


async def test_an_error_line_labelled_as_an_event_stream_ends_in_an_error(
    anyio_backend: str,
) -> None:
    body = lines(msg(content="a"), {"error": "model runner has unexpectedly stopped"})
    chunks = await collect(OllamaChat("m", client=mock(body, ctype="text/event-stream")))
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert "unexpectedly stopped" in (last.message or "")


async def test_a_stream_labelled_as_sse_over_http(anyio_backend: str) -> None:
    reply = Reply(
        text="Two words.",
        calls=(FakeCall(name="add", arguments={"a": 1}),),
        content_type="text/event-stream",
    )
    async with FakeServer([reply], wire="ollama") as server:
        chunks = await collect(OllamaChat("m", base_url=server.base_url))
    assert "".join(c.text for c in chunks if isinstance(c, TextChunk)) == "Two words."
    calls = [c for c in chunks if isinstance(c, CallChunk)]
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("add", {"a": 1})]
    assert chunks[-1] == FinishChunk(reason="tool_calls")


async def test_a_long_stream_labelled_as_sse_is_read_line_by_line(
    anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NDJSON has no blank lines: read as SSE records, a long answer would be
    one record, and cut at the record limit."""
    monkeypatch.setattr(base, "_RECORD_LIMIT", 4 * 1024)
    body = lines(*[msg(content="word ") for _ in range(400)], DONE)
    chunks = await collect(OllamaChat("m", client=mock(body, ctype="text/event-stream")))
    assert "".join(c.text for c in chunks if isinstance(c, TextChunk)) == "word " * 400
    assert chunks[-1] == FinishChunk(reason="stop")


@pytest.mark.parametrize("reason", ["load", "unload"])
async def test_an_answer_ollama_only_loaded_for_is_an_error(
    anyio_backend: str, reason: str
) -> None:
    """Ollama answers a request with no user turn (only system messages) by
    loading the model and ending with ``done_reason: "load"``, having generated
    nothing: it passed as a finish no consumer knew, an empty final answer."""
    done = {"model": "m", "message": {"role": "assistant", "content": ""}, "done": True,
            "done_reason": reason}  # fmt: skip
    chunks = await collect(OllamaChat("m", client=mock(lines(done))))
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert f"done_reason {reason!r}" in (last.message or "") and "user" in (last.message or "")
