"""``.ci/run`` runs the README's test command, fails when pytest collected no
tests (exit 5) and prints the total time.

The script runs in a copy of the repository's layout with stand-ins for the
commands it calls (pip, python, npm and, so that nothing is installed, chromium
and node): each writes the arguments it got, and the stand-in python exits with
the code the case asks for. The script had drifted from the README (``python -m
pip install -q ...``, ``pytest -q``) and printed no time."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
BASH = shutil.which("bash")

pytestmark = pytest.mark.skipif(BASH is None, reason="runs a bash script")


def readme_test_command() -> list[list[str]]:
    """The README's quick-start test command, the line commented ``# the tests``,
    as the argument lists of the commands it chains with ``&&``."""
    for line in (ROOT / "README.md").read_text().splitlines():
        if line.rstrip().endswith("# the tests"):
            command = line.split("#", 1)[0]
            return [shlex.split(part) for part in command.split("&&")]
    raise AssertionError("README has no quick-start line commented '# the tests'")


def run_ci(tmp_path: Path, pytest_exit: int) -> tuple[subprocess.CompletedProcess[str], Path]:
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    (repo / "tests" / "js").mkdir(parents=True)
    shutil.copy(ROOT / ".ci" / "run", repo / ".ci" / "run")
    fake = tmp_path / "bin"
    fake.mkdir()
    calls = tmp_path / "calls"
    for name, code in [("pip", 0), ("python", pytest_exit), ("npm", 0), ("chromium", 0),
                       ("node", 0)]:
        stand_in = fake / name
        stand_in.write_text(f'#!{BASH}\necho "{name} $*" >> "{calls}"\nexit {code}\n')
        stand_in.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}"}
    assert BASH is not None
    proc = subprocess.run(
        [BASH, str(repo / ".ci" / "run")], capture_output=True, text=True, env=env, timeout=60
    )
    return proc, calls


@pytest.mark.parametrize(("pytest_exit", "ci_exit"), [(0, 0), (1, 1), (5, 1)])
def test_ci_runs_the_readme_command_and_says_how_long_it_took(
    tmp_path: Path, pytest_exit: int, ci_exit: int
) -> None:
    proc, calls = run_ci(tmp_path, pytest_exit)
    assert proc.returncode == ci_exit, proc.stderr
    ran = [line.split() for line in calls.read_text().splitlines()]
    assert ran[0] == ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"]
    assert ran[1:] == readme_test_command()
    assert re.search(r"^CI: total time \d+ min \d+ s", proc.stdout, re.MULTILINE), proc.stdout
    assert ("collected no tests" in proc.stderr) == (pytest_exit == 5)
