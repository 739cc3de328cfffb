"""OpenAIChat: request bodies, SSE wire facts, errors and retries (MockTransport + FakeServer)."""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import SimpleNamespace
from typing import Any

import anyio
import anyio.abc
import httpx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from provider_support import COUNTED, HI, PROVIDERS, collect, mock, provider_for, sse, text_of

from streamtools.errors import ProviderError, TokenCountUnavailable, UsageError
from streamtools.events import CallEnd, CallError, CallStart
from streamtools.model import (
    CallChunk,
    ChatMessage,
    Chunk,
    FinishChunk,
    ModelRequest,
    NativeCall,
    ReasoningChunk,
    TextChunk,
    ToolSpec,
    UsageChunk,
    UseTool,
)
from streamtools.native import NativeCalls
from streamtools.prompts import project
from streamtools.providers import OpenAIChat, base
from streamtools.providers.base import StopCutter
from streamtools.providers.failures import retry_after_seconds, transport_error
from streamtools.providers.openrouter import DETAILS
from streamtools.providers.ssemend import SSEMend
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import FakeCall, Reply, Wire
from streamtools.testing.fake_wire import CONTENT_TYPES, chat_template, token_pieces
from streamtools.transcript import ToolCall, Transcript

pytestmark = pytest.mark.anyio


def delta(**fields: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": fields, "finish_reason": None}]}


def finish(reason: str, **extra: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": reason, **extra}]}


# --- over real HTTP ---------------------------------------------------------------


async def test_text_streams_over_http(anyio_backend: str) -> None:
    text = "The quick brown fox jumps over the lazy dog."
    async with FakeServer([text]) as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url, api_key="sk-test"))
        headers = server.received[0].headers
    assert text_of(chunks) == text
    assert sum(isinstance(c, TextChunk) for c in chunks) > 5
    assert isinstance(chunks[-2], UsageChunk) and chunks[-2].output_tokens
    assert chunks[-1] == FinishChunk(reason="stop")
    assert headers["authorization"] == "Bearer sk-test"


async def test_parallel_calls_on_index_zero_become_two_calls(anyio_backend: str) -> None:
    calls = (FakeCall(name="add", arguments={"a": 1}), FakeCall(name="mul", arguments={"b": 2}))
    async with FakeServer([Reply(calls=calls, index_zero=True)]) as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url))
    native = NativeCalls()
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    ends = [e for e in events + native.end() if isinstance(e, CallEnd)]
    assert [(e.name, e.arguments) for e in ends] == [("add", {"a": 1}), ("mul", {"b": 2})]
    assert chunks[-1].reason == "tool_calls"  # type: ignore[union-attr]


async def test_server_stop_is_not_returned(anyio_backend: str) -> None:
    request = ModelRequest(messages=HI.messages, stop=("</am:tool_call>",))
    async with FakeServer(['<am:tool_call name="t"><a>1</a></am:tool_call> more']) as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url), request)
        assert server.requests[0]["stop"] == ["</am:tool_call>"]
    assert text_of(chunks) == '<am:tool_call name="t"><a>1</a>'


async def test_stop_strings_past_the_apis_four_are_cut_client_side(anyio_backend: str) -> None:
    """OpenAI takes at most four stop strings (a 400 for more): a user's four and
    ``stop_at_call``'s marker made every request fail. The first four are sent,
    the others cut here as the server would."""
    stops = ("S1", "S2", "S3", "S4", "</am:tool_call>", "S6")
    request = ModelRequest(messages=HI.messages, stop=stops)
    reply = '<am:tool_call name="t"><a>1</a></am:tool_call> and more S6'
    async with FakeServer([reply]) as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url), request)
        assert server.requests[0]["stop"] == ["S1", "S2", "S3", "S4"]
    assert text_of(chunks) == '<am:tool_call name="t"><a>1</a>'
    assert chunks[-1] == FinishChunk(reason="stop", stop_sequence="</am:tool_call>")


async def test_supports_stop_false_cuts_client_side(anyio_backend: str) -> None:
    request = ModelRequest(messages=HI.messages, stop=("</am:tool_call>",))
    reply = '<am:tool_call name="t"><a>1</a></am:tool_call> and then much more text'
    async with FakeServer([reply], reject_stop=True) as server:
        provider = OpenAIChat("m", base_url=server.base_url, supports_stop=False)
        chunks = await collect(provider, request)
        assert "stop" not in server.requests[0]
    assert text_of(chunks) == '<am:tool_call name="t"><a>1</a>'
    assert chunks[-1] == FinishChunk(reason="stop", stop_sequence="</am:tool_call>")


async def test_rejected_stop_is_asked_again_without_it(anyio_backend: str) -> None:
    """A 400 refusing ``stop`` was the caller's to mend (``supports_stop=False``);
    the provider now asks again without it and cuts client-side from then on
    (``providers.refused_fields``, tests/test_providers_s17b_refused_stop.py)."""
    request = ModelRequest(messages=HI.messages, stop=("x",))
    async with FakeServer(["a x b"], reject_stop=True) as server:
        provider = OpenAIChat("m", base_url=server.base_url)
        chunks = await collect(provider, request)
        assert [body.get("stop") for body in server.requests] == [["x"], None]
    assert provider.supports_stop is False
    assert text_of(chunks) == "a "
    assert chunks[-1] == FinishChunk(reason="stop", stop_sequence="x")


async def test_retry_honours_retry_after_then_succeeds(anyio_backend: str) -> None:
    replies: list[Any] = [Reply(status=429, retry_after=0.01), Reply(status=503), "done"]
    async with FakeServer(replies) as server:
        provider = OpenAIChat("m", base_url=server.base_url, retry_base=0.01)
        chunks = await collect(provider)
        assert len(server.requests) == 3
    assert text_of(chunks) == "done"


async def test_retries_are_bounded(anyio_backend: str) -> None:
    async with FakeServer([Reply(status=500)] * 3) as server:
        provider = OpenAIChat("m", base_url=server.base_url, max_retries=1, retry_base=0.01)
        with pytest.raises(ProviderError) as info:
            await collect(provider)
        assert len(server.requests) == 2 and server.remaining == 1
    assert info.value.status == 500 and info.value.retryable
    assert info.value.retry_after is None  # the server asked for nothing


async def test_retry_after_longer_than_the_cap_raises_at_once(anyio_backend: str) -> None:
    async with FakeServer([Reply(status=429, retry_after=3600), "x"]) as server:
        provider = OpenAIChat("m", base_url=server.base_url, retry_max_wait=1.0)
        with pytest.raises(ProviderError) as info:
            await collect(provider)
        assert len(server.requests) == 1
    assert info.value.status == 429 and info.value.retryable
    assert info.value.retry_after == 3600.0  # the caller can wait as asked


async def test_retry_after_as_an_http_date_reaches_the_error(anyio_backend: str) -> None:
    past = "Wed, 21 Oct 2015 07:28:10 GMT"  # a date already gone: retry now
    client = mock(
        '{"error": "busy"}', status=503, ctype="application/json", headers={"retry-after": past}
    )
    with pytest.raises(ProviderError) as info:
        await collect(OpenAIChat("m", client=client, max_retries=0))
    assert info.value.status == 503 and info.value.retry_after == 0.0


