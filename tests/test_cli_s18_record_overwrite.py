"""``streamtools chat --record FILE`` wrote over any file of that name: a typo
(``--record notes.txt``, ``--record README.md``, the tab-completed name of the
file beside it) replaced the user's file with a recording, without a word. A
file that is there and is not a recording is now refused before anything
starts (exit 2, the file untouched, no request sent); an earlier recording
is still recorded over, as the README says, and so is an empty file."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamtools.cli import main
from streamtools.model import TextChunk
from streamtools.runtime.recording import load
from streamtools.testing import FakeServer


def _chat(server: FakeServer, path: Path) -> int:
    argv = ["chat", "--base-url", server.base_url, "--model", "m", "--record", str(path)]
    return main([*argv, "hi"])


def test_a_file_that_is_not_a_recording_is_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    with FakeServer(["Hello."]) as server:
        assert _chat(server, notes) == 2
        sent = len(server.requests)
    assert notes.read_text() == "my notes\n"
    assert sent == 0
    err = capsys.readouterr().err
    assert f"{notes} is not a streamtools recording" in err and "--record" in err


def test_an_earlier_recording_is_recorded_over(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    with FakeServer(["First."]) as server:
        assert _chat(server, path) == 0
    with FakeServer(["Second."]) as server:
        assert _chat(server, path) == 0
    [segment] = load(path)
    text = "".join(t.chunk.text for t in segment.chunks if isinstance(t.chunk, TextChunk))
    assert text == "Second."


@pytest.mark.parametrize("content", ["", None])
def test_an_empty_or_missing_file_is_recorded(tmp_path: Path, content: str | None) -> None:
    path = tmp_path / "new.jsonl"
    if content is not None:
        path.write_text(content)
    with FakeServer(["Hello."]) as server:
        assert _chat(server, path) == 0
    assert len(load(path)) == 1
