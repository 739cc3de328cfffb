"""``python -m streamtools.mcp`` without the ``mcp`` extra: the install line and
exit status 2, as the ``streamtools`` commands give, not a traceback (the
README's quick start promises it of every command). The package is imported
before its ``__main__``, so the check is in ``streamtools/mcp/__init__.py``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# shadows the SDK: importing it fails as a missing package does
_NO_SDK = 'raise ModuleNotFoundError("No module named \'mcp\'", name="mcp")\n'


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "mcp").mkdir()
    (tmp_path / "mcp" / "__init__.py").write_text(_NO_SDK)
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )


def test_python_m_without_the_sdk_says_what_to_install(tmp_path: Path) -> None:
    done = _run(tmp_path, "-m", "streamtools.mcp", "notes_tools:registry")
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(
        "python -m streamtools.mcp: error: missing optional dependency 'mcp' "
        "(the 'mcp' extra); install it with: pip install "
    ), line
    assert "streamtools[mcp]" not in line  # never PyPI's project of that name


def test_an_import_without_the_sdk_still_raises(tmp_path: Path) -> None:
    # a program that makes MCP optional catches the import error: no exit for it
    code = (
        "try:\n    import streamtools.mcp\n"
        "except ModuleNotFoundError as exc:\n    print('caught', exc.name)\n"
    )
    done = _run(tmp_path, "-c", code)
    assert (done.returncode, done.stdout) == (0, "caught mcp\n"), done.stderr


def test_with_the_sdk_the_command_runs() -> None:
    args = ["-m", "streamtools.mcp", "--help"]
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("usage: python -m streamtools.mcp")