async def test_no_retry_after_the_first_byte(anyio_backend: str) -> None:
    async with FakeServer([Reply(text="one two three four five", cut_after=3), "x"]) as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url))
        assert len(server.requests) == 1
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert "connection cut" in (last.message or "")
    assert sum(isinstance(c, FinishChunk) for c in chunks) == 1


async def test_a_server_that_stops_sending_ends_in_an_error_chunk(anyio_backend: str) -> None:
    async with FakeServer([Reply(text="a b c d", stall_after=2, stall=30.0)]) as server:
        provider = OpenAIChat("m", base_url=server.base_url, timeout=httpx.Timeout(5.0, read=0.3))
        chunks = await collect(provider)
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert "read timeout" in (last.message or "")


async def test_in_band_error_event(anyio_backend: str) -> None:
    async with FakeServer([Reply(text="a b c d", error_after=3)]) as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url))
    assert chunks[-1] == FinishChunk(
        reason="error", message="upstream failed mid-answer (code 502)"
    )


async def test_connection_refused_is_mapped_and_retried(anyio_backend: str) -> None:
    async with FakeServer() as server:
        url = server.base_url
    provider = OpenAIChat("m", base_url=url, max_retries=1, retry_base=0.01)
    with pytest.raises(ProviderError) as info:
        await collect(provider)
    assert info.value.status is None and info.value.retryable
    assert "cannot connect" in str(info.value)


async def test_a_connection_dropped_before_any_response_is_resent_once(
    anyio_backend: str,
) -> None:
    """Even with max_retries=0 (the proxy's setting): a kept-alive connection the
    server closed as it was reused must not fail the request. Once, not forever."""
    async with FakeServer() as server:
        server.push(Reply(drop=True), "Hello")
        provider = OpenAIChat("m", base_url=server.base_url, max_retries=0)
        assert text_of(await collect(provider)) == "Hello"
        assert len(server.requests) == 2
        server.push(Reply(drop=True), Reply(drop=True), "never reached")
        with pytest.raises(ProviderError, match="connection cut by the server before"):
            await collect(provider)
        assert len(server.requests) == 4  # the first try and one resend


async def test_stale_connection_resend_with_mock_transport(anyio_backend: str) -> None:
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        if len(sent) == 1:
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        body = sse(delta(content="ok"), finish("stop"), "data: [DONE]\n\n")
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    chunks = await collect(OpenAIChat("m", client=client, max_retries=0))
    assert text_of(chunks) == "ok" and len(sent) == 2
    assert sent[0].content == sent[1].content  # the same request, sent again


async def test_a_finished_response_is_freed_without_the_garbage_collector(
    anyio_backend: str,
) -> None:
    # httpx's streamed response and its body stream refer to each other; left so,
    # each request would wait for a full collection (a pause for every stream a
    # proxy serves). Closed, the response must go as soon as it is dropped.
    import gc
    import weakref

    seen: list[weakref.ref[httpx.Response]] = []

    async def keep(response: httpx.Response) -> None:
        seen.append(weakref.ref(response))

    replies: list[str | Reply] = ["Done.", Reply(status=400, body='{"error": {"message": "bad"}}')]
    async with FakeServer(replies) as server, httpx.AsyncClient(
        event_hooks={"response": [keep]}
    ) as client:
        model = OpenAIChat("m", base_url=server.base_url, client=client, max_retries=0)
        gc.disable()
        try:
            assert text_of(await collect(model)) == "Done."
            with pytest.raises(ProviderError, match="bad"):
                await collect(model)
            assert len(seen) == 2 and [ref() for ref in seen] == [None, None]
        finally:
            gc.enable()


def test_response_format_in_each_api_s_form() -> None:
    from streamtools.errors import UsageError
    from streamtools.providers import AnthropicMessages, OllamaChat

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    named = {"type": "json_schema", "json_schema": {"name": "n", "schema": schema}}
    hi = (ChatMessage(role="user", content="hi"),)

    def body(model: Any, response_format: dict[str, Any]) -> dict[str, Any]:
        request = ModelRequest(messages=hi, response_format=response_format)
        result: dict[str, Any] = model.request_body(request)
        return result

    openai_chat, ollama, claude = OpenAIChat("m"), OllamaChat("m"), AnthropicMessages("c")
    assert body(openai_chat, named)["response_format"] == named
    assert body(ollama, named)["format"] == schema
    assert body(ollama, {"type": "json_object"})["format"] == "json"
    assert body(claude, named)["output_config"] == {
        "format": {"type": "json_schema", "schema": schema}
    }
    with pytest.raises(UsageError, match="not to any JSON object"):
        body(claude, {"type": "json_object"})
    for model in (openai_chat, ollama, claude):  # a shape no API takes: named, not sent
        with pytest.raises(UsageError, match="response_format must be"):
            body(model, {"type": "json_schema", "schema": schema})
    plain = ModelRequest(messages=hi)
    assert "response_format" not in openai_chat.request_body(plain)
    assert "format" not in ollama.request_body(plain)
    assert "output_config" not in claude.request_body(plain)


# --- wire facts with MockTransport ------------------------------------------------


async def test_comments_keepalives_reasoning_usage_and_done(anyio_backend: str) -> None:
    body = sse(
        ": OPENROUTER PROCESSING\n\n",
        "data: \n\n",
        delta(role="assistant", content=""),
        delta(reasoning_content="think "),
        delta(reasoning="more"),
        delta(content="Hi"),
        finish("stop"),
        {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}},
        "data: [DONE]\n\n",
        "data: ignored after done\n\n",
    )
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    origin = getattr(chunks[0], "origin", None)  # the reply's first reasoning says where from
    assert origin is not None and origin.field == "reasoning_content"
    assert chunks == [
        ReasoningChunk(text="think ", origin=origin),
        ReasoningChunk(text="more"),
        TextChunk(text="Hi"),
        UsageChunk(input_tokens=3, output_tokens=4),
        FinishChunk(reason="stop"),
    ]


async def test_mistral_content_parts_are_reasoning_and_text(anyio_backend: str) -> None:
    """Mistral's reasoning models stream ``content`` as a list of parts; it was
    refused as malformed JSON, so the answer ended in an error at once."""
    thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "A greeting."}]}
    body = sse(
        delta(role="assistant", content=[thinking]),
        delta(content=[{"type": "text", "text": "Hello"}]),
        delta(content=" there"),
        finish("stop"),
        "data: [DONE]\n\n",
    )
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    assert chunks == [
        ReasoningChunk(text="A greeting."),
        TextChunk(text="Hello"),
        TextChunk(text=" there"),
        FinishChunk(reason="stop"),
    ]


