"""``streamtools ui --help`` listed ``--tool-timeout`` under the live model's
options, though it bounds the offline replay's tools too: it is among the
options of either model now (chat keeps it with its model options)."""

from __future__ import annotations

import argparse
import re

from streamtools.cli.chat import register as register_chat
from streamtools.cli.ui import register


def _parser() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    register(subparsers)
    return parser, subparsers.choices["ui"]


def _sections(help_text: str) -> dict[str, str]:
    """The help's option groups by title (a line ending in ':' at the margin)."""
    parts = re.split(r"^(\S[^\n]*):\n", help_text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_tool_timeout_is_not_shown_as_the_live_models_alone() -> None:
    _, ui = _parser()
    sections = _sections(ui.format_help())
    live = [body for title, body in sections.items() if title.startswith("live model")]
    assert len(live) == 1 and "--model" in live[0]
    assert "--tool-timeout" not in live[0]
    assert any("--tool-timeout" in body for body in sections.values())
    parser, _ = _parser()
    assert parser.parse_args(["ui", "--tool-timeout", "5"]).tool_timeout == 5


def test_chat_keeps_tool_timeout_with_its_model_options() -> None:
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    register_chat(subparsers)
    args = subparsers.choices["chat"].parse_args(["--model", "m", "--tool-timeout", "7"])
    assert args.tool_timeout == 7
