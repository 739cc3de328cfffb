"""Every name a README example imports exists, in the examples the tests do not
run too. ``tests/test_readme.py`` skips the blocks marked ``not run by tests``
(they need a live model server, npx, or are fragments), so an example there
importing a name that moved or was renamed passed while a user who copied it
got an ImportError on its first line. Here only the imports of every block run."""

from __future__ import annotations

import ast
import re
import subprocess
import sys

from test_readme_cli import README

_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def import_lines(code: str) -> str:
    """The block's import statements alone, as code."""
    tree = ast.parse(code)
    kept = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    return "\n".join(ast.unparse(node) for node in kept)


def _blocks() -> list[tuple[int, str]]:
    text = README.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start()) + 1, import_lines(m.group(1)))
        for m in _BLOCK.finditer(text)
    ]


BLOCKS = [(line, imports) for line, imports in _blocks() if imports]


def test_the_blocks_not_run_are_among_them() -> None:
    imported = "\n".join(imports for _, imports in BLOCKS)
    assert "from openai import OpenAI" in imported  # the proxy's client, not run
    assert "from streamtools.mcp import mcp_tools" in imported  # needs npx, not run


def test_every_import_of_every_example_works() -> None:
    script = "\n".join(f"# README line {line}\n{imports}" for line, imports in BLOCKS)
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr


def test_a_missing_name_fails_here() -> None:
    assert import_lines("import anyio\nx = 1\nfrom a.b import c\n") == (
        "import anyio\nfrom a.b import c"
    )
    proc = subprocess.run(
        [sys.executable, "-c", import_lines("from streamtools.runtime import NoSuchName")],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode != 0 and "NoSuchName" in proc.stderr