async def test_openrouter_reasoning_details_are_reasoning(anyio_backend: str) -> None:
    """OpenRouter's structured ``reasoning_details`` (text, summaries) become
    reasoning; where ``reasoning`` carries the same text, it is read once."""
    body = sse(
        delta(reasoning_details=[{"type": "reasoning.text", "text": "Step one. ", "index": 0}]),
        delta(reasoning_details=[{"type": "reasoning.summary", "summary": "In short."}]),
        delta(reasoning_details=[{"type": "reasoning.encrypted", "data": "opaque"}]),
        delta(reasoning=" Both.", reasoning_details=[{"type": "reasoning.text", "text": " Both."}]),
        delta(content="Hi"),
        finish("stop"),
        "data: [DONE]\n\n",
    )
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    reasoning = "".join(c.text for c in chunks if isinstance(c, ReasoningChunk))
    assert reasoning == "Step one. In short. Both."
    assert text_of(chunks) == "Hi" and chunks[-1] == FinishChunk(reason="stop")


async def test_openrouter_reasoning_details_go_back_with_the_calls(anyio_backend: str) -> None:
    """OpenRouter asks for a reply's ``reasoning_details`` back, in order and as
    they were, on the assistant message with its tool calls (Anthropic's signed
    thinking, Gemini's and OpenAI's encrypted reasoning continue only so); they
    were read for their text and dropped. A text block's fragments are joined,
    its signature kept; what came between two calls goes back after the first."""
    frag = {"type": "reasoning.text", "format": "anthropic-claude-v1", "index": 0}
    encrypted = {"type": "reasoning.encrypted", "data": "b3BhcXVl", "id": "rs_1", "index": 1}
    later = {"type": "reasoning.text", "text": "Then add.", "signature": "sig2", "index": 2}
    one = {"name": "add", "arguments": '{"a": 1}'}
    body = sse(
        delta(reasoning="Add ", reasoning_details=[{**frag, "text": "Add "}]),
        delta(reasoning="twice.", reasoning_details=[{**frag, "text": "twice."}]),
        delta(reasoning_details=[{**frag, "text": "", "signature": "sig0"}, encrypted]),
        delta(tool_calls=[{"index": 0, "id": "c1", "type": "function", "function": one}]),
        delta(reasoning_details=[later]),
        delta(tool_calls=[{"index": 1, "id": "c2", "function": {"name": "add"}}]),
        delta(tool_calls=[{"index": 1, "function": {"arguments": "{}"}}]),
        finish("tool_calls"),
        "data: [DONE]\n\n",
    )
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    native = NativeCalls()
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    ends = [e for e in events + native.end("tool_calls") if isinstance(e, CallEnd)]
    block = {**frag, "text": "Add twice.", "signature": "sig0"}
    # the details while a call streams go with it (its ``done`` chunk)
    assert [e.extra for e in ends] == [{"reasoning_details": [block, encrypted, later]}, None]
    assert "".join(c.text for c in chunks if isinstance(c, ReasoningChunk)) == (
        "Add twice.Then add."
    )
    gemini = {"google": {"thought_signature": "c2ln"}}
    calls = (
        NativeCall(id="c1", name="add", arguments={}, extra={DETAILS: [block]}),
        NativeCall(id="c2", name="add", arguments={}, extra={**gemini, DETAILS: [later]}),
    )
    request = ModelRequest(messages=(ChatMessage(role="assistant", content="", tool_calls=calls),))
    sent = OpenAIChat("m").request_body(request)["messages"][0]
    assert sent["reasoning_details"] == [block, later]
    assert [c.get("extra_content") for c in sent["tool_calls"]] == [None, gemini]


async def test_usage_sent_with_every_chunk_is_passed_on_once(anyio_backend: str) -> None:
    """Gemini's OpenAI endpoint sends the answer's usage so far with every chunk:
    a UsageChunk per event made the proxy, which adds them up, count the answer
    once per chunk (here 1 + 2 + 3 output tokens instead of 3)."""

    def counted(n: int, **fields: Any) -> dict[str, Any]:
        usage = {"prompt_tokens": 5, "completion_tokens": n, "total_tokens": 5 + n}
        return {**delta(**fields), "usage": usage}

    body = sse(counted(1, content="a"), counted(2, content="b"), counted(3, content="c"))
    done = body + sse(finish("stop"), "data: [DONE]\n\n")
    chunks = await collect(OpenAIChat("m", client=mock(done)))
    assert chunks[-2:] == [UsageChunk(input_tokens=5, output_tokens=3), FinishChunk(reason="stop")]
    assert text_of(chunks) == "abc" and len(chunks) == 5
    failed = await collect(OpenAIChat("m", client=mock(body + sse({"error": {"message": "x"}}))))
    assert [c for c in failed if isinstance(c, UsageChunk)] == [
        UsageChunk(input_tokens=5, output_tokens=3)
    ]
    assert failed[-1] == FinishChunk(reason="error", message="x")


async def test_groq_s_usage_on_its_last_chunk_is_read(anyio_backend: str) -> None:
    """Groq sends the usage as ``x_groq.usage`` on the finish chunk, not as
    ``usage``: the answer came without any UsageChunk (over HTTP and mocked)."""
    groq = {"id": "req_1", "usage": {"prompt_tokens": 12, "completion_tokens": 4}}
    body = sse(delta(content="Hi"), {**finish("stop"), "x_groq": groq}, "data: [DONE]\n\n")
    reply = Reply(raw=body.encode(), content_type="text/event-stream")
    async with FakeServer([reply]) as server:
        over_http = await collect(OpenAIChat("m", base_url=server.base_url))
    mocked = await collect(OpenAIChat("m", client=mock(body)))
    for chunks in (over_http, mocked):
        assert chunks == [
            TextChunk(text="Hi"),
            UsageChunk(input_tokens=12, output_tokens=4),
            FinishChunk(reason="stop"),
        ]


async def test_vllm_stop_reason_names_the_stop_sequence(anyio_backend: str) -> None:
    body = sse(delta(content="a"), finish("stop", stop_reason="\nObservation:"), "data: [DONE]\n\n")
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    assert chunks[-1] == FinishChunk(reason="stop", stop_sequence="\nObservation:")


async def test_finish_without_done_and_done_without_finish(anyio_backend: str) -> None:
    no_done = await collect(OpenAIChat("m", client=mock(sse(delta(content="a"), finish("length")))))
    assert no_done[-1] == FinishChunk(reason="length")
    no_finish = await collect(
        OpenAIChat("m", client=mock(sse(delta(content="a"), "data: [DONE]\n\n")))
    )
    assert no_finish[-1] == FinishChunk(reason="stop")


async def test_stream_ending_early_is_an_error_chunk(anyio_backend: str) -> None:
    chunks = await collect(OpenAIChat("m", client=mock(sse(delta(content="a")))))
    assert chunks[0] == TextChunk(text="a")
    assert isinstance(chunks[-1], FinishChunk) and chunks[-1].reason == "error"
    assert "ended before" in (chunks[-1].message or "")


async def test_malformed_json_in_an_event(anyio_backend: str) -> None:
    chunks = await collect(OpenAIChat("m", client=mock(sse(delta(content="a"), "data: {oops\n\n"))))
    assert isinstance(chunks[-1], FinishChunk) and chunks[-1].reason == "error"
    assert "malformed JSON" in (chunks[-1].message or "")


