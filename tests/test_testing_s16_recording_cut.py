"""A recording cut while it was written (the process died mid-write, the disk
filled up) ends there: its streams play up to the last whole line, then the cut
is the stream's error, as a live stream cut short ends. Only a last line with no
line end is read so; a bad line anywhere else stays a ``UsageError`` naming it."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from streamtools.errors import ProviderError, UsageError
from streamtools.events import StreamError, TextDelta
from streamtools.model import ChatMessage, FinishChunk, ModelRequest, TextChunk
from streamtools.runtime import Agent, Replay, record
from streamtools.runtime.recording import Header, encode_chunk, encode_header, parse
from streamtools.testing import ScriptedModel

pytestmark = pytest.mark.anyio

REQ = ModelRequest(messages=(ChatMessage(role="user", content="hi"),))
REPLIES = ["The answer is forty-two, ", "and that is all — é ü 漢字."]


async def _recorded(tmp_path: Path) -> bytes:
    """Two model calls, recorded: several text chunks each (with non-ASCII text,
    so that some cuts fall inside a character)."""
    path = tmp_path / "whole.jsonl"
    model = record(ScriptedModel(REPLIES, chunk_sizes=(4, 4)), path)
    for _ in REPLIES:
        async with model.stream(REQ) as chunks:
            async for _chunk in chunks:
                pass
    return path.read_bytes()


async def test_every_cut_of_a_recording_reads_as_its_whole_lines_then_an_error(
    tmp_path: Path,
) -> None:
    data = await _recorded(tmp_path)
    whole = parse(data)
    assert len(whole) == 2 and all(s.failure is None for s in whole)
    for n in range(1, len(data)):
        part = data[:n]
        got = parse(part)  # never raises
        kept = part[: part.rfind(b"\n") + 1]
        before = parse(kept)
        if part.endswith(b"\n"):
            assert got == before
            continue
        if data[n : n + 1] == b"\n":  # cut just before a line end: the line is whole
            assert got == parse(part + b"\n")
            continue
        # what the whole lines held is kept as it was
        assert len(got) >= len(before)
        for old, new in zip(before[:-1], got, strict=False):
            assert new == old
        cut = got[-1]
        if len(got) == len(before):  # a chunk line was cut: its stream ends there, in error
            *chunks, finish = cut.chunks
            # (``record`` wrote the lines as the stream went: whole lines that end
            # mid-stream read as cut there too, with an errored finish of their own)
            lines_held = [t for t in before[-1].chunks if not _errored(t.chunk)]
            assert chunks == lines_held and cut.failure is None
            assert isinstance(finish.chunk, FinishChunk) and finish.chunk.reason == "error"
            assert "ends mid-line at <recording>:" in (finish.chunk.message or "")
            assert finish.t == (chunks[-1].t if chunks else 0.0)
        else:  # a header line was cut: the next call fails on opening
            assert len(got) == len(before) + 1
            assert cut.failure is not None and not cut.failure.opened and cut.chunks == []
            assert "ends mid-line at <recording>:" in cut.failure.message
            assert cut.header.turn == len(got)


def _errored(chunk: object) -> bool:
    return isinstance(chunk, FinishChunk) and chunk.reason == "error"


async def test_a_cut_recording_replays_up_to_the_cut_then_raises(tmp_path: Path) -> None:
    data = await _recorded(tmp_path)
    lines = data.splitlines(keepends=True)
    # cut halfway through the fourth chunk line of the first call
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b"".join(lines[:4]) + lines[4][: len(lines[4]) // 2])
    replay = Replay(path)
    with anyio.fail_after(5):
        async with replay.stream(REQ) as chunks:
            got = [c async for c in chunks]
    *texts, finish = got
    assert "".join(c.text for c in texts if isinstance(c, TextChunk)) == REPLIES[0][:12]
    assert isinstance(finish, FinishChunk) and finish.reason == "error"
    assert "ends mid-line at " in (finish.message or "") and "cut.jsonl:5" in (finish.message or "")

    # an agent replaying it ends as for a live stream cut short: an error event,
    # then the error raised, with the text streamed before the cut on it
    events = []
    with anyio.fail_after(5), pytest.raises(ProviderError, match="ends mid-line") as raised:
        async with Agent(Replay(path)).stream("hi") as stream:
            async for event in stream:
                events.append(event)
    assert raised.value.partial_text == REPLIES[0][:12]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == REPLIES[0][:12]
    errors = [e for e in events if isinstance(e, StreamError)]
    assert len(errors) == 1 and "ends mid-line" in errors[0].message


async def test_a_cut_header_is_a_call_that_fails_on_opening(tmp_path: Path) -> None:
    data = await _recorded(tmp_path)
    second = data.index(b'{"type":"header"', 1)
    path = tmp_path / "cut.jsonl"
    path.write_bytes(data[: second + 30])
    replay = Replay(path)
    async with replay.stream(REQ) as chunks:  # the first call plays whole
        first = [c async for c in chunks]
    assert "".join(c.text for c in first if isinstance(c, TextChunk)) == REPLIES[0]
    with pytest.raises(ProviderError, match="ends mid-line"):
        async with replay.stream(REQ) as chunks:
            pytest.fail("a call whose header was cut does not open")  # pragma: no cover
    assert replay.remaining == 0


def test_only_a_last_line_without_a_line_end_is_read_as_cut() -> None:
    header = encode_header(Header())
    chunk = encode_chunk(TextChunk(text="x"), 0.1)
    # a bad line in the middle names its line, however the file ends
    with pytest.raises(UsageError, match=":2: invalid JSON"):
        parse(header + b'{"type":"te\n' + chunk + b'{"type":"te')
    # a bad last line that has its line end is a bad line, not a cut
    with pytest.raises(UsageError, match=":3: invalid JSON"):
        parse(header + chunk + b'{"type":"te\n')
    with pytest.raises(UsageError, match=":3: invalid JSON"):
        parse(header + chunk + b'{"type":"te\r\n')
    # whole JSON with no line end is a whole line: judged as one
    with pytest.raises(UsageError, match=":3: not a recording line"):
        parse(header + chunk + b'{"type":"nothing"}')
    [segment] = parse(header + chunk.rstrip(b"\n"))
    assert segment.failure is None and len(segment.chunks) == 1
    # bytes that are not UTF-8 in a whole line stay an error; cut inside a character is a cut
    with pytest.raises(UsageError, match=":2: not UTF-8"):
        parse(header + b'{"type":"text","text":"\xff","t":0}\n')
    [segment] = parse(header + '{"type":"text","text":"漢'.encode()[:-1])
    [finish] = segment.chunks
    assert isinstance(finish.chunk, FinishChunk) and finish.chunk.reason == "error"


def test_a_cut_after_a_segment_that_ended_is_the_next_call() -> None:
    """After an error line or a finish, a cut line too short to name its type
    can only begin the next call."""
    header = encode_header(Header(turn=1))
    for end in (
        b'{"type":"error","message":"reset","t":0.5}\n',
        encode_chunk(FinishChunk(reason="stop"), 0.5),
    ):
        first, second = parse(header + end + b'{"ty')
        assert first == parse(header + end)[0]
        assert second.failure is not None and not second.failure.opened
        assert "ends mid-line at <recording>:3" in second.failure.message
        assert second.header.turn == 2
    # with no header at all, a cut first line is a first call failing on opening
    [only] = parse(b'{"type":"text","te')
    assert only.failure is not None and not only.failure.opened
