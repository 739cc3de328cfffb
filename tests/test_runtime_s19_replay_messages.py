"""``Replay``'s first failures in a user's own tests, said with what to do.

``Replay("session.jsonl")`` under pytest reads the file from the directory pytest
was started from, and said only ``[Errno 2] No such file or directory:
'session.jsonl'``, with nothing to say where it looked nor how to name a file
beside the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamtools.runtime import Replay


def test_a_missing_relative_recording_names_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError) as caught:
        Replay(Path("tests") / "session.jsonl")
    message = str(caught.value)
    assert f"no recording at {tmp_path / 'tests' / 'session.jsonl'}" in message
    assert f"the working directory, {tmp_path})" in message
    assert message.endswith("give Path(__file__).parent / 'tests/session.jsonl'")


def test_a_missing_absolute_recording_names_it(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as caught:
        Replay(tmp_path / "session.jsonl")
    assert str(caught.value) == f"Replay: no recording at {tmp_path / 'session.jsonl'}"
