"""What the README's Python examples say they print, they print.

``tests/test_readme.py`` runs every example and checks only that it exits 0,
so an example whose ``print(x)  # It is 5.`` now prints something else passed
while a user who copied it saw another output. Here a comment on a ``print``
line (and the comment lines right below one, for a longer output) is the
output that print shows: it must appear in what the example wrote, in order,
with ``...`` (or ``…``) standing for any text and runs of whitespace equal.
A comment that only describes the call goes on a line of its own above it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_readme import BLOCKS

_PRINT = re.compile(r"^\s*print\(.*\)\s*(?:#\s?(?P<said>.*))?$")
_COMMENT = re.compile(r"^\s*#\s?(?P<said>.*)$")


def claimed_outputs(code: str) -> list[str]:
    """The outputs the example's comments promise, in the order of its prints."""
    lines = code.splitlines()
    claims: list[str] = []
    for n, line in enumerate(lines):
        found = _PRINT.match(line)
        if found is None:
            continue
        said = [found["said"]] if found["said"] else []
        for below in lines[n + 1 :]:
            comment = _COMMENT.match(below)
            if comment is None:
                break
            said.append(comment["said"])
        if said:
            claims.append(" ".join(said))
    return claims


def _pattern(claim: str) -> re.Pattern[str]:
    parts = re.split(r"\.\.\.|…", claim.strip())
    words = [r"\s+".join(map(re.escape, part.split())) for part in parts]
    return re.compile(r".*?".join(words), re.S)


def find_claims(claims: list[str], output: str) -> list[str]:
    """The claims not found in ``output`` in order (empty: all are there)."""
    missing: list[str] = []
    at = 0
    for claim in claims:
        found = _pattern(claim).search(output, at)
        if found is None:
            missing.append(claim)
        else:
            at = found.end()
    return missing


CLAIMING = [(line, code) for line, code in BLOCKS if claimed_outputs(code)]


def test_some_examples_say_what_they_print() -> None:
    assert len(CLAIMING) >= 4


@pytest.mark.parametrize(("line", "code"), CLAIMING, ids=[f"line{n}" for n, _ in CLAIMING])
def test_readme_example_prints_what_it_says(line: int, code: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, f"README line {line}:\n{proc.stderr}"
    missing = find_claims(claimed_outputs(code), proc.stdout)
    assert not missing, f"README line {line} says it prints {missing}; it printed:\n{proc.stdout}"


def test_the_check_reads_claims_and_catches_a_wrong_one() -> None:
    code = 'print(1 + 1)  # 2\nprint("a b")\n# a\n#   b\nx = 1  # not a print\nprint(3)\n'
    assert claimed_outputs(code) == ["2", "a   b"]
    assert find_claims(["2", "a b"], "2\na b\n") == []
    assert find_claims(["2", "a b"], "3\na b\n") == ["2"]
    assert find_claims(["{'x': ...}"], "{'x': 1, 'y': 2}") == []
    assert find_claims(["b", "a"], "a b") == ["a"]  # in order
