"""``streamtools CMD --help`` explains every option: a flag listed with no
words (``--color {auto,always,never}`` alone) leaves a user to guess what it
does and what its default is."""

from __future__ import annotations

import argparse
import importlib

import pytest

from streamtools.cli import SUBCOMMANDS


def _actions(command: str) -> list[argparse.Action]:
    subparsers = argparse.ArgumentParser().add_subparsers()
    importlib.import_module(SUBCOMMANDS[command][0]).register(subparsers)
    return [
        action
        for action in subparsers.choices[command]._actions
        if action.help != argparse.SUPPRESS and "--help" not in action.option_strings
    ]


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_every_option_says_what_it_does(command: str) -> None:
    silent = [
        action.option_strings[0] if action.option_strings else action.dest
        for action in _actions(command)
        if not (action.help or "").strip()
    ]
    assert not silent, f"streamtools {command} --help: options with no help text: {silent}"


@pytest.mark.parametrize("command", ["chat", "ui"])
def test_timeout_says_what_it_bounds(command: str) -> None:
    """``--timeout`` read "seconds (default 120)": a user could not tell a bound
    on the whole answer (which it is not) from the wait for each read."""
    [timeout] = [a for a in _actions(command) if "--timeout" in a.option_strings]
    assert "read" in (timeout.help or "") and "120" in (timeout.help or "")


@pytest.mark.parametrize("command", ["chat", "ui"])
def test_system_says_what_it_replaces(command: str) -> None:
    """``--system`` read "system prompt" in chat: a user could not know that it
    replaces the default one, which tells the model to use the example tools."""
    [system] = [a for a in _actions(command) if "--system" in a.option_strings]
    assert "(default:" in (system.help or "")
