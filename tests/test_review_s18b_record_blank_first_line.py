"""``refuse_overwrite`` (bc0881f, 43da7c6) took a file whose FIRST LINE is blank
for an empty file and let ``record()`` / ``chat --record`` write over it: a
Markdown or Python file, notes, that begins with a blank line was replaced by a
recording without a word. A recording's first line is its header, so a file
with anything after a blank first line is not one, and is refused; a file of
whitespace only is still empty."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamtools.errors import UsageError
from streamtools.runtime import record
from streamtools.runtime.recording import refuse_overwrite
from streamtools.testing import ScriptedModel


@pytest.mark.parametrize("content", [b"\nmy notes\n", b"\r\n\r\n# Title\n", b"  \n\n{}"])
def test_a_file_beginning_with_a_blank_line_is_refused(tmp_path: Path, content: bytes) -> None:
    notes = tmp_path / "notes.md"
    notes.write_bytes(content)
    model = ScriptedModel(["Hello."])
    with pytest.raises(UsageError, match="is not a streamtools recording"):
        record(model, notes)
    assert notes.read_bytes() == content
    assert model.requests == []


@pytest.mark.parametrize("content", [b"", b"\n", b" \n\n\t\n"])
def test_a_file_of_whitespace_only_is_empty(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(content)
    refuse_overwrite(path)  # nothing to say: written over
