"""The house rules CI enforces beyond behaviour: ruff and ``mypy --strict`` over the
package and the tests, and module sizes (core modules ~400 lines, none over 700).

They run inside pytest so that the one test command of the README (and ``.ci/run``)
checks them too.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean() -> None:
    if shutil.which("ruff") is None:
        pytest.skip("ruff is not installed (pip install -e '.[dev]')")
    proc = _run("ruff", "check", "streamtools", "tests", "bench")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_strict_is_clean() -> None:
    proc = _run(sys.executable, "-m", "mypy", "streamtools", "tests")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_no_module_over_700_lines() -> None:
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for path in (ROOT / "streamtools").rglob("*.py")
    }
    assert len(sizes) > 20
    assert {name: n for name, n in sizes.items() if n > 700} == {}