async def test_error_event_type(anyio_backend: str) -> None:
    chunks = await collect(OpenAIChat("m", client=mock("event: error\ndata: overloaded\n\n")))
    assert chunks == [FinishChunk(reason="error", message=chunks[-1].message)]  # type: ignore[union-attr]
    assert "overloaded" in (chunks[0].message or "")  # type: ignore[union-attr]


def parted(parts: list[bytes], ctype: str = "text/event-stream") -> httpx.AsyncClient:
    """A client whose answer's body arrives in exactly these ``parts``."""

    async def body() -> Any:
        for part in parts:
            yield part

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": ctype}, content=body())

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


HELLO = sse(delta(content="Hello"), delta(content=" world"), finish("stop"), "data: [DONE]\n\n")


@pytest.mark.parametrize("cut", [0, 1, 2, 3, 4])
async def test_a_byte_order_mark_does_not_lose_the_first_event(
    anyio_backend: str, cut: int
) -> None:
    """The SSE spec drops a leading BOM; httpx-sse read it as part of the first
    field's name ("\ufeffdata"), so the first event ("Hello") was lost."""
    body = b"\xef\xbb\xbf" + HELLO.encode()
    chunks = await collect(OpenAIChat("m", client=parted([body[:cut], body[cut:]])))
    assert text_of(chunks) == "Hello world"
    assert chunks[-1] == FinishChunk(reason="stop")


async def test_a_capitalised_event_stream_content_type_is_read(anyio_backend: str) -> None:
    """Media types are case-insensitive: the answer was accepted, then httpx-sse
    refused it ("Expected response header Content-Type to contain
    'text/event-stream'") and the stream ended in an error."""
    client = mock(HELLO, ctype="Text/Event-Stream; charset=utf-8")
    chunks = await collect(OpenAIChat("m", client=client))
    assert text_of(chunks) == "Hello world"
    assert chunks[-1] == FinishChunk(reason="stop")


LLAMA_ERROR = 'error: {"code":500,"message":"boom","type":"server_error"}\n\n'


@pytest.mark.parametrize("before", ["", sse(delta(content="Hel"))], ids=["first", "mid-answer"])
async def test_llama_cpp_error_line_ends_in_an_error(anyio_backend: str, before: str) -> None:
    """llama.cpp builds before about September 2025 report a failure as an
    ``error:`` line, then ``data: [DONE]``: the answer ended as a normal stop
    (an empty one for a prompt past the context size)."""
    body = (before + LLAMA_ERROR + "data: [DONE]\n\n").encode()
    for cut in range(len(before), len(before) + 7):  # the "error:" split anywhere
        # (an error before the answer is asked again: retried at once here, a second
        # apiece with the default backoff)
        model = OpenAIChat("m", client=parted([body[:cut], body[cut:]]), retry_base=0.001)
        chunks = await collect(model)
        last = chunks[-1]
        assert isinstance(last, FinishChunk) and last.reason == "error", cut
        assert "boom" in (last.message or "")
        assert text_of(chunks) == ("Hel" if before else "")


async def test_error_inside_data_is_text(anyio_backend: str) -> None:
    body = sse(delta(content="error: none"), finish("stop"), "data: [DONE]\n\n")
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    assert chunks == [TextChunk(text="error: none"), FinishChunk(reason="stop")]


_SSE_PIECES = ["data: a\n", "\n", "\r\n", "\r", "error: {}\n", "data: error: x\n", ": c\n", "err"]


@settings(max_examples=300, deadline=None)
@given(
    bom=st.booleans(),
    pieces=st.lists(st.sampled_from(_SSE_PIECES), max_size=12),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=6),
)
def test_sse_mend_does_not_depend_on_the_split(
    bom: bool, pieces: list[str], cuts: list[int]
) -> None:
    body = (b"\xef\xbb\xbf" if bom else b"") + "".join(pieces).encode()
    whole = SSEMend()
    expected = whole.feed(body) + whole.flush()
    mend = SSEMend()
    bounds = [0, *sorted(c for c in cuts if c <= len(body)), len(body)]
    got = b"".join(mend.feed(body[a:b]) for a, b in zip(bounds, bounds[1:], strict=False))
    assert got + mend.flush() == expected
    assert not expected.startswith(b"\xef\xbb\xbf")
    sent = [line for line in _lines_of("".join(pieces).encode()) if line.startswith(b"error:")]
    assert not any(line.startswith(b"error:") for line in _lines_of(expected))
    assert expected.count(b"event: error\ndata: {}") == len(sent)


def _lines_of(body: bytes) -> list[bytes]:
    return body.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")


async def test_n_other_than_one_is_a_usage_error(anyio_backend: str) -> None:
    """A server streams the deltas of every one of ``n`` choices into the one
    stream: the answers came out mixed ("A" + "B") under one finish."""
    with pytest.raises(UsageError, match="n=2"):
        OpenAIChat("m", extra_body={"n": 2})
    seen: list[httpx.Request] = []
    model = OpenAIChat("m", client=mock(HELLO, seen=seen))
    for n in (3, 0, True):
        with pytest.raises(UsageError, match="several answers"):
            await collect(model, ModelRequest(messages=HI.messages, extra={"n": n}))
    assert seen == []  # refused before anything was sent
    assert text_of(await collect(model, ModelRequest(messages=HI.messages, extra={"n": 1}))) == (
        "Hello world"
    )
    assert json.loads(seen[0].content)["n"] == 1


async def test_choices_other_than_the_first_are_not_mixed_in(anyio_backend: str) -> None:
    def choice(index: int, finish_reason: str | None = None, **fields: Any) -> dict[str, Any]:
        return {"index": index, "delta": fields, "finish_reason": finish_reason}

    # each answer begins with its role, as OpenAI's API and vLLM stream several;
    # a choice's first event is read as the answer's (``providers.choices``)
    body = sse(
        {"choices": [choice(0, role="assistant", content="")]},
        {"choices": [choice(1, role="assistant", content="")]},
        {"choices": [choice(0, content="A")]},
        {"choices": [choice(1, content="B")]},
        {"choices": [choice(1, content="C"), choice(0, content="a")]},
        {"choices": [choice(1, "length")]},
        {"choices": [choice(0, "stop")]},
        "data: [DONE]\n\n",
    )
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    assert chunks == [TextChunk(text="A"), TextChunk(text="a"), FinishChunk(reason="stop")]


async def test_arguments_sent_as_an_object_are_reencoded(anyio_backend: str) -> None:
    call = {"index": 0, "id": "c", "function": {"name": "t", "arguments": {"a": 1}}}
    body = sse(delta(tool_calls=[call]), finish("tool_calls"), "data: [DONE]\n\n")
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    assert chunks[0] == CallChunk(index=0, id="c", name="t", arguments='{"a":1}')


def call_delta(
    index: int, call_id: str | None = None, name: str | None = None, args: str = ""
) -> Any:
    call: dict[str, Any] = {"index": index, "function": {"arguments": args}}
    if call_id is not None:
        call["id"] = call_id
    if name is not None:
        call["function"]["name"] = name
    return delta(tool_calls=[call])


