"""``streamtools.__all__`` names exactly what the package exports, and the CLI dispatches."""

from __future__ import annotations

import subprocess
import sys

import pytest

import streamtools
from streamtools.cli import SUBCOMMANDS, main


def test_all_names_exist_and_are_unique() -> None:
    assert len(streamtools.__all__) == len(set(streamtools.__all__))
    missing = [name for name in streamtools.__all__ if not hasattr(streamtools, name)]
    assert missing == []


def test_every_public_class_is_listed() -> None:
    public = {
        name
        for name, value in vars(streamtools).items()
        if not name.startswith("_") and isinstance(value, type)
    }
    assert public - set(streamtools.__all__) == set()


def test_cli_without_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    out = capsys.readouterr().out
    for name in SUBCOMMANDS:
        assert name in out


def test_cli_runs_as_module() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "streamtools", "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0
    assert "demo" in proc.stdout


def test_importing_streamtools_needs_no_optional_extra() -> None:
    code = (
        "import sys, streamtools; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'starlette', 'uvicorn', 'mcp'}))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
