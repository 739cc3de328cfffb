"""Recording a golden file again: ``record`` leaves the earlier recording as it
was until the model first answers, so a re-record whose model fails at once (a
wrong key, a server down, a stream cut short) does not replace a good recording
with a failed one; once the model has answered, the file is the new recording,
written as it goes (a killed process keeps what was streamed)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from streamtools.errors import ProviderError
from streamtools.model import ChatMessage, FinishChunk, ModelRequest, TextChunk
from streamtools.runtime import Agent, Replay, record
from streamtools.runtime.recording import load
from streamtools.testing import ScriptedModel
from streamtools.tools import tool

pytestmark = pytest.mark.anyio

CALL = '<am:tool_call name="add"><a>2</a><b>3</b></am:tool_call>'
REQUEST = ModelRequest(messages=(ChatMessage(role="user", content="hi"),))


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _bytes(path: Path) -> bytes:
    return path.read_bytes()


async def _golden(path: Path) -> bytes:
    await Agent(record(ScriptedModel([CALL, "It is 5."]), path), [add]).run("What is 2 + 3?")
    return _bytes(path)


async def test_a_re_record_refused_at_once_keeps_the_earlier_recording(tmp_path: Path) -> None:
    path = tmp_path / "golden.jsonl"
    golden = await _golden(path)
    refused = ScriptedModel([ProviderError("HTTP 401: Incorrect API key", status=401)])
    with pytest.raises(ProviderError, match="401"):
        await Agent(record(refused, path), [add]).run("What is 2 + 3?")
    assert _bytes(path) == golden
    assert (await Agent(Replay(path), [add]).run("What is 2 + 3?")).text == "It is 5."


async def test_a_re_record_cut_mid_stream_keeps_the_earlier_recording(tmp_path: Path) -> None:
    path = tmp_path / "golden.jsonl"
    golden = await _golden(path)
    raised = ScriptedModel([[TextChunk(text="It is"), ProviderError("connection reset")]])
    with pytest.raises(ProviderError, match="connection reset"):
        await Agent(record(raised, path), [add]).run("What is 2 + 3?")
    assert _bytes(path) == golden
    # a stream the provider ended as cut short (its errored finish) is no answer either
    cut = FinishChunk(reason="error", message="the server stopped sending")
    model = record(ScriptedModel([[TextChunk(text="It is"), cut]]), path)
    async with model.stream(REQUEST) as chunks:
        assert [chunk async for chunk in chunks][-1] == cut
    assert _bytes(path) == golden


async def test_the_first_answer_replaces_the_file_with_the_whole_new_session(
    tmp_path: Path,
) -> None:
    path = tmp_path / "golden.jsonl"
    golden = await _golden(path)
    model = record(ScriptedModel([ProviderError("HTTP 503", status=503), "Hello again."]), path)
    with pytest.raises(ProviderError, match="503"):
        async with model.stream(REQUEST):
            pass
    assert _bytes(path) == golden
    async with model.stream(REQUEST) as chunks:
        assert _bytes(path) == golden  # still streaming: no answer yet
        text = "".join([c.text async for c in chunks if isinstance(c, TextChunk)])
        assert text == "Hello again."
    failed, answered = load(path)  # the refused call is part of the new recording
    assert failed.failure is not None and failed.failure.status == 503
    assert answered.header.turn == 2 and isinstance(answered.chunks[-1].chunk, FinishChunk)
    replay = Replay(path)
    with pytest.raises(ProviderError, match="503"):
        async with replay.stream(REQUEST):
            pass
    async with replay.stream(REQUEST) as chunks:
        assert "".join([c.text async for c in chunks if isinstance(c, TextChunk)]) == text


async def test_after_the_first_answer_each_chunk_is_in_the_file_as_it_comes(
    tmp_path: Path,
) -> None:
    """What a process killed mid-stream leaves: once the model has answered, the
    next stream's lines are in the file as they are read, over a golden file too."""
    path = tmp_path / "golden.jsonl"
    await _golden(path)
    model = record(ScriptedModel(["first", "abcdef"], chunk_sizes=(2, 2)), path)
    async with model.stream(REQUEST) as chunks:
        async for _ in chunks:
            pass
    [first] = load(path)
    async with model.stream(REQUEST) as chunks:
        read = ""
        async for chunk in chunks:
            if isinstance(chunk, TextChunk):
                read += chunk.text
                _, second = load(path)
                kept = [t.chunk.text for t in second.chunks if isinstance(t.chunk, TextChunk)]
                assert "".join(kept) == read
    assert read == "abcdef"
    assert first.header.turn == 1


async def test_a_stream_its_consumer_stops_reading_is_an_answer(tmp_path: Path) -> None:
    """A consumer that has what it needs (a call cut client-side at its closing
    marker) closes the stream early: that answer is recorded."""
    path = tmp_path / "golden.jsonl"
    golden = await _golden(path)
    model = record(ScriptedModel(["abcdef"], chunk_sizes=(2, 2)), path)
    async with model.stream(REQUEST) as chunks:
        async for chunk in chunks:
            assert chunk == TextChunk(text="ab")
            break
    assert _bytes(path) != golden
    [segment] = load(path)
    assert [t.chunk for t in segment.chunks][0] == TextChunk(text="ab")


async def test_a_new_file_holds_a_failure_at_once(tmp_path: Path) -> None:
    """Recording a failure on purpose (to test error handling) still works: a new
    or empty file is written from the first line, the refusal included."""
    for path in (tmp_path / "new.jsonl", tmp_path / "empty.jsonl"):
        if path.name == "empty.jsonl":
            record(ScriptedModel([]), path)  # makes the file, writes nothing
        model = record(ScriptedModel([ProviderError("HTTP 401", status=401)]), path)
        with pytest.raises(ProviderError):
            async with model.stream(REQUEST):
                pass
        [segment] = load(path)
        assert segment.failure is not None and segment.failure.status == 401


def test_a_path_that_cannot_be_written_fails_when_recording_starts(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        record(ScriptedModel(["x"]), tmp_path / "no" / "such" / "dir.jsonl")


async def test_a_cancelled_first_stream_is_no_answer(tmp_path: Path) -> None:
    """Ctrl-C in a chat being recorded, before the model finished its first
    answer: the earlier recording stays."""
    path = tmp_path / "golden.jsonl"
    golden = await _golden(path)
    model = record(ScriptedModel(["abcdef"], chunk_sizes=(2, 2), delay=10.0), path)
    with anyio.move_on_after(0.2):
        async with model.stream(REQUEST) as chunks:
            async for _ in chunks:
                pass
    assert _bytes(path) == golden
