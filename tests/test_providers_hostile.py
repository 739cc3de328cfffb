"""Providers against unusual and hostile servers, over real HTTP (FakeServer ``raw``)."""

from __future__ import annotations

import gc
import json
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest
from provider_support import HI, collect, provider_for, text_of

from streamtools.errors import ProviderError
from streamtools.events import CallEnd, CallError
from streamtools.model import CallChunk, Chunk, FinishChunk, TextChunk, UsageChunk
from streamtools.native import NativeCalls
from streamtools.providers import AnthropicMessages, OllamaChat, OpenAIChat, base
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio


def sse(*events: Any) -> bytes:
    """An SSE body of ``events`` (JSON objects, or data text as given)."""
    lines = (e if isinstance(e, str) else json.dumps(e) for e in events)
    return "".join(f"data: {line}\n\n" for line in lines).encode()


def delta(**fields: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": fields, "finish_reason": None}]}


def finish(reason: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}


def ended(chunks: list[Chunk]) -> list[tuple[str, dict[str, Any]]]:
    """The calls ``NativeCalls`` completes from ``chunks``: (name, arguments)."""
    native = NativeCalls()
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    return [(e.name, e.arguments) for e in events + native.end() if isinstance(e, CallEnd)]


async def test_an_openai_refusal_is_the_answer_s_text(anyio_backend: str) -> None:
    """OpenAI streams a refusal as ``delta.refusal`` in place of ``content``: it
    was dropped, and the answer came back empty with a plain ``stop``."""
    raw = sse(
        delta(role="assistant", content=None, refusal=""),
        delta(refusal="I'm sorry, "),
        delta(refusal="I can't help with that."),
        finish("stop"),
        "[DONE]",
    )
    whole = {
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "refusal": "No."},
                "finish_reason": "stop",
            }
        ],
    }
    as_json = Reply(raw=json.dumps(whole).encode(), content_type="application/json")
    replies = [Reply(raw=raw), as_json]
    async with FakeServer(replies) as server:
        streamed = await collect(OpenAIChat("m", base_url=server.base_url))
        answered = await collect(OpenAIChat("m", base_url=server.base_url))
    assert text_of(streamed) == "I'm sorry, I can't help with that."
    assert streamed[-1] == FinishChunk(reason="stop")
    assert [c for c in answered if isinstance(c, TextChunk)] == [TextChunk(text="No.")]


async def test_a_legacy_function_call_is_a_call(anyio_backend: str) -> None:
    """The deprecated ``function_call`` delta (and message field): its finish
    reason was read as ``tool_calls``, but the call itself was dropped."""
    raw = sse(
        delta(role="assistant", content=None, function_call={"name": "add", "arguments": ""}),
        delta(function_call={"arguments": '{"a": '}),
        delta(function_call={"arguments": "2}"}),
        finish("function_call"),
        "[DONE]",
    )
    call = {"name": "mul", "arguments": '{"b": 3}'}
    message = {"role": "assistant", "content": None, "function_call": call}
    whole = {"choices": [{"index": 0, "message": message, "finish_reason": "function_call"}]}
    as_json = Reply(raw=json.dumps(whole).encode(), content_type="application/json")
    async with FakeServer([Reply(raw=raw), as_json]) as server:
        streamed = await collect(OpenAIChat("m", base_url=server.base_url))
        answered = await collect(OpenAIChat("m", base_url=server.base_url))
    assert ended(streamed) == [("add", {"a": 2})]
    assert ended(answered) == [("mul", {"b": 3})]
    assert streamed[-1] == answered[-1] == FinishChunk(reason="tool_calls")


OLLAMA_WHOLE = {
    "model": "m",
    "message": {
        "role": "assistant",
        "content": "Let me add.",
        "thinking": "Sum it.",
        "tool_calls": [{"function": {"name": "add", "arguments": {"a": 1, "b": [2, 3]}}}],
    },
    "done": True,
    "done_reason": "stop",
    "prompt_eval_count": 7,
    "eval_count": 9,
}


