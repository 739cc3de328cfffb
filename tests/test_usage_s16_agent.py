"""An agent's token counts with the prompt cache: each request's ``Usage`` event
carries the cache and reasoning counts its provider read, and ``RunResult.usage``
totals every request of the run (a count no request reported stays None).
Before, the events had no such counts and a run had no total at all."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from provider_support import PROVIDERS

from streamtools.cli.replay import print_recording
from streamtools.events import Usage
from streamtools.model import ChatMessage, ModelRequest, UsageChunk
from streamtools.providers import OpenAIChat
from streamtools.runtime import Replay, record
from streamtools.runtime.agent import Agent
from streamtools.runtime.hybrid import SELECT_TOOLS, HybridAgent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import FakeCall, Reply, Wire
from streamtools.tools import tool

pytestmark = pytest.mark.anyio


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


CALL = '<am:tool_call name="multiply"><a>6</a><b>7</b></am:tool_call>'
FIRST = UsageChunk(input_tokens=500, output_tokens=30, cache_write_tokens=400, reasoning_tokens=5)
SECOND = UsageChunk(input_tokens=560, output_tokens=8, cache_read_tokens=400, reasoning_tokens=2)
REQUEST = ModelRequest(messages=(ChatMessage(role="user", content="hi"),))


def test_plus_adds_field_by_field_and_none_is_nothing_said() -> None:
    a = Usage(input_tokens=1, cache_read_tokens=2)
    b = Usage(input_tokens=10, output_tokens=3)
    assert a.plus(b) == Usage(input_tokens=11, output_tokens=3, cache_read_tokens=2)
    assert Usage().plus(Usage()) == Usage()
    assert Usage(cache_write_tokens=0).plus(Usage()).cache_write_tokens == 0


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_the_run_totals_cache_counts_over_its_turns(anyio_backend: str, wire: Wire) -> None:
    replies = [Reply(text=CALL, usage=FIRST), Reply(text="It is 42.", usage=SECOND)]
    async with FakeServer(replies, wire=wire) as server:
        model = PROVIDERS[wire]("m", base_url=server.base_url)
        agent = Agent(model, [multiply], dialect="am_xml")
        seen: list[Usage] = []
        async with agent.stream("6 times 7?") as events:
            async for event in events:
                if isinstance(event, Usage):
                    seen.append(event)
        result = events.result
    assert result is not None and result.text == "It is 42."
    assert seen == [Usage.of(FIRST), Usage.of(SECOND)]
    assert result.usage == Usage(
        input_tokens=1060,
        output_tokens=38,
        cache_read_tokens=400,
        cache_write_tokens=400,
        reasoning_tokens=7,
    )


async def test_run_returns_the_total_and_a_silent_server_leaves_none(anyio_backend: str) -> None:
    async with FakeServer([Reply(text=CALL), "It is 42."]) as server:
        result = await Agent(OpenAIChat("m", base_url=server.base_url), [multiply]).run("6*7?")
    assert result.usage.input_tokens is not None and result.usage.input_tokens > 0
    assert result.usage.output_tokens is not None and result.usage.output_tokens > 0
    assert result.usage.cache_read_tokens is None and result.usage.cache_write_tokens is None


async def test_a_hybrid_run_counts_its_selection_request_too(anyio_backend: str) -> None:
    select = Reply(
        calls=(FakeCall(name=SELECT_TOOLS, arguments={"names": ["multiply"]}),),
        usage=UsageChunk(input_tokens=100, output_tokens=9, cache_read_tokens=64),
    )
    replies = [select, Reply(text=CALL, usage=FIRST), Reply(text="It is 42.", usage=SECOND)]
    async with FakeServer(replies) as server:
        agent = HybridAgent(OpenAIChat("m", base_url=server.base_url), [multiply])
        result = await agent.run("6 times 7?")
    assert result.text == "It is 42." and result.turns == 3
    assert result.usage == Usage(
        input_tokens=1160,
        output_tokens=47,
        cache_read_tokens=464,
        cache_write_tokens=400,
        reasoning_tokens=7,
    )


async def test_a_recording_keeps_the_cache_counts_and_replay_shows_them(
    anyio_backend: str, tmp_path: Path
) -> None:
    path = tmp_path / "cached.jsonl"
    async with FakeServer([Reply(text="Hi", usage=SECOND)]) as server:
        recorder = record(OpenAIChat("m", base_url=server.base_url), path)
        async with recorder.stream(REQUEST) as chunks:
            assert [c async for c in chunks if isinstance(c, UsageChunk)] == [SECOND]
    replay = Replay(path)
    async with replay.stream(REQUEST) as chunks:
        assert [c async for c in chunks if isinstance(c, UsageChunk)] == [SECOND]
    out = io.StringIO()
    assert print_recording(path, "am_xml", as_json=True, out=out) == 1  # one model call
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [e for e in lines if e["type"] == "usage"] == [
        {"type": "usage", "input_tokens": 560, "output_tokens": 8, "cache_read_tokens": 400,
         "reasoning_tokens": 2}
    ]
