"""The README's Python examples run as written.

Every ```python block is executed in a fresh interpreter, in a temporary
directory, except those right after a ``<!-- not run by tests: why -->`` line
(they need a live model server or are fragments).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
_BLOCK = re.compile(r"(<!-- not run by tests: [^>]*-->\n)?```python\n(.*?)```", re.S)


def _blocks() -> list[tuple[int, str]]:
    text = README.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start()) + 1, m.group(2))
        for m in _BLOCK.finditer(text)
        if m.group(1) is None
    ]


BLOCKS = _blocks()


def test_the_readme_has_runnable_examples() -> None:
    assert len(BLOCKS) >= 6


@pytest.mark.parametrize(("line", "code"), BLOCKS, ids=[f"line{n}" for n, _ in BLOCKS])
def test_readme_example_runs(line: int, code: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, f"README line {line}:\n{proc.stderr}"
