"""AnthropicMessages and ``pause_turn``: a turn the API paused (server tools at
their iteration limit) is sent back as it came and continued in the same
stream, up to ``max_pauses`` times (FakeServer over HTTP)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_support import collect, text_of

from streamtools.model import ChatMessage, FinishChunk, ModelRequest, UsageChunk
from streamtools.providers import AnthropicMessages
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio


def ev(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


def answer(blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]], reason: str) -> Reply:
    """An SSE answer: each (block as it starts, its deltas), then ``reason``."""
    body = ev({"type": "message_start", "message": {"usage": {"input_tokens": 10}}})
    for index, (start, deltas) in enumerate(blocks):
        body += ev({"type": "content_block_start", "index": index, "content_block": start})
        for d in deltas:
            body += ev({"type": "content_block_delta", "index": index, "delta": d})
        body += ev({"type": "content_block_stop", "index": index})
    body += ev({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None},
                "usage": {"output_tokens": 5}})  # fmt: skip
    body += ev({"type": "message_stop"})
    return Reply(raw=body, content_type="text/event-stream")


SEARCH = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
RESULT = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": [{"type": "web_search_result", "url": "https://example.com", "title": "Ex",
                 "encrypted_content": "abc"}],
}  # fmt: skip
CITE = {"type": "web_search_result_location", "url": "https://example.com", "title": "Ex",
        "encrypted_index": "x", "cited_text": "a fact"}  # fmt: skip
PAUSED = answer(
    [
        ({"type": "text", "text": ""}, [{"type": "text_delta", "text": "Let me look. "}]),
        (SEARCH, [{"type": "input_json_delta", "partial_json": '{"query": '},
                  {"type": "input_json_delta", "partial_json": '"weather"}'}]),
        (RESULT, []),
        ({"type": "text", "text": ""}, [{"type": "text_delta", "text": "It is "},
                                        {"type": "citations_delta", "citation": CITE}]),
    ],  # fmt: skip
    "pause_turn",
)
GOES_ON = answer([({"type": "text", "text": ""}, [{"type": "text_delta", "text": "sunny."}])],
                 "end_turn")  # fmt: skip
WEB = ModelRequest(
    messages=(ChatMessage(role="user", content="Weather?"),),
    extra={"tools": [{"type": "web_search_20250305", "name": "web_search"}]},
)


async def test_a_paused_turn_is_sent_back_as_it_came_and_goes_on(anyio_backend: str) -> None:
    async with FakeServer([PAUSED, GOES_ON], wire="anthropic") as server:
        chunks = await collect(AnthropicMessages("m", base_url=server.base_url), WEB)
        bodies = server.requests
    assert text_of(chunks) == "Let me look. It is sunny."
    assert chunks[-1] == FinishChunk(reason="stop")  # one finish, the last round's
    assert sum(isinstance(c, FinishChunk) for c in chunks) == 1
    assert sum(isinstance(c, UsageChunk) for c in chunks) == 2  # each round is billed
    assert len(bodies) == 2
    first, second = bodies
    assert second["tools"] == first["tools"]
    assert second["messages"][:-1] == first["messages"]
    sent_back = second["messages"][-1]
    assert sent_back["role"] == "assistant"
    assert sent_back["content"] == [
        {"type": "text", "text": "Let me look. "},
        {**SEARCH, "input": {"query": "weather"}},
        RESULT,
        {"type": "text", "text": "It is ", "citations": [CITE]},
    ]


async def test_pauses_past_max_pauses_end_in_a_pause_finish(anyio_backend: str) -> None:
    async with FakeServer([PAUSED, PAUSED, GOES_ON], wire="anthropic") as server:
        provider = AnthropicMessages("m", base_url=server.base_url, max_pauses=1)
        chunks = await collect(provider, WEB)
        bodies = server.requests
    assert len(bodies) == 2
    # the second request carries both paused rounds' content: the first only once
    assert len(bodies[1]["messages"][-1]["content"]) == 4
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "pause"
    assert "pause_turn" in (last.message or "") and "unfinished" in (last.message or "")


async def test_three_rounds_send_back_all_the_content_so_far(anyio_backend: str) -> None:
    async with FakeServer([PAUSED, PAUSED, GOES_ON], wire="anthropic") as server:
        chunks = await collect(AnthropicMessages("m", base_url=server.base_url), WEB)
        bodies = server.requests
    assert text_of(chunks) == "Let me look. It is " * 2 + "sunny."
    assert [len(b["messages"][-1]["content"]) for b in bodies[1:]] == [4, 8]
    assert chunks[-1] == FinishChunk(reason="stop")


async def test_a_failed_request_after_a_pause_ends_in_an_error_finish(anyio_backend: str) -> None:
    async with FakeServer([PAUSED, Reply(status=400)], wire="anthropic") as server:
        provider = AnthropicMessages("m", base_url=server.base_url, max_retries=0)
        chunks = await collect(provider, WEB)
    assert text_of(chunks) == "Let me look. It is "
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert "400" in (last.message or "")


async def test_a_prefilled_reply_goes_back_with_the_paused_content_after_it(
    anyio_backend: str,
) -> None:
    request = ModelRequest(
        messages=(
            ChatMessage(role="user", content="Weather?"),
            ChatMessage(role="assistant", content="Sure."),
        ),
        extra=WEB.extra,
    )
    async with FakeServer([PAUSED, GOES_ON], wire="anthropic") as server:
        await collect(AnthropicMessages("m", base_url=server.base_url), request)
        bodies = server.requests
    assert bodies[0]["messages"][-1] == {"role": "assistant", "content": "Sure."}
    content = bodies[1]["messages"][-1]["content"]
    assert content[0] == {"type": "text", "text": "Sure."} and len(content) == 5
    assert len(bodies[1]["messages"]) == 2  # no second assistant message


async def test_leaving_a_resumed_stream_early_closes_it(anyio_backend: str) -> None:
    async with FakeServer([PAUSED, GOES_ON], wire="anthropic") as server:
        provider = AnthropicMessages("m", base_url=server.base_url)
        async with provider.stream(WEB) as chunks:
            async for _ in chunks:
                break
        assert len(server.requests) == 1
        assert provider._contents == {}


async def test_without_server_tools_a_pause_is_a_pause_finish(anyio_backend: str) -> None:
    """No content is kept (nothing to send back), and the finish is no raw
    ``pause_turn`` that no consumer knows."""
    request = ModelRequest(messages=WEB.messages)
    async with FakeServer([PAUSED, GOES_ON], wire="anthropic") as server:
        provider = AnthropicMessages("m", base_url=server.base_url)
        chunks = await collect(provider, request)
        assert len(server.requests) == 1
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "pause" and last.message


async def test_a_long_paused_text_goes_back_whole(anyio_backend: str) -> None:
    words = [f"w{n} " for n in range(2000)]
    long = answer(
        [({"type": "text", "text": "> "}, [{"type": "text_delta", "text": w} for w in words])],
        "pause_turn",
    )
    async with FakeServer([long, GOES_ON], wire="anthropic") as server:
        await collect(AnthropicMessages("m", base_url=server.base_url), WEB)
        bodies = server.requests
    assert bodies[1]["messages"][-1]["content"] == [{"type": "text", "text": "> " + "".join(words)}]
