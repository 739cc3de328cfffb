"""A user's tests: ScriptedModel, FakeServer, Replay and record, as the README writes them."""

from __future__ import annotations

from pathlib import Path
from typing import assert_type

import pytest

from streamtools import AnthropicMessages, OllamaChat, OpenAIChat, tool
from streamtools.errors import ProviderError
from streamtools.model import Chunk, ModelRequest, TextChunk
from streamtools.providers import ProviderOptions
from streamtools.runtime import Agent, Replay, record
from streamtools.testing import FakeCall, FakeServer, Reply, ScriptedModel, ScriptedReply


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def answer(request: ModelRequest) -> str:
    return "It is 5." if "5" in (request.messages[-1].content or "") else "No result?"


async def async_answer(request: ModelRequest) -> list[Chunk | Exception]:
    return [TextChunk(text="The answer"), ProviderError("connection reset")]


@pytest.mark.anyio
async def test_scripted(tmp_path: Path) -> None:
    replies: list[ScriptedReply] = ["Hi", answer, async_answer, ProviderError("HTTP 429")]
    model = ScriptedModel(replies, seed=1)
    assert_type(model.requests, list[ModelRequest])
    assert_type(model.remaining, int)
    path = tmp_path / "session.jsonl"
    await Agent(record(model, path), [multiply]).run("What is 2 + 3?")
    replay = Replay(path, speed=2.0, match_requests=True)
    result = await Agent(replay, [multiply]).run("What is 2 + 3?")
    assert result.text
    try:
        await Agent(ScriptedModel([[TextChunk(text="x"), ProviderError("reset")]])).run("Hi")
    except ProviderError as exc:
        assert_type(exc.partial_text, str | None)
        assert_type(exc.status, int | None)


@pytest.mark.anyio
async def test_fake_server() -> None:
    replies: list[str | Reply] = [
        Reply(status=429, retry_after=0),
        '<am:tool_call name="multiply"><a>6</a><b>7</b></am:tool_call>',
        "6 × 7 = 42.",
    ]
    async with FakeServer(replies, wire="openai") as server:
        assert_type(server.base_url, str)
        agent = Agent(OpenAIChat("m", base_url=server.base_url), [multiply], stop_at_call=True)
        result = await agent.run("What is 6 × 7?")
        assert result.text == "6 × 7 = 42."
        assert server.requests[1]["stop"] == ["</am:tool_call>"]
        assert server.remaining == 0
    call = FakeCall(name="multiply", arguments={"a": 6, "b": 7})
    # annotated: mypy joins a Reply and a str in an unannotated list to list[object]
    native: list[str | Reply] = [Reply(calls=(call,)), "42."]
    with FakeServer(native, wire="anthropic") as other:
        options: ProviderOptions = {"base_url": other.base_url, "max_retries": 1}
        model = AnthropicMessages("claude", **options)
        assert (await Agent(model, [multiply], native=True).run("6 × 7?")).text == "42."
        OllamaChat("qwen3", base_url=other.base_url, extra_body={"options": {"num_ctx": 8}})