@pytest.mark.parametrize("index_zero", [False, True])
async def test_a_call_is_done_when_the_next_starts_and_the_last_at_finish(
    anyio_backend: str, index_zero: bool
) -> None:
    second = 0 if index_zero else 1
    body = sse(
        call_delta(0, "a", "add", ""),
        call_delta(0, None, None, '{"x": 1}'),
        call_delta(second, "b", "mul", "{}"),
        call_delta(second, "b", None, ""),  # the id repeated: the same call
        finish("tool_calls"),
        "data: [DONE]\n\n",
    )
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    assert [c for c in chunks if isinstance(c, CallChunk)] == [
        CallChunk(index=0, id="a"),  # the name goes out with the first arguments
        CallChunk(index=0, name="add", arguments='{"x": 1}'),
        CallChunk(index=0, done=True),
        CallChunk(index=1, id="b", name="mul", arguments="{}"),  # calls are numbered
        CallChunk(index=1, id="b"),
        CallChunk(index=1, done=True),
    ]
    native = NativeCalls(["add", "mul"])
    per_chunk = [native.feed(c) for c in chunks if isinstance(c, CallChunk)]
    assert isinstance(per_chunk[2][-1], CallEnd) and per_chunk[2][-1].id == "a"
    assert isinstance(per_chunk[5][-1], CallEnd) and per_chunk[5][-1].id == "b"
    assert native.end() == []


@pytest.mark.parametrize("reason", ["length", "content_filter"])
async def test_a_call_open_when_tokens_ran_out_is_unterminated(
    anyio_backend: str, reason: str
) -> None:
    """A finish that may cut a call short does not mark it complete: its
    arguments were cut off, which is ``unterminated`` (made again whole), not
    ``invalid_json`` (told its JSON was wrong)."""
    body = sse(
        call_delta(0, "a", "add", '{"x": 1}'),
        call_delta(1, "b", "add", '{"x": '),
        finish(reason),
        "data: [DONE]\n\n",
    )
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    native = NativeCalls(["add"])
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    finish_chunk = chunks[-1]
    assert isinstance(finish_chunk, FinishChunk) and finish_chunk.reason == reason
    events += native.end(finish_chunk.reason)
    ended = [e for e in events if isinstance(e, CallEnd | CallError)]
    assert [(e.id, getattr(e, "reason", "ran")) for e in ended] == [
        ("a", "ran"),  # complete when the next call began
        ("b", "unterminated"),
    ]


async def test_an_id_that_changes_mid_call_without_a_name_continues_the_call(
    anyio_backend: str,
) -> None:
    """Poolside streams a call's name under one id and its arguments under
    another. A new id with no name is no new call: the call is not completed
    with no arguments (it would run with ``{}``) and its arguments kept."""
    body = sse(
        call_delta(0, "a", "wipe", ""),
        call_delta(0, "b", None, '{"path": '),
        call_delta(0, "c", None, '"/tmp"}'),  # a new id on every fragment, even
        call_delta(0, "d", "add", "{}"),  # a name with it: a parallel call on index 0
        finish("tool_calls"),
        "data: [DONE]\n\n",
    )
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    native = NativeCalls(["wipe", "add"])
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    ends = [e for e in events if isinstance(e, CallEnd)]
    assert [(e.id, e.name, e.arguments) for e in ends] == [
        ("a", "wipe", {"path": "/tmp"}),
        ("d", "add", {}),
    ]
    assert not [e for e in events if isinstance(e, CallError)] and native.end() == []


def named_delta(name: str | None, args: str = "", call_id: str | None = None) -> Any:
    """A delta on index 0 whose function carries ``name`` (if any) and ``args``."""
    return call_delta(0, call_id, name, args)


@pytest.mark.parametrize(
    ("deltas", "expect"),
    [
        pytest.param(  # Gemini: a long name in pieces, before the arguments
            [named_delta("get_wea", "", "c1"), named_delta("ther"), named_delta(None, '{"c": 1}')],
            [("get_weather", {"c": 1})],
            id="name-in-pieces",
        ),
        pytest.param(  # MiniMax: the whole name with every delta
            [named_delta("read", '{"p": '), named_delta("read", "1}"), named_delta("read")],
            [("read", {"p": 1})],
            id="name-repeated",
        ),
        pytest.param(  # every call on index 0, no ids: told apart by their names
            [named_delta("add"), named_delta(None, '{"a": 1}'), named_delta("mul", '{"b": 2}')],
            [("add", {"a": 1}), ("mul", {"b": 2})],
            id="index-zero-other-name",
        ),
        pytest.param(  # the same tool twice: its name again once the arguments were whole
            [named_delta("add", '{"a": 1}'), named_delta("add"), named_delta(None, '{"a": 2}')],
            [("add", {"a": 1}), ("add", {"a": 2})],
            id="index-zero-same-name",
        ),
        pytest.param(  # both at once: the name repeated, the same tool twice
            [named_delta("add", '{"a": '), named_delta("add", "1}"), named_delta("add", "{}")],
            [("add", {"a": 1}), ("add", {})],
            id="index-zero-name-repeated",
        ),
    ],
)
async def test_calls_are_told_apart_and_named_whole(
    anyio_backend: str, deltas: list[Any], expect: list[tuple[str, dict[str, Any]]]
) -> None:
    """Servers that put every call on index 0 with no ids had their calls joined
    into one (``{"a": 1}{"b": 2}``: invalid JSON); a name streamed in pieces
    started the call under its first piece (an unknown tool)."""
    body = sse(*deltas, finish("tool_calls"), "data: [DONE]\n\n")
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    native = NativeCalls()
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    events += native.end("tool_calls")
    assert [(e.name, e.arguments) for e in events if isinstance(e, CallEnd)] == expect
    assert not [e for e in events if isinstance(e, CallError)]
    starts = [e.name for e in events if isinstance(e, CallStart)]
    assert starts == [name for name, _ in expect]  # each started once, by its whole name


@pytest.mark.parametrize(
    ("status", "ctype", "body", "expect"),
    [
        (401, "application/json", '{"error":{"message":"Incorrect API key"}}', "Incorrect API key"),
        (404, "text/html", "<html><body><h1>Not Found</h1></body></html>", "(HTML page)"),
        (200, "text/html", "<html>login</html>", "expected text/event-stream"),
        (200, "application/json", '{"error":"model not loaded"}', "model not loaded"),
    ],
)
async def test_bad_responses_raise_provider_error(
    anyio_backend: str, status: int, ctype: str, body: str, expect: str
) -> None:
    seen: list[httpx.Request] = []
    provider = OpenAIChat("m", client=mock(body, status=status, ctype=ctype, seen=seen))
    with pytest.raises(ProviderError) as info:
        await collect(provider)
    assert expect in str(info.value)
    assert info.value.status == status and info.value.body == body
    assert len(seen) == 1  # not retryable