async def test_an_ollama_answer_pretty_printed_over_lines_is_read(anyio_backend: str) -> None:
    """A gateway that ignores ``stream: true`` and pretty-prints Ollama's whole
    answer (one object over many lines) ended in "malformed JSON" at ``{``."""
    compact = Reply(raw=json.dumps(OLLAMA_WHOLE).encode() + b"\n")
    pretty = json.dumps(OLLAMA_WHOLE, indent=2).encode()
    assert pretty.count(b"\n") > 10
    replies = [compact, Reply(raw=pretty, content_type="application/json; charset=utf-8")]
    async with FakeServer(replies, wire="ollama") as server:
        expected = await collect(OllamaChat("m", base_url=server.base_url))
        chunks = await collect(OllamaChat("m", base_url=server.base_url))
    assert chunks == expected
    assert ended(chunks) == [("add", {"a": 1, "b": [2, 3]})]
    assert text_of(chunks) == "Let me add." and chunks[-1] == FinishChunk(reason="tool_calls")


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"{not json\n", "malformed JSON"),  # no start of a value: as before
        (json.dumps(OLLAMA_WHOLE, indent=1).encode()[:-30], "ended before the answer"),
        (b"[\n" * 40_000, "sent a JSON value longer than 65536 bytes"),
        # broken after its start: malformed there, not waiting for the end of the stream
        (b'{\n "done": tru e\n}\n' + b'{"done": true}\n' * 3, "value over lines is malformed"),
    ],
    ids=["malformed", "cut", "endless", "broken-later"],
)
async def test_an_ollama_value_over_lines_that_never_ends_is_an_error(
    anyio_backend: str, body: bytes, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(base, "_RECORD_LIMIT", 64 * 1024)
    async with FakeServer([Reply(raw=body)], wire="ollama") as server:
        chunks = await collect(OllamaChat("m", base_url=server.base_url))
    assert len(chunks) == 1 and isinstance(chunks[0], FinishChunk)
    assert chunks[0].reason == "error" and says in (chunks[0].message or "")


def anthropic_events(*events: dict[str, Any]) -> bytes:
    """An Anthropic SSE body: each event under its ``type`` as the SSE name."""
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def anthropic_answer(start: dict[str, int], *deltas: dict[str, int]) -> Reply:
    """A short text answer: ``start`` usage in ``message_start``, one
    ``message_delta`` per item of ``deltas`` (its usage)."""
    text = {"type": "text_delta", "text": "Hi"}
    return Reply(
        raw=anthropic_events(
            {"type": "message_start", "message": {"type": "message", "usage": start}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
            {"type": "content_block_delta", "index": 0, "delta": text},
            {"type": "content_block_stop", "index": 0},
            *(
                {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": usage}
                for usage in deltas
            ),
            {"type": "message_stop"},
        )
    )


async def test_anthropic_usage_is_the_latest_cumulative_count_once(anyio_backend: str) -> None:
    """``message_delta`` usage is cumulative: the input counted there (a
    compatible server's real count after ``input_tokens: 0`` at the start, or
    the count grown by server tools) was dropped, and a second
    ``message_delta`` gave a second ``UsageChunk``, which the proxy added up."""
    replies = [
        anthropic_answer({"input_tokens": 0}, {"input_tokens": 20, "output_tokens": 5}),
        anthropic_answer(
            {"input_tokens": 10, "cache_read_input_tokens": 4, "output_tokens": 1},
            {"output_tokens": 3},
            {"input_tokens": 15, "cache_read_input_tokens": 4, "output_tokens": 8},
        ),
        anthropic_answer({"input_tokens": 7, "output_tokens": 1}, {"output_tokens": 2}),
    ]
    async with FakeServer(replies, wire="anthropic") as server:
        answers = [await collect(AnthropicMessages("c", base_url=server.base_url)) for _ in replies]
    usages = [[c for c in chunks if isinstance(c, UsageChunk)] for chunks in answers]
    assert usages == [
        [UsageChunk(input_tokens=20, output_tokens=5)],
        [UsageChunk(input_tokens=19, output_tokens=8, cache_read_tokens=4)],
        [UsageChunk(input_tokens=7, output_tokens=2)],  # the API's usual form: as before
    ]
    for chunks, usage in zip(answers, usages, strict=True):
        assert chunks[-2:] == [*usage, FinishChunk(reason="stop")]


@pytest.mark.parametrize(
    ("location", "says"),
    [
        ("https://example.com/v1/chat/completions", "HTTP 308, a redirect to https://example.com/v1"),
        ("/api/v1/chat/completions", "HTTP 308, a redirect to {url}/api/v1/chat/completions"),
        # no URL: httpx raises reading it, as for a cut connection, which was resent and retried
        ("http://[::1", "the server answered with a redirect ({url}/v1/chat/completions)"),
    ],
)
async def test_a_redirect_names_where_it_points(
    anyio_backend: str, location: str, says: str
) -> None:
    """A redirect is not followed (a POST with the key sent on elsewhere); the
    error said only "answered HTTP 308", not the address to use instead."""
    redirect = Reply(status=308, raw=b"", headers={"location": location})
    async with FakeServer([redirect, redirect, redirect]) as server:
        with pytest.raises(ProviderError) as info:
            await collect(OpenAIChat("m", base_url=server.base_url))
        asked, url = len(server.received), server.url
    assert not info.value.retryable and asked == 1
    assert says.format(url=url) in str(info.value)


GEMINI_ERROR = {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}
FASTAPI_SAYS = "field required at body.messages.0.role; str type expected at body.model"
FASTAPI_422 = {
    "detail": [
        {"loc": ["body", "messages", 0, "role"], "msg": "field required", "type": "missing"},
        {"loc": ["body", "model"], "msg": "str type expected", "type": "type_error.str"},
    ]
}


@pytest.mark.parametrize(
    ("status", "body", "says"),
    [
        (400, [{"error": GEMINI_ERROR}], "API key not valid."),
        (422, FASTAPI_422, FASTAPI_SAYS),
    ],
    ids=["gemini", "fastapi"],
)
async def test_an_error_body_s_words_in_other_shapes(
    anyio_backend: str, status: int, body: Any, says: str
) -> None:
    """Gemini's OpenAI endpoint sends its error object in a list, and a FastAPI
    server (a homemade OpenAI-compatible one) its 422 as a list of problems: the
    message quoted the JSON, not the API's words."""
    async with FakeServer([Reply(status=status, body=json.dumps(body))]) as server:
        with pytest.raises(ProviderError) as info:
            await collect(OpenAIChat("m", base_url=server.base_url, max_retries=0))
    assert str(info.value) == f"OpenAI-compatible server answered HTTP {status}: {says}"
    assert json.loads(info.value.body or "") == body  # the whole body still there


ANSWERED = anthropic_answer({"input_tokens": 1}).raw or b""
BEGUN = {  # an answer begun, then a clean end without the wire's end marker
    "openai": sse(delta(content="Hi")),
    "anthropic": ANSWERED.split(b"event: message_stop")[0],
    "ollama": b'{"message": {"role": "assistant", "content": "Hi"}, "done": false}\n',
}


@pytest.mark.parametrize(
    ("wire", "raw", "says"),
    [
        ("openai", b'{"error": {"message": "model not found"}}', '{"error": {"message": "model'),
        ("openai", b'data: {"code": 429, "msg": "rate limited"}\n\n', 'data: {"code": 429, "msg"'),
        ("ollama", b'{"code": 429, "msg": "rate limited"}\n', '{"code": 429, "msg": "rate'),
        ("anthropic", b"", None),
    ],
    ids=["json-as-sse", "foreign-event", "foreign-line", "empty"],
)
async def test_a_stream_with_no_part_of_an_answer_says_what_came(
    anyio_backend: str, wire: Any, raw: bytes, says: str | None
) -> None:
    """A 200 stream whose body held no event of the wire (a JSON error sent as
    ``text/event-stream``, an event or line without the wire's fields) ended in
    "stream ended before the answer was complete", without a word of what the
    server said; one that was cut after an answer began still ends so, alone."""
    replies = [Reply(raw=raw), Reply(raw=BEGUN[wire])]
    async with FakeServer(replies, wire=wire) as server:
        unanswered = await collect(provider_for(server))
        cut = await collect(provider_for(server))
    ended = "stream ended before the answer was complete"
    assert len(unanswered) == 1 and isinstance(unanswered[0], FinishChunk)
    assert unanswered[0].reason == "error"
    what = f"; the body began: {says}" if says else ": the body was empty"
    assert f"{ended}, with no part of it{what}" in (unanswered[0].message or "")
    assert text_of(cut) == "Hi"
    assert isinstance(cut[-1], FinishChunk) and (cut[-1].message or "").endswith(ended)


@pytest.mark.parametrize("reason", ["abort", "error"])
async def test_an_aborted_answer_is_an_error_and_its_open_call_does_not_run(
    anyio_backend: str, reason: str
) -> None:
    """vLLM ends a request its engine dropped (shut down, paused, preempted) with
    ``finish_reason: "abort"``, then ``[DONE]`` as if the answer were whole: it
    came out as a finish of its own, and the call still open was completed and
    ran on the arguments that had come."""
    call = {"index": 0, "id": "c1", "type": "function", "function": {"name": "add"}}
    raw = sse(
        delta(content="Adding."),
        delta(tool_calls=[{**call, "function": {"name": "add", "arguments": '{"a": 1}'}}]),
        finish(reason),
        "[DONE]",
    )
    async with FakeServer([Reply(raw=raw)]) as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url))
    last = chunks[-1]
    assert text_of(chunks) == "Adding."
    assert isinstance(last, FinishChunk) and last.reason == "error"
    said = f"OpenAI-compatible server ended the answer with finish_reason {reason!r}"
    assert last.message == said
    native = NativeCalls()
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    errors = [e for e in events + native.end(last.reason) if isinstance(e, CallError)]
    assert [e.reason for e in errors] == ["unterminated"]
    assert not any(isinstance(e, CallEnd) for e in events)


async def test_an_event_stream_labelled_json_is_read_as_it_arrives(anyio_backend: str) -> None:
    """A gateway that streams but labels the stream ``application/json`` (seen
    in front of Azure and Bedrock): the whole body was read to its end, then
    refused as JSON that is no answer. Here the server stalls mid-answer: the
    first text is out while it is stalled."""
    raw = b"\xef\xbb\xbf\n" + sse(
        delta(content="Hello"), delta(content=" world"), finish("stop"), "[DONE]"
    )
    stalling = Reply(raw=raw, content_type="application/json", stall_before="world", stall=5.0)
    whole = {"choices": [{"index": 0, "message": {"content": "Whole."}, "finish_reason": "stop"}]}
    as_json = Reply(raw=json.dumps(whole).encode(), content_type="application/json")
    async with FakeServer([stalling, as_json]) as server:
        provider = OpenAIChat("m", base_url=server.base_url)
        async with provider.stream(HI) as chunks:
            first = await chunks.__anext__()  # the rest is not sent yet: the server stalls
            stalled = await anyio.to_thread.run_sync(server.wait_stalled, 5.0)
            server.resume()
            rest = [chunk async for chunk in chunks]
        answered = await collect(provider)  # a whole JSON answer is still one
    assert first == TextChunk(text="Hello") and stalled
    assert rest == [TextChunk(text=" world"), FinishChunk(reason="stop")]
    assert answered == [TextChunk(text="Whole."), FinishChunk(reason="stop")]


async def test_cancelled_while_telling_a_json_answer_from_a_stream(anyio_backend: str) -> None:
    """Cancelled while the first bytes of a JSON-labelled answer are awaited (to
    tell a whole answer from a mislabelled stream), the answer is closed and its
    connection goes back to the caller's pool."""
    raw = sse(delta(content="late"), finish("stop"), "[DONE]")
    silent = Reply(raw=raw, content_type="application/json", stall_after=0, stall=10.0)
    limits = httpx.Limits(max_connections=1)
    async with (
        FakeServer([silent, "next"]) as server,
        httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(5.0, pool=2.0)) as client,
    ):
        provider = OpenAIChat("m", base_url=server.base_url, client=client, max_retries=0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(collect, provider)
            assert await anyio.to_thread.run_sync(server.wait_stalled, 5.0)
            tg.cancel_scope.cancel()
        server.resume()
        assert text_of(await collect(provider)) == "next"


async def test_moonshot_s_usage_on_the_last_choice_is_read(anyio_backend: str) -> None:
    """Moonshot (Kimi) streams its usage as ``choices[0].usage`` on the finish
    chunk, not as ``usage``: its answers came without any ``UsageChunk``."""
    counted = {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    last = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop", "usage": counted}]}
    raw = sse(delta(role="assistant", content="Hi"), last, "[DONE]")
    async with FakeServer([Reply(raw=raw)]) as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url))
    assert chunks == [
        TextChunk(text="Hi"),
        UsageChunk(input_tokens=12, output_tokens=3),
        FinishChunk(reason="stop"),
    ]


