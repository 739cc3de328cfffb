"""ScriptedModel, record() and Replay: what goes in comes back out, at the right pace."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from streamtools.errors import UsageError
from streamtools.model import (
    CallChunk,
    ChatMessage,
    Chunk,
    FinishChunk,
    Model,
    ModelRequest,
    TextChunk,
    UsageChunk,
)
from streamtools.runtime import Replay, record
from streamtools.runtime.recording import Header, encode_chunk, encode_header, load, parse
from streamtools.testing import ScriptedModel

pytestmark = pytest.mark.anyio

REQ = ModelRequest(messages=(ChatMessage(role="user", content="hi"),))


async def collect(model: Model, request: ModelRequest = REQ) -> list[Chunk]:
    async with model.stream(request) as chunks:
        return [c async for c in chunks]


def text_of(chunks: list[Chunk]) -> str:
    return "".join(c.text for c in chunks if isinstance(c, TextChunk))


async def test_scripted_plays_replies_in_order_and_records_requests() -> None:
    model = ScriptedModel(["Hello there, world.", "second"], seed=3)
    first = await collect(model)
    assert text_of(first) == "Hello there, world."
    assert all(1 <= len(c.text) <= 6 for c in first if isinstance(c, TextChunk))
    assert len(first) > 4
    assert first[-1] == FinishChunk(reason="stop")
    other = ModelRequest(messages=(ChatMessage(role="user", content="again"),))
    assert text_of(await collect(model, other)) == "second"
    assert model.requests == [REQ, other]
    assert model.remaining == 0
    assert model.open_streams == 0
    with pytest.raises(UsageError, match="request 3 has none"):
        await collect(model)


async def test_scripted_seed_changes_split_not_text() -> None:
    a = await collect(ScriptedModel(["x" * 60], seed=1))
    b = await collect(ScriptedModel(["x" * 60], seed=2))
    assert text_of(a) == text_of(b)
    assert [len(c.text) for c in a if isinstance(c, TextChunk)] != [
        len(c.text) for c in b if isinstance(c, TextChunk)
    ]


async def test_scripted_honours_stop_like_a_provider() -> None:
    reply = 'Sure. <am:tool_call name="clock"></am:tool_call> trailing'
    request = ModelRequest(messages=REQ.messages, stop=("</am:tool_call>", "never"))
    chunks = await collect(ScriptedModel([reply]), request)
    assert text_of(chunks) == 'Sure. <am:tool_call name="clock">'
    assert chunks[-1] == FinishChunk(reason="stop", stop_sequence="</am:tool_call>")
    ignoring = await collect(ScriptedModel([reply], honor_stop=False), request)
    assert text_of(ignoring) == reply


async def test_scripted_chunk_replies_get_a_finish() -> None:
    given: list[Chunk] = [TextChunk(text="a"), CallChunk(index=0, id="c1", name="f")]
    assert await collect(ScriptedModel([given])) == [*given, FinishChunk(reason="stop")]
    done: list[Chunk] = [TextChunk(text="a"), FinishChunk(reason="length")]
    assert await collect(ScriptedModel([done])) == done


async def test_record_then_replay_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    script: list[list[Chunk]] = [
        [TextChunk(text="Hi ✓ "), TextChunk(text="你好"), UsageChunk(input_tokens=3)],
        [CallChunk(index=0, id="c", name="f", arguments='{"a":1}'), FinishChunk(reason="x")],
    ]
    inner = ScriptedModel(script, delay=0.01)
    recorder = record(inner, path)
    played = [await collect(recorder), await collect(recorder)]
    segments = load(path)
    assert [s.header.turn for s in segments] == [1, 2]
    assert segments[0].header.provider == "ScriptedModel"
    assert segments[0].header.request == REQ
    offsets = [t.t for t in segments[0].chunks]
    assert offsets == sorted(offsets) and offsets[0] > 0
    replay = Replay(path)
    assert [await collect(replay), await collect(replay)] == played
    assert replay.requests == [REQ, REQ]
    with pytest.raises(UsageError, match="call 3 has none"):
        await collect(replay)


async def test_record_keeps_a_stream_cut_early(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    recorder = record(ScriptedModel(["abcdefghijklmnop"], chunk_sizes=(2, 2)), path)
    async with recorder.stream(REQ) as chunks:
        async for chunk in chunks:
            assert chunk == TextChunk(text="ab")
            break
    [segment] = load(path)
    assert [t.chunk for t in segment.chunks] == [TextChunk(text="ab")]


def _timed_file(path: Path) -> None:
    lines = [encode_header(Header(provider="test", request=REQ))]
    lines += [encode_chunk(TextChunk(text=str(i)), 0.05 * i) for i in range(1, 5)]
    lines.append(encode_chunk(FinishChunk(reason="stop"), 0.2))
    path.write_bytes(b"".join(lines))


@pytest.mark.parametrize("speed", [1.0, 4.0])
async def test_replay_paced_follows_offsets(tmp_path: Path, speed: float) -> None:
    path = tmp_path / "timed.jsonl"
    _timed_file(path)
    replay = Replay(path, speed=speed)
    start = anyio.current_time()
    seen: list[float] = []
    async with replay.stream(REQ) as chunks:
        async for _ in chunks:
            seen.append(anyio.current_time() - start)
    # Never early: each chunk arrives no sooner than its scaled offset.
    expected = [0.05 * i / speed for i in range(1, 5)] + [0.2 / speed]
    assert all(s >= e - 0.002 for s, e in zip(seen, expected, strict=True))


async def test_replay_instant_and_cancellable(tmp_path: Path) -> None:
    path = tmp_path / "timed.jsonl"
    _timed_file(path)
    assert text_of(await collect(Replay(path))) == "1234"
    slow = Replay(path, speed=0.001)  # 200 s if it were waited for
    with anyio.move_on_after(0.05) as scope:
        await collect(slow)
    assert scope.cancelled_caught


def test_bad_recordings_are_reported(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="chunk before the first header"):
        parse(b'{"type":"text","text":"x","t":0}\n')
    with pytest.raises(UsageError, match=":2: invalid JSON"):
        parse(encode_header(Header()) + b"{nope\n")
    with pytest.raises(UsageError, match="unsupported recording"):
        parse(b'{"type":"header","format":"other","version":1}\n')
    with pytest.raises(UsageError, match="speed must be positive"):
        Replay(tmp_path / "x", speed=0)