async def test_request_body(anyio_backend: str) -> None:
    seen: list[httpx.Request] = []
    request = ModelRequest(
        messages=(
            ChatMessage(role="system", content="be brief"),
            ChatMessage(role="user", content="add"),
            ChatMessage(
                role="assistant",
                content="",
                tool_calls=(NativeCall(id="c1", name="add", arguments={"a": 1}),),
            ),
            ChatMessage(role="tool", content="2", tool_call_id="c1", name="add"),
        ),
        stop=("STOP",),
        tools=(ToolSpec(name="add", description="Add.", parameters={"type": "object"}),),
        tool_choice=UseTool("add"),
        temperature=0.2,
        max_tokens=50,
        top_p=0.9,
        top_k=40,
        seed=7,
        presence_penalty=0.5,
        frequency_penalty=-0.5,
        extra={"logit_bias": {"50256": -100}},
    )
    provider = OpenAIChat("gpt", client=mock(sse("data: [DONE]\n\n"), seen=seen))
    await collect(provider, request)
    body = json.loads(seen[0].content)
    assert body == {
        "model": "gpt",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "add"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "add", "arguments": '{"a":1}'},
                    }
                ],
            },
            {"role": "tool", "content": "2", "tool_call_id": "c1", "name": "add"},
        ],
        "stop": ["STOP"],
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
        "tool_choice": {"type": "function", "function": {"name": "add"}},
        "temperature": 0.2,
        "max_tokens": 50,
        "top_p": 0.9,
        "top_k": 40,
        "seed": 7,
        "presence_penalty": 0.5,
        "frequency_penalty": -0.5,
        "logit_bias": {"50256": -100},
    }
    assert seen[0].headers["content-type"] == "application/json"


def test_tool_choice_keywords_and_options() -> None:
    provider = OpenAIChat(
        "o3", supports_stop=False, stream_usage=False, max_tokens_field="max_completion_tokens"
    )
    request = ModelRequest(
        messages=HI.messages,
        stop=("x",),
        tools=(ToolSpec(name="t", description="", parameters={}),),
        tool_choice="required",
        max_tokens=5,
    )
    body = provider.request_body(request)
    assert body["tool_choice"] == "required"
    assert "stop" not in body and "stream_options" not in body
    assert body["max_completion_tokens"] == 5


# --- sans-IO pieces of the base -----------------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["localhost:11434/v1", "http://", "ftp://host/v1", "http://[::1/v1", "http://h:99999/v1"],
)
@pytest.mark.parametrize("kind", sorted(PROVIDERS))
def test_a_base_url_no_request_can_go_to_is_a_usage_error(kind: str, url: str) -> None:
    """Found when the provider is made, not at the first request as a retried
    transport error, a raw httpx.InvalidURL or (port 99999) an OverflowError."""
    with pytest.raises(UsageError, match="invalid base_url"):
        PROVIDERS[kind]("m", base_url=url)
    model = PROVIDERS[kind]("m", base_url=" http://127.0.0.1:8000/v1/\n")  # blanks dropped
    assert model.base_url == "http://127.0.0.1:8000/v1"


@pytest.mark.parametrize(
    "options",
    [{"api_key": "sk-ab…"}, {"api_key": "sk-a\nb"}, {"headers": {"x-team": "é"}}],
)
def test_a_header_no_request_can_carry_is_a_usage_error(options: dict[str, Any]) -> None:
    """A key pasted with a "…" was a raw UnicodeEncodeError at the first request;
    one with a line break a retried transport error quoting the whole key."""
    with pytest.raises(UsageError, match="HTTP header") as caught:
        OpenAIChat("m", **options)
    assert "sk-a" not in str(caught.value)  # the secret is not repeated


def test_a_request_httpx_refuses_to_send_is_not_retried() -> None:
    for exc in (httpx.LocalProtocolError("Illegal header name"), httpx.UnsupportedProtocol("x")):
        assert transport_error(exc).retryable is False
    assert transport_error(httpx.ConnectError("refused")).retryable is True


@pytest.mark.parametrize(
    ("wire", "name"),
    [("openai", "Authorization"), ("anthropic", "X-Api-Key"), ("ollama", "Authorization")],
)
async def test_a_header_in_another_case_replaces_the_provider_s(
    anyio_backend: str, wire: str, name: str
) -> None:
    """Header names are case-insensitive: ``headers={"Authorization": …}`` with
    an ``api_key`` sent two authorization headers, the server free to read either."""
    seen: list[httpx.Request] = []
    headers = {name: "mine", "Content-Type": "application/json; charset=utf-8"}
    ctype = "application/x-ndjson" if wire == "ollama" else "text/event-stream"
    client = mock(b"", ctype=ctype, seen=seen)
    await collect(PROVIDERS[wire]("m", api_key="key", headers=headers, client=client))
    sent = seen[0].headers
    assert sent.get_list(name) == ["mine"]
    assert sent.get_list("content-type") == ["application/json; charset=utf-8"]


async def test_a_side_request_asks_for_json_whatever_the_headers(anyio_backend: str) -> None:
    seen: list[httpx.Request] = []
    client = mock('{"count": 7}', ctype="application/json", seen=seen)
    model = OpenAIChat("m", headers={"Accept": "text/event-stream"}, client=client)
    assert await model.count_tokens(HI) == 7
    assert seen[0].headers.get_list("accept") == ["application/json"]


async def test_an_api_key_read_with_its_newline_works(anyio_backend: str) -> None:
    seen: list[httpx.Request] = []
    body = sse(delta(content="hi"), finish("stop"), "data: [DONE]\n\n")
    model = OpenAIChat("m", api_key="sk-key\n", client=mock(body, seen=seen))
    assert text_of(await collect(model)) == "hi"
    assert seen[0].headers["authorization"] == "Bearer sk-key"


KEEP_ALIVES = {
    "openai": (b'data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n', b": ping\n\n"),
    "anthropic": (
        b'event: message_start\ndata: {"type":"message_start","message":{"usage":{}}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"text","text":""}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"text_delta","text":"Hel"}}\n\n',
        b'event: ping\ndata: {"type": "ping"}\n\n',
    ),
}


@asynccontextmanager
async def keep_alive_server(first: bytes, keep_alive: bytes) -> AsyncIterator[str]:
    """A real HTTP server on 127.0.0.1 that answers ``first``, then ``keep_alive``
    every 50 ms until the client goes; yields its base URL."""

    async def serve(conn: anyio.abc.SocketStream) -> None:
        async with conn:
            seen = b""
            while b"\r\n\r\n" not in seen:
                seen += await conn.receive()
            head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            head += b"connection: close\r\n\r\n"
            try:
                await conn.send(head + first)
                while True:
                    await anyio.sleep(0.05)
                    await conn.send(keep_alive)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, serve)
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        yield f"http://127.0.0.1:{port}/v1"
        tg.cancel_scope.cancel()


