"""``streamtools replay FILE`` (and ``demo --fixture FILE``) of an empty file:
what ``streamtools chat --record FILE`` leaves when the session ended before
its first question. It was called "not a streamtools recording", which reads
as the wrong kind of file, where it is the right one with nothing in it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("command", [["replay"], ["demo", "--instant", "--fixture"]])
def test_an_empty_recording_is_said_to_be_empty(command: list[str], tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    # a chat --record session left at once (stdin at its end): the file, empty
    chat = [sys.executable, "-m", "streamtools", "chat", "--model", "m"]
    chat += ["--base-url", "http://127.0.0.1:9/v1", "--record", str(path)]
    left = subprocess.run(chat, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    assert left.returncode == 0 and path.read_bytes() == b""
    proc = subprocess.run(
        [sys.executable, "-m", "streamtools", *command, str(path)],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.endswith(f"error: {path} is empty: no model call was recorded in it\n")