async def test_a_json_labelled_stream_left_unread_is_closed_whole(anyio_backend: str) -> None:
    """Telling a JSON answer from a mislabelled stream reads its first bytes;
    a caller that left the stream block at once (nothing read) left that
    reader suspended for the garbage collector (trio warned: an error here)."""
    raw = sse(delta(content="unread"), finish("stop"), "[DONE]")
    async with FakeServer([Reply(raw=raw, content_type="application/json"), "next"]) as server:
        provider = OpenAIChat("m", base_url=server.base_url)
        async with provider.stream(HI):
            pass
        gc.collect()
        await anyio.lowlevel.checkpoint()  # trio reports it at the next checkpoint
        assert text_of(await collect(provider)) == "next"


async def test_an_error_event_gives_the_server_s_words(anyio_backend: str) -> None:
    """llama.cpp (builds before about September 2025) reports a prompt past the
    context as an ``error:`` line: the message quoted its JSON, counts and all,
    rather than what it says."""
    error = {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 5000,
        "n_ctx": 4096,
    }
    raw = b"error: " + json.dumps(error).encode() + b"\n\ndata: [DONE]\n\n"
    plain = b"event: error\ndata: upstream connect error\n\n"
    async with FakeServer([Reply(raw=raw), Reply(raw=plain)]) as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url))
        other = await collect(OpenAIChat("m", base_url=server.base_url))
    said = "OpenAI-compatible server error event: "
    assert chunks == [FinishChunk(reason="error", message=f"{said}{error['message']} (code 400)")]
    assert other == [FinishChunk(reason="error", message=f"{said}upstream connect error")]