@pytest.mark.parametrize("wire", ["openai", "anthropic", "ollama"])
async def test_a_record_that_never_ends_is_cut_at_the_limit(
    anyio_backend: str, wire: Wire, monkeypatch: pytest.MonkeyPatch
) -> None:
    """httpx-sse (and the NDJSON reader) keep an unfinished line whole: a server
    that never ended one took memory without bound. Past the limit the stream
    ends in an error; ordinary events, however many, are no record of their own."""
    monkeypatch.setattr(base, "_RECORD_LIMIT", 64 * 1024)
    text = "word " * 20_000  # 100 kB of text in ordinary events: no cut
    async with FakeServer([text], wire=wire) as server:
        chunks = await collect(provider_for(server))
    assert text_of(chunks) == text and isinstance(chunks[-1], FinishChunk)
    assert chunks[-1].reason == "stop"
    start = {"openai": b"data: ", "anthropic": b"event: ping\ndata: ", "ollama": b"{"}[wire]
    endless = Reply(raw=start + b"x" * (200 * 1024), content_type=CONTENT_TYPES[wire])
    async with FakeServer([endless], wire=wire) as server:
        chunks = await collect(provider_for(server))
    record = "a line" if wire == "ollama" else "an event"
    assert len(chunks) == 1 and isinstance(chunks[0], FinishChunk)
    assert chunks[0].reason == "error"
    assert f"sent {record} longer than 65536 bytes" in (chunks[0].message or "")


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_keep_alives_alone_end_in_an_error_after_stall_timeout(
    anyio_backend: str, wire: str
) -> None:
    """httpx's read timeout is per read: a server that sent only keep-alives
    after the first text held the stream open for ever."""
    async with keep_alive_server(*KEEP_ALIVES[wire]) as url:
        model = PROVIDERS[wire]("m", base_url=url, timeout=0.5, stall_timeout=1.0)
        with anyio.fail_after(10):  # stops a hang only: how long the cut took is not timed
            chunks = await collect(model)
    assert text_of(chunks) == "Hel"
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert "stall_timeout" in (last.message or "") and "no content for over" in (last.message or "")


async def test_the_stall_cut_comes_at_the_first_keep_alive_past_stall_timeout(
    anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted, not timed: the provider reads a clock that the answer moves on
    0.3 s per keep-alive. With ``stall_timeout=1.0`` the keep-alives at 0.3, 0.6
    and 0.9 s pass, and the fourth (1.2 s) is the last one read: the cut."""
    now = [0.0]
    read: list[float] = []  # the clock as the provider read it

    def monotonic() -> float:
        read.append(now[0])
        return now[0]

    monkeypatch.setattr(base, "time", SimpleNamespace(monotonic=monotonic))

    async def body() -> AsyncIterator[bytes]:
        yield b'data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n'
        for _ in range(10):  # (the rest is drained after the cut: no real socket closes)
            now[0] += 0.3
            yield b": ping\n\n"

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    chunks = await collect(OpenAIChat("m", client=client, stall_timeout=1.0))
    assert text_of(chunks) == "Hel"
    assert isinstance(chunks[-1], FinishChunk) and "stall_timeout" in (chunks[-1].message or "")
    assert sorted({round(t, 1) for t in read if t}) == [0.3, 0.6, 0.9, 1.2]


async def test_a_slow_consumer_is_no_stall(anyio_backend: str) -> None:
    """The bound counts the wait for content, not the consumer's time between
    chunks: content already sent is not refused for having waited."""
    body = sse(delta(content="a"), ": ping\n\n", delta(content="b"), finish("stop"))
    parts = [part.encode() + b"\n\n" for part in body.split("\n\n") if part]
    model = OpenAIChat("m", client=parted(parts), stall_timeout=0.2)
    got: list[Chunk] = []
    async with model.stream(HI) as chunks:
        async for chunk in chunks:
            got.append(chunk)
            await anyio.sleep(0.4)
    assert got == [TextChunk(text="a"), TextChunk(text="b"), FinishChunk(reason="stop")]


def test_stall_timeout_default_and_bad_values() -> None:
    """Long by default (a reasoning model may think for minutes before its first
    token behind a gateway's keep-alives), never shorter than the read timeout."""
    assert OpenAIChat("m").stall_timeout == 600.0
    assert OpenAIChat("m", timeout=900).stall_timeout == 900.0
    assert OpenAIChat("m", timeout=httpx.Timeout(10, read=None)).stall_timeout == math.inf
    assert OpenAIChat("m", timeout=900, stall_timeout=5).stall_timeout == 5.0
    for bad in (0.0, -1.0, math.nan):
        with pytest.raises(UsageError, match="stall_timeout"):
            OpenAIChat("m", stall_timeout=bad)


def test_retry_after_parsing() -> None:
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert (
        retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0)
        == 10.0
    )
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


@pytest.mark.parametrize("value", ["inf", "Infinity", "1e400", "nan", "-inf"])
def test_retry_after_that_is_no_finite_number_is_none(value: str) -> None:
    """``float`` reads these; as a wait they are nonsense (an infinite one even
    crashed the proxy passing it on as whole seconds), so they are ignored."""
    assert retry_after_seconds({"retry-after": value}) is None
    assert retry_after_seconds({"retry-after-ms": value}) is None
    assert retry_after_seconds({"retry-after-ms": value, "retry-after": "3"}) == 3.0


def _cut(stops: tuple[str, ...], text: str, cuts: list[int]) -> tuple[str, str | None]:
    cutter = StopCutter(stops)
    out, pos, k = [], 0, 0
    while pos < len(text) and cutter.hit is None:
        size = cuts[k % len(cuts)]
        out.append(cutter.feed(text[pos : pos + size]))
        pos, k = pos + size, k + 1
    if cutter.hit is None:
        out.append(cutter.flush())
    return "".join(out), cutter.hit


@settings(max_examples=200, deadline=None)
@example(text="aXX", cuts=[1], stops=["XX", "X"])  # whole, XX started first; X ends first
@example(text="ok</x>XX", cuts=[9], stops=["</x>XX", "x>"])
@given(
    text=st.text(alphabet="ab</>:xX", max_size=40),
    cuts=st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=20),
    stops=st.lists(
        st.sampled_from(["</x>", "XX", "x>", "X", "/x", "</x>XX", "ab"]), min_size=1, max_size=3
    ),
)
def test_stop_cutter_is_chunking_invariant(text: str, cuts: list[int], stops: list[str]) -> None:
    """Any chunking cuts where text arriving a character at a time is cut: at the
    stop string that ends first (then the one that starts first), even when one
    stop string overlaps or contains another."""
    given_stops = tuple(stops)
    assert _cut(given_stops, text, cuts) == _cut(given_stops, text, [1])
    # the first to end, by a search of every position
    ends = [
        (i + len(stop), i, stop)
        for i in range(len(text))
        for stop in given_stops
        if text.startswith(stop, i)
    ]
    expected = (text[: min(ends)[1]], min(ends)[2]) if ends else (text, None)
    assert _cut(given_stops, text, [len(text) or 1]) == expected


def test_stop_cutter_holds_back_at_most_a_marker_prefix() -> None:
    cutter = StopCutter(("</am:tool_call>",))
    assert cutter.feed("hello </am") == "hello "
    assert cutter.feed(":x") == "</am:x"
    assert cutter.flush() == ""


# --- leaving early -----------------------------------------------------------------


