"""``streamtools chat`` and ``ui`` take ``--tool-timeout SECONDS``: the agent's
tool timeout was fixed at its 30 s default, and a slow MCP tool could not be
given more."""

from __future__ import annotations

import argparse
from typing import Any

import anyio
import pytest

from streamtools.cli import chat, ui
from streamtools.cli.model_options import make_agent
from streamtools.events import ToolFailed
from streamtools.testing import ScriptedModel
from streamtools.tools import tool

pytestmark = pytest.mark.anyio


@tool
async def slow() -> str:
    """Answer after a while."""
    await anyio.sleep(5)
    return "late"


def _args(command: str, *argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    module: Any = chat if command == "chat" else ui
    module.register(parser.add_subparsers())
    args, unknown = parser.parse_known_args([command, *argv])
    assert unknown == []  # (an unknown flag is a SystemExit in parse_args)
    return args


@pytest.mark.parametrize("command", ["chat", "ui"])
async def test_the_flag_bounds_each_tool_call(command: str) -> None:
    args = _args(command, "--model", "m", "--tool-timeout", "0.2")
    model = ScriptedModel(['<am:tool_call name="slow"></am:tool_call>', "gave up"])
    agent = make_agent(model, args, [slow])
    failed: list[ToolFailed] = []
    with anyio.fail_after(4):  # the flag, not the tool's 5 s, ends the call
        async with agent.stream("Go") as events:
            async for event in events:
                if isinstance(event, ToolFailed):
                    failed.append(event)
    assert [(event.name, event.kind) for event in failed] == [("slow", "timeout")]


@pytest.mark.parametrize(("argv", "seconds"), [((), 30.0), (("--tool-timeout", "90"), 90.0)])
@pytest.mark.parametrize("command", ["chat", "ui"])
def test_default_and_given(command: str, argv: tuple[str, ...], seconds: float) -> None:
    args = _args(command, "--model", "m", *argv)
    assert make_agent(ScriptedModel(["x"]), args, [slow]).tool_timeout == seconds
    hybrid_args = _args(command, "--model", "m", "--hybrid", *argv)
    hybrid = make_agent(ScriptedModel(["x"]), hybrid_args, [slow])
    assert hybrid.agent_kwargs["tool_timeout"] == seconds


def test_the_offline_page_takes_it_too() -> None:
    """The replay's tools run live: the flag is the page's in either mode."""
    source, _, _ = ui.build_source(_args("ui", "--tool-timeout", "90"))
    assert source.make().tool_timeout == 90.0
