"""``record`` writes each stream as it goes: a recording process killed
mid-stream (SIGKILL: no ``finally``, no shielded write) leaves a file that holds
everything it had received, and that replays as a recording cut there."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from streamtools.errors import ProviderError
from streamtools.events import StreamError, TextDelta, ToolResult
from streamtools.model import ChatMessage, FinishChunk, ModelRequest, TextChunk
from streamtools.runtime import Agent, Replay, record
from streamtools.runtime.recording import Header, encode_chunk, encode_header, load, parse
from streamtools.testing import ScriptedModel
from streamtools.tools import tool

pytestmark = pytest.mark.anyio

ANSWER = "It is five, as computed by the tool."
CALL = '<am:tool_call name="add"><a>2</a><b>3</b></am:tool_call>'

# The recording process: an agent whose second model call stalls after three
# chunks (a model that stops sending mid-answer), until the process is killed.
CHILD = f"""
import sys
from contextlib import asynccontextmanager
import anyio
from streamtools.model import TextChunk
from streamtools.runtime import Agent, record
from streamtools.testing import ScriptedModel
from streamtools.tools import tool

@tool
def add(a: int, b: int) -> int:
    "Add two integers."
    return a + b

class Stalling:
    def __init__(self) -> None:
        self.inner = ScriptedModel([{CALL!r}, {ANSWER!r}], chunk_sizes=(3, 3))

    @asynccontextmanager
    async def stream(self, request):
        async with self.inner.stream(request) as chunks:
            yield self.play(chunks, len(self.inner.requests))

    async def play(self, chunks, call):
        sent = 0
        async for chunk in chunks:
            if call == 2 and sent == 3:
                print("ready", flush=True)
                await anyio.sleep(60)
            sent += isinstance(chunk, TextChunk)
            yield chunk

async def main() -> None:
    await Agent(record(Stalling(), sys.argv[1]), [add]).run("What is 2 + 3?")

anyio.run(main)
"""


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def test_a_recording_killed_mid_stream_replays_up_to_the_kill(tmp_path: Path) -> None:
    path = tmp_path / "killed.jsonl"
    with anyio.fail_after(60):
        async with await anyio.open_process([sys.executable, "-c", CHILD, str(path)]) as proc:
            assert proc.stdout is not None
            said = b""
            try:
                while b"\n" not in said:
                    said += await proc.stdout.receive()
            finally:
                proc.kill()  # SIGKILL: nothing of the child runs after this
                await proc.wait()
    assert said.strip() == b"ready"

    first, second = load(path)
    assert first.header.turn == 1 and second.header.turn == 2
    texts = [t.chunk.text for t in second.chunks if isinstance(t.chunk, TextChunk)]
    got = "".join(texts)
    assert texts == [ANSWER[:3], ANSWER[3:6], ANSWER[6:9]]
    end = second.chunks[-1].chunk
    assert isinstance(end, FinishChunk) and end.reason == "error"
    assert "ends in the middle of call 2's stream" in (end.message or "")

    # replayed, the run goes as far as the killed one had got, then fails as a
    # stream cut short does: the tool ran, the text so far, an error, no hang
    events = []
    with anyio.fail_after(5), pytest.raises(ProviderError, match="in the middle") as raised:
        async with Agent(Replay(path), [add]).stream("What is 2 + 3?") as stream:
            async for event in stream:
                events.append(event)
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["5"]
    assert raised.value.partial_text == got
    assert "".join(e.text for e in events if isinstance(e, TextDelta)).endswith(got)
    assert sum(isinstance(e, StreamError) for e in events) == 1


async def test_a_finished_recording_has_no_cut(tmp_path: Path) -> None:
    """Lines written as they come make the same file as before once every stream
    has closed: the run replays whole, with no error."""
    path = tmp_path / "whole.jsonl"
    await Agent(record(ScriptedModel([CALL, ANSWER], chunk_sizes=(3, 3)), path), [add]).run("q")
    result = await Agent(Replay(path), [add]).run("q")
    assert result.text == ANSWER
    for segment in load(path):
        assert segment.header.live
        assert [t.chunk.reason for t in segment.chunks if isinstance(t.chunk, FinishChunk)] == [
            "stop"
        ]


async def test_the_file_holds_each_chunk_as_soon_as_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    model = record(ScriptedModel(["abcdef"], chunk_sizes=(2, 2)), path)
    request = ModelRequest(messages=(ChatMessage(role="user", content="hi"),))
    async with model.stream(request) as chunks:
        [segment] = load(path)  # the header, as the stream opened
        assert segment.header.request == request and segment.header.live
        read = ""
        async for chunk in chunks:
            if isinstance(chunk, TextChunk):
                read += chunk.text
                [segment] = load(path)
                kept = [t.chunk.text for t in segment.chunks if isinstance(t.chunk, TextChunk)]
                assert "".join(kept) == read


def test_a_segment_not_written_live_ends_where_its_lines_end() -> None:
    """A file written by hand (or by an older ``record``) whose last stream has
    no finish plays its chunks and ends, as it always did; only ``record``'s
    live mark makes that a cut."""
    chunk = encode_chunk(TextChunk(text="Hi"), 0.1)
    [plain] = parse(encode_header(Header()) + chunk)
    assert [t.chunk for t in plain.chunks] == [TextChunk(text="Hi")]
    [live] = parse(encode_header(Header(live=True)) + chunk)
    kept, end = [t.chunk for t in live.chunks]
    assert kept == TextChunk(text="Hi")
    assert isinstance(end, FinishChunk) and end.reason == "error"
    # only the last segment can have been cut so: an earlier one ends as it is
    first, _ = parse(encode_header(Header(live=True)) + chunk + encode_header(Header(turn=2)))
    assert [t.chunk for t in first.chunks] == [TextChunk(text="Hi")]
