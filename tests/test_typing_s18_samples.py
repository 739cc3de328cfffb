"""User code as the README writes it type-checks under ``mypy --strict``, with
the precise types ``assert_type`` states (``tests/typing_samples``): a tool made
with ``@tool`` keeps its function's signature (calling it was ``Any``), event
unions narrow, ``run()`` returns a ``RunResult``."""

from __future__ import annotations

from pathlib import Path

import pytest

SAMPLES = Path(__file__).with_name("typing_samples")


def test_the_user_samples_pass_mypy_strict(tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api")
    files = sorted(str(path) for path in SAMPLES.glob("*.py"))
    assert len(files) >= 4
    out, err, status = api.run(
        ["--strict", "--no-error-summary", "--cache-dir", str(tmp_path / "cache"), *files]
    )
    assert (out, err, status) == ("", "", 0)
