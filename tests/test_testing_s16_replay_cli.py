"""``streamtools replay`` says why a recorded stream ended in error: a stream the
providers ended with ``FinishChunk(reason="error")`` (a cut connection) or a
recording cut while it was written shows a ``StreamError`` with the reason, as
the agent shows it, not only an errored finish."""

from __future__ import annotations

import io
from pathlib import Path

from streamtools.cli.replay import print_recording, segment_events
from streamtools.events import Finish, StreamError, TextDelta, TurnEnd
from streamtools.model import FinishChunk, TextChunk
from streamtools.runtime.recording import Header, encode_chunk, encode_header, parse


def test_an_error_finish_shows_its_message() -> None:
    data = (
        encode_header(Header())
        + encode_chunk(TextChunk(text="Hel"), 0.25)
        + encode_chunk(FinishChunk(reason="error", message="connection reset by peer"), 0.5)
    )
    [segment] = parse(data)
    events = [e for _t, e in segment_events(segment, "am_xml")]
    assert events[1:] == [
        TextDelta(text="Hel"),
        StreamError(kind="stream", message="connection reset by peer"),
        Finish(reason="error"),
        TurnEnd(turn=1, reason="error"),
    ]


def test_a_finished_stream_shows_no_error() -> None:
    data = (
        encode_header(Header())
        + encode_chunk(TextChunk(text="Hello"), 0.25)
        + encode_chunk(FinishChunk(reason="stop"), 0.5)
    )
    [segment] = parse(data)
    events = [e for _t, e in segment_events(segment, "am_xml")]
    assert not any(isinstance(e, StreamError) for e in events)


def test_the_replay_command_shows_where_a_recording_was_cut(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_bytes(
        encode_header(Header()) + encode_chunk(TextChunk(text="Hel"), 0.25) + b'{"type":"te'
    )
    out = io.StringIO()
    assert print_recording(path, "am_xml", as_json=False, out=out) == 1
    [error] = [line for line in out.getvalue().splitlines() if " error " in line]
    assert f"ends mid-line at {path}:3" in error
