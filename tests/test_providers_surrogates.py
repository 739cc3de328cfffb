"""A UTF-16 surrogate pair split across two SSE events (a JavaScript gateway
escapes each half: ``"\\ud83d"``, then ``"\\ude00"``) is joined by the
OpenAI-compatible and Anthropic providers, in text, reasoning and call
arguments; a half left alone becomes U+FFFD. MockTransport and FakeServer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_support import collect, mock, text_of

from streamtools.events import CallEnd
from streamtools.model import CallChunk, Chunk, FinishChunk, ReasoningChunk
from streamtools.native import NativeCalls
from streamtools.providers import AnthropicMessages, OpenAIChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio

HIGH, LOW = "\ud83d", "\ude00"  # the halves of 😀 (json.dumps escapes each: \ud83d)
GRIN = "\U0001f600"


def reasoning_of(chunks: list[Chunk]) -> str:
    return "".join(c.text for c in chunks if isinstance(c, ReasoningChunk))


def calls_of(chunks: list[Chunk]) -> list[tuple[str, dict[str, Any]]]:
    native = NativeCalls()
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    return [(e.name, e.arguments) for e in events + native.end() if isinstance(e, CallEnd)]


# --- OpenAI-compatible ---------------------------------------------------------------


def chat_sse(*deltas: dict[str, Any], finish: str = "stop") -> str:
    events: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas
    ]
    events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"


def chat_call(arguments: str, name: str | None = None) -> dict[str, Any]:
    """A tool-call delta; the first of a call (``name`` given) has its id and name."""
    if name is None:
        return {"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]}
    function = {"name": name, "arguments": arguments}
    return {"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": function}]}


SPLIT_CHAT = chat_sse(
    {"reasoning_content": f"hm {HIGH}"},
    {"reasoning_content": f"{LOW} ok"},
    {"content": f"Hi {HIGH}"},
    {"content": f"{LOW}!"},
    chat_call('{"q": "a' + HIGH, name="t"),
    chat_call(LOW + 'b"}'),
    finish="tool_calls",
)


def _check_split(chunks: list[Chunk]) -> None:
    assert reasoning_of(chunks) == f"hm {GRIN} ok"
    assert text_of(chunks) == f"Hi {GRIN}!"
    assert calls_of(chunks) == [("t", {"q": f"a{GRIN}b"})]
    assert chunks[-1] == FinishChunk(reason="tool_calls")


async def test_openai_joins_a_pair_split_across_events(anyio_backend: str) -> None:
    assert "\\ud83d" in SPLIT_CHAT  # each half escaped, as a JavaScript gateway sends it
    _check_split(await collect(OpenAIChat("m", client=mock(SPLIT_CHAT))))


async def test_openai_joins_a_split_pair_over_http(anyio_backend: str) -> None:
    async with FakeServer([Reply(raw=SPLIT_CHAT.encode())]) as server:
        chunks = await collect(OpenAIChat("m", base_url=server.base_url, max_retries=0))
    _check_split(chunks)


async def test_openai_lone_halves_become_replacement_characters(anyio_backend: str) -> None:
    # a half at the very end, a low half with no high before it, and a high half
    # whose next piece does not start with its low half
    body = chat_sse({"content": f"a{LOW}b{HIGH}"}, {"content": "c"}, {"content": f"d{HIGH}"})
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    assert text_of(chunks) == "a\ufffdb\ufffdcd\ufffd"
    assert chunks[-1] == FinishChunk(reason="stop")
    # arguments: the call's end delivers the lone half, the JSON stays whole
    body = chat_sse(chat_call('{"q": "x' + HIGH, name="t"), chat_call('"}'), finish="tool_calls")
    assert calls_of(await collect(OpenAIChat("m", client=mock(body)))) == [("t", {"q": "x\ufffd"})]


async def test_openai_malformed_json_is_still_an_error(anyio_backend: str) -> None:
    body = 'data: {"choices": [\\ud83d\n\n'  # a surrogate escape, but not JSON
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    assert isinstance(chunks[-1], FinishChunk) and chunks[-1].reason == "error"
    assert "malformed JSON" in (chunks[-1].message or "")


# --- Anthropic -----------------------------------------------------------------------


def ev(data: dict[str, Any]) -> str:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n"


def block_delta(index: int, **d: Any) -> str:
    return ev({"type": "content_block_delta", "index": index, "delta": d})


SPLIT_MESSAGES = "".join(
    [
        ev({"type": "message_start", "message": {"usage": {"input_tokens": 3}}}),
        ev({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking"}}),
        block_delta(0, type="thinking_delta", thinking=f"hm {HIGH}"),
        block_delta(0, type="thinking_delta", thinking=f"{LOW} ok"),
        ev({"type": "content_block_stop", "index": 0}),
        ev({"type": "content_block_start", "index": 1, "content_block": {"type": "text"}}),
        block_delta(1, type="text_delta", text=f"Hi {HIGH}"),
        block_delta(1, type="text_delta", text=f"{LOW}!"),
        ev({"type": "content_block_stop", "index": 1}),
        ev(
            {
                "type": "content_block_start",
                "index": 2,
                "content_block": {"type": "tool_use", "id": "t1", "name": "t", "input": {}},
            }
        ),
        block_delta(2, type="input_json_delta", partial_json='{"q": "a' + HIGH),
        block_delta(2, type="input_json_delta", partial_json=LOW + 'b"}'),
        ev({"type": "content_block_stop", "index": 2}),
        ev(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 5},
            }
        ),
        ev({"type": "message_stop"}),
    ]
)


async def test_anthropic_joins_a_pair_split_across_events(anyio_backend: str) -> None:
    _check_split(await collect(AnthropicMessages("c", client=mock(SPLIT_MESSAGES))))


async def test_anthropic_joins_a_split_pair_over_http(anyio_backend: str) -> None:
    reply = Reply(raw=SPLIT_MESSAGES.encode())
    async with FakeServer([reply], wire="anthropic") as server:
        chunks = await collect(AnthropicMessages("c", base_url=server.url, max_retries=0))
    _check_split(chunks)


async def test_anthropic_lone_half_at_the_end_is_a_replacement_character(
    anyio_backend: str,
) -> None:
    body = "".join(
        [
            ev({"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}),
            block_delta(0, type="text_delta", text=f"bye {HIGH}"),
            ev({"type": "content_block_stop", "index": 0}),
            ev({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
            ev({"type": "message_stop"}),
        ]
    )
    chunks = await collect(AnthropicMessages("c", client=mock(body)))
    assert text_of(chunks) == "bye \ufffd"
    assert chunks[-1] == FinishChunk(reason="stop")
