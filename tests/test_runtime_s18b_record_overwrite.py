"""``record(model, path)`` in code wrote over any file of that name, where
``streamtools chat --record`` refuses one that is not a recording (bc0881f).
The same check (``refuse_overwrite``) refuses it now: a ``UsageError`` naming
the file, before the model is asked, the file as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamtools.errors import UsageError
from streamtools.model import TextChunk
from streamtools.runtime import Agent, record
from streamtools.runtime.recording import load
from streamtools.testing import ScriptedModel

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "content",
    [b"my notes\n", b"# README\n\nwords", b'{"type": "header"}\n', b"\xff\xfe binary"],
)
def test_a_file_that_is_not_a_recording_is_refused(tmp_path: Path, content: bytes) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_bytes(content)
    model = ScriptedModel(["Hello."])
    with pytest.raises(UsageError) as caught:
        record(model, notes)
    assert f"{notes} is not a streamtools recording" in str(caught.value)
    assert "record()" in str(caught.value)
    assert notes.read_bytes() == content
    assert model.requests == []


async def test_an_earlier_recording_or_an_empty_file_is_recorded_over(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text("")
    for reply in ("First.", "Second."):
        model = record(ScriptedModel([reply]), path)
        assert (await Agent(model).run("hi")).text == reply
    [segment] = load(path)
    text = "".join(t.chunk.text for t in segment.chunks if isinstance(t.chunk, TextChunk))
    assert text == "Second."