async def test_leaving_the_block_early_closes_cleanly(anyio_backend: str) -> None:
    """Breaking out after one chunk leaves no half-read generator behind (trio would warn)."""
    async with FakeServer([" ".join(["word"] * 500), "next"]) as server:
        provider = OpenAIChat("m", base_url=server.base_url)
        async with provider.stream(HI) as chunks:
            async for chunk in chunks:
                assert chunk == TextChunk(text="word")
                break
        assert text_of(await collect(provider)) == "next"  # the provider is reusable


async def test_cancelling_a_stalled_stream_returns_promptly(anyio_backend: str) -> None:
    async with FakeServer([Reply(text="a b c", stall_after=3, stall=60.0)]) as server:
        provider = OpenAIChat("m", base_url=server.base_url)
        seen: list[Chunk] = []
        with anyio.move_on_after(0.5) as scope:
            async with provider.stream(HI) as chunks:
                async for chunk in chunks:
                    seen.append(chunk)
        assert scope.cancelled_caught
    assert seen == [TextChunk(text="a")]


async def test_injected_client_is_not_closed(anyio_backend: str) -> None:
    async with FakeServer(["one", "two"]) as server, httpx.AsyncClient() as client:
        provider = OpenAIChat("m", base_url=server.base_url, client=client)
        assert text_of(await collect(provider)) == "one"
        assert text_of(await collect(provider)) == "two"
        assert not client.is_closed


def prompt_mode_messages() -> tuple[ChatMessage, ...]:
    """json_object results as ``project`` writes them: tool messages after a text call."""
    transcript = Transcript()
    transcript.user("add 1 and 2")
    call = ToolCall(id="call_0_0", name="add", arguments={"a": 1, "b": 2})
    transcript.assistant("", calls=(call,))
    transcript.result(call, "3")
    return tuple(project(transcript, "json_object", []))


async def test_prompt_mode_tool_messages_go_as_user_text(anyio_backend: str) -> None:
    seen: list[httpx.Request] = []
    messages = prompt_mode_messages()
    assert [m.role for m in messages][-2:] == ["tool", "user"]  # what project sends
    stray = ChatMessage(role="tool", content="late", tool_call_id="c9")  # answers no call
    request = ModelRequest(messages=(*messages, stray))
    await collect(OpenAIChat("gpt", client=mock(sse("data: [DONE]\n\n"), seen=seen)), request)
    sent = json.loads(seen[0].content)["messages"]
    # one user message: chat templates that need alternating roles reject two in a row
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[3] == {
        "role": "user",
        "content": 'Tool result (add):\n{"tool": "add", "result": "3"}'
        f"\n\n{messages[-1].content}\n\nTool result:\nlate",
    }
    assert not any("tool_call_id" in m for m in sent)


# --- count_tokens: a local server's tokenizer ---------------------------------------


async def test_count_tokens_from_vllm_over_http(anyio_backend: str) -> None:
    async with FakeServer([], tokenizer="vllm") as server:
        model = OpenAIChat("qwen", base_url=server.base_url, api_key="sk-local")
        tokens = await model.count_tokens(COUNTED)
        (received,) = server.received
    # at the server's root, not under /v1; the messages and tools the chat request sends
    assert received.path == "/tokenize" and received.headers["authorization"] == "Bearer sk-local"
    sent = OpenAIChat("qwen").request_body(COUNTED)
    assert received.body == {
        "model": "qwen",
        "messages": sent["messages"],
        "tools": sent["tools"],
        "add_generation_prompt": True,
    }
    assert tokens == len(token_pieces(chat_template(sent["messages"]))) > 0


async def test_count_tokens_from_llama_server_over_http(anyio_backend: str) -> None:
    async with FakeServer([], tokenizer="llama.cpp") as server:
        tokens = await OpenAIChat("m", base_url=server.base_url).count_tokens(COUNTED)
        received = list(server.received)
    assert [r.path for r in received] == ["/tokenize", "/apply-template", "/tokenize"]
    sent = OpenAIChat("m").request_body(COUNTED)
    assert received[1].body == {"messages": sent["messages"], "tools": sent["tools"]}
    assert received[2].body == {"content": chat_template(sent["messages"])}
    assert tokens == len(token_pieces(received[2].body["content"])) > 0


async def test_count_tokens_without_a_tokenizer(anyio_backend: str) -> None:
    async with FakeServer([]) as server:  # OpenAI's answer: 404
        with pytest.raises(TokenCountUnavailable) as info:
            await OpenAIChat("m", base_url=server.base_url).count_tokens(HI)
        assert [r.path for r in server.received] == ["/tokenize"]
    assert isinstance(info.value, ProviderError) and info.value.status == 404
    for status in (405, 501):
        client = mock('{"error": "no"}', status=status)
        with pytest.raises(TokenCountUnavailable):
            await OpenAIChat("m", client=client, max_retries=0).count_tokens(HI)


async def test_count_tokens_malformed_answers(anyio_backend: str) -> None:
    seen: list[httpx.Request] = []
    # a 200 that is not a tokenizer's answer (LM Studio answers unknown routes so)
    client = mock('{"error": "Unexpected endpoint"}', ctype="application/json", seen=seen)
    with pytest.raises(TokenCountUnavailable, match="neither count nor tokens"):
        await OpenAIChat("m", base_url="http://h:8000/v1/", client=client).count_tokens(HI)
    assert str(seen[0].url) == "http://h:8000/tokenize"
    client = mock('{"count": "12", "tokens": 3}', ctype="application/json")
    with pytest.raises(TokenCountUnavailable):
        await OpenAIChat("m", client=client).count_tokens(HI)
    # llama-server's first answer, then an /apply-template without a prompt
    answers = [{"tokens": []}, {"text": "?"}]
    replies = iter(httpx.Response(200, json=a) for a in answers)
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda request: next(replies)))
    with pytest.raises(ProviderError, match="apply-template answered without 'prompt'") as info:
        await OpenAIChat("m", client=client).count_tokens(HI)
    assert not isinstance(info.value, TokenCountUnavailable)  # it has one, and it failed
    # other failures are raised as they are (a client estimates then, without forgetting)
    client = mock('{"object": "error", "message": "bad template"}', status=400)
    with pytest.raises(ProviderError, match="bad template") as info:
        await OpenAIChat("m", client=client).count_tokens(HI)
    assert info.value.status == 400 and not isinstance(info.value, TokenCountUnavailable)


async def test_text_held_for_a_client_side_stop_survives_a_cut_stream(anyio_backend: str) -> None:
    """``supports_stop=False`` holds ``S`` back (it may start ``STOP``); the stream
    then breaks: the held text still comes out, before the error finish."""
    body = sse(delta(content="The answer is S"))  # no finish, no [DONE]: a cut
    request = ModelRequest(messages=HI.messages, stop=("STOP",))
    chunks = await collect(OpenAIChat("m", client=mock(body), supports_stop=False), request)
    assert text_of(chunks) == "The answer is S"
    assert isinstance(chunks[-1], FinishChunk) and chunks[-1].reason == "error"
