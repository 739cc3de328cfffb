"""The README's account of each command's flags matches the command line.

Each subcommand's section names every flag its parser has (in a code span),
and names no flag the parser lacks: a flag documented but gone, or added but
never documented, fails here.
"""

from __future__ import annotations

import argparse
import importlib
import re
from pathlib import Path

import pytest

from streamtools.cli import SUBCOMMANDS

README = Path(__file__).resolve().parent.parent / "README.md"

# the README's section for each command: from its heading up to the next heading named
SECTIONS = {
    "demo": ("## See it run", "## An agent in ten lines"),
    "replay": ("## See it run", "## An agent in ten lines"),
    "chat": ("### `streamtools chat`", "### Providers in code"),
    "proxy": ("## The proxy", "## Serving an agent"),
    "ui": ("## Serving an agent", "## Tools from MCP servers"),
}
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_SPAN = re.compile(r"`([^`\n]+)`")
_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def _flags(command: str) -> set[str]:
    subparsers = argparse.ArgumentParser().add_subparsers()
    importlib.import_module(SUBCOMMANDS[command][0]).register(subparsers)
    sub = subparsers.choices[command]
    return {
        option
        for action in sub._actions
        if action.help != argparse.SUPPRESS
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    }


def _documented(command: str) -> set[str]:
    text = README.read_text(encoding="utf-8")
    start, end = SECTIONS[command]
    section = text[text.index(start) : text.index(end, text.index(start))]
    prose = _FENCE.sub("", section)
    return {flag for span in _SPAN.findall(prose) for flag in _FLAG.findall(span)}


@pytest.mark.parametrize("command", sorted(SECTIONS))
def test_every_flag_is_documented(command: str) -> None:
    missing = _flags(command) - _documented(command)
    assert not missing, f"streamtools {command}: flags the README does not name: {missing}"


@pytest.mark.parametrize("command", ["chat", "proxy", "ui"])
def test_every_documented_flag_exists(command: str) -> None:
    # the flags of other programs the sections name (servers, SDKs)
    others = {"--reasoning-parser"}
    unknown = _documented(command) - _flags(command) - others
    assert not unknown, f"streamtools {command}: the README names flags it lacks: {unknown}"
