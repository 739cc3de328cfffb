"""The command lines a user copies parse as written.

``tests/test_readme_cli.py`` compares the flags named in the README's prose
with each command's parser, leaving out the fenced blocks; a command line in
a ```bash block (or after ``$`` in a ```console one) with a misspelt flag, a
value a flag refuses or a missing required option passed. So did the examples
``streamtools chat --help`` ends with and those the demo prints last. Each
one is parsed here by the real parser (nothing is run)."""

from __future__ import annotations

import re
import shlex

import pytest
from test_readme_cli import README

from streamtools.cli import _build_parser
from streamtools.cli.chat import EXAMPLES
from streamtools.cli.demo import _footer
from streamtools.runtime.console import ConsoleRenderer

_FENCED = re.compile(r"^```(bash|console|sh|shell)\n(.*?)^```", re.S | re.M)


def command_lines(text: str, *, console: bool) -> list[str]:
    """The ``streamtools …`` commands in shell text: each line (after ``$ `` only,
    in a console transcript), split at ``&&`` and pipes."""
    found = []
    for line in text.splitlines():
        line = line.strip()
        if console:
            if not line.startswith("$ "):
                continue
            line = line[2:]
        for part in re.split(r"&&|\|", line):
            if part.strip().startswith("streamtools "):
                found.append(part.strip())
    return found


def _readme_commands() -> list[str]:
    text = README.read_text(encoding="utf-8")
    found = []
    for block in _FENCED.finditer(text):
        found += command_lines(block.group(2), console=block.group(1) == "console")
    return found


def _help_examples() -> list[str]:
    import io

    out = io.StringIO()
    _footer(ConsoleRenderer(out, color=False))
    shown = [line.split("  (")[0] for line in out.getvalue().splitlines()]
    return command_lines(EXAMPLES, console=False) + command_lines("\n".join(shown), console=False)


COMMANDS = _readme_commands() + _help_examples()


def test_the_commands_are_found() -> None:
    assert len(_readme_commands()) >= 8 and len(_help_examples()) >= 8
    assert "streamtools chat --provider anthropic --model claude-sonnet-4-6" in COMMANDS


@pytest.mark.parametrize("line", COMMANDS)
def test_the_command_parses(line: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = shlex.split(line, comments=True)[1:]
    try:
        _build_parser(argv).parse_args(argv)
    except SystemExit as exc:  # --help exits 0
        if exc.code:
            pytest.fail(f"{line!r} does not parse: {capsys.readouterr().err}")


def test_a_wrong_command_fails_here(capsys: pytest.CaptureFixture[str]) -> None:
    argv = shlex.split("streamtools chat --base-url localhost:11434 --model m")[1:]
    with pytest.raises(SystemExit):
        _build_parser(argv).parse_args(argv)
    assert command_lines("$ streamtools demo\nstreamtools ui: serving…", console=True) == [
        "streamtools demo"
    ]
