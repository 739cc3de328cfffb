"""``streamtools ui`` without ``--model`` or ``--fixture`` plays the demo's
recording, which calls ``calculator`` and ``clock`` whatever is typed. Given
more tools (``--tools`` with the demo's and others, or ``--mcp``'s servers),
the page offered them and the replay never called one, with nothing saying it
would not: the subtitle (on the page, and on the line that gives the URL)
now names the tools the replay calls and those it never will."""

from __future__ import annotations

import argparse
from pathlib import Path

import anyio
import pytest

from streamtools.cli import ui


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    ui.register(parser.add_subparsers())
    return parser.parse_args(["ui", *argv])


PLAIN = "offline: a replay of demo.jsonl (tools run live); it answers the recorded question"


def test_the_demo_alone_is_said_as_before() -> None:
    _source, subtitle, _suggestion = ui.build_source(_args("--instant"))
    assert subtitle == PLAIN


def test_tools_the_replay_never_calls_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "s18_note_tools.py").write_text(
        "from streamtools.cli.demo import DEMO_TOOLS\nfrom streamtools.tools import tool\n\n\n"
        "@tool\ndef get_weather(city: str) -> str:\n    '''Weather.'''\n    return city\n\n\n"
        "TOOLS = [*DEMO_TOOLS, get_weather]\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    _source, subtitle, _suggestion = ui.build_source(_args("--tools", "s18_note_tools:TOOLS"))
    assert subtitle == (
        PLAIN + ", calling calculator and clock only, never get_weather (a live model: --model)"
    )


def test_an_mcp_servers_tools_are_said_to_be_never_called() -> None:
    # the servers load later (``_run``); build_source only reads the command line
    _source, subtitle, _suggestion = ui.build_source(_args("--mcp", "some-server"))
    assert subtitle == (
        PLAIN + ", calling calculator and clock only, never the MCP servers' tools "
        "(a live model: --model)"
    )


def test_a_recording_that_calls_nothing_says_so(tmp_path: Path) -> None:
    from streamtools.runtime import Agent, record
    from streamtools.testing import ScriptedModel

    path = tmp_path / "chat.jsonl"

    async def chat() -> None:
        agent = Agent(record(ScriptedModel(["Hello there."]), path), [])
        await agent.run("hi")

    anyio.run(chat)
    _source, subtitle, _suggestion = ui.build_source(_args("--fixture", str(path)))
    assert subtitle == (
        "offline: a replay of chat.jsonl (tools run live); it answers the recorded question, "
        "calling no tool, never calculator, clock (a live model: --model)"
    )
