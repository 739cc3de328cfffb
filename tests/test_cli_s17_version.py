"""``streamtools --version`` was an unknown argument (exit 2): the first thing a
bug report asks for had no answer but ``pip show``."""

from __future__ import annotations

import subprocess
import sys

import pytest

import streamtools
from streamtools.cli import main


def test_version_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"streamtools {streamtools.__version__}\n"


def test_the_program_prints_it() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "streamtools", "--version"],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0 and proc.stdout.strip() == f"streamtools {streamtools.__version__}"
