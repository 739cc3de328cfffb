"""``--help`` states the default of every option that has one: ``streamtools
proxy --help`` gave ``--dialect``, ``--timeout`` and ``--workers`` without theirs,
``streamtools ui --help`` its ``--title`` and ``--log-level``, and
``python -m streamtools.mcp --help`` its ``--name`` and ``--path``."""

from __future__ import annotations

import argparse
import importlib

import pytest

from streamtools.cli import SUBCOMMANDS
from streamtools.mcp.__main__ import main as mcp_main


def _options(command: str) -> list[argparse.Action]:
    subparsers = argparse.ArgumentParser().add_subparsers()
    importlib.import_module(SUBCOMMANDS[command][0]).register(subparsers)
    return [
        action
        for action in subparsers.choices[command]._actions
        if action.option_strings and "--help" not in action.option_strings
    ]


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_every_option_with_a_default_states_it(command: str) -> None:
    """An option whose default is a value (not None, off, or empty: those mean
    "not given", and the help says what then) names it in its help."""
    unstated = [
        action.option_strings[0]
        for action in _options(command)
        if action.default not in (None, False, [], {}, argparse.SUPPRESS)
        and "default" not in (action.help or "")
    ]
    assert not unstated, f"streamtools {command} --help: defaults not stated: {unstated}"


def test_proxy_timeout_says_what_it_bounds() -> None:
    [timeout] = [a for a in _options("proxy") if "--timeout" in a.option_strings]
    assert "between two reads" in (timeout.help or "") and "default 120" in (timeout.help or "")


def test_the_mcp_server_states_its_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        mcp_main(["--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps the lines
    assert "server name shown to clients (default streamtools)" in text
    assert "HTTP path of the MCP endpoint (default /mcp)" in text
