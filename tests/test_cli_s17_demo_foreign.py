"""``streamtools demo --fixture FILE`` refuses a recording that calls tools the
demo does not have. It played one (the README's ``record()`` example with its
``add`` tool, a ``chat --record --mcp`` session) and showed each such call as
an unknown tool and a repair, neither of which had happened, then the
recording's answer as if the demo had earned it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from streamtools.cli.demo import DEMO_TOOLS, foreign_calls
from streamtools.model import CallChunk, FinishChunk
from streamtools.runtime import Agent, record
from streamtools.runtime.recording import load
from streamtools.testing import ScriptedModel
from streamtools.tools import tool

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


CALLS = {
    "am_xml": '<am:tool_call name="{name}"><a>2</a><b>3</b></am:tool_call>',
    "hermes": '<tool_call>{{"name": "{name}", "arguments": {{"a": 2, "b": 3}}}}</tool_call>',
    "json_action": '```json action\n{{"tool": "{name}", "parameters": {{"a": 2, "b": 3}}}}\n```',
    "inline_json": 'Adding. {{"tool": "{name}", "arguments": {{"a": 2, "b": 3}}}}',
    "command": '@tool {name} {{"a": 2, "b": 3}}',
    "json_object": (
        '{{"thought": "add", "action": {{"tool": "{name}", "args": {{"a": 2, "b": 3}}}}}}'
    ),
}


async def _recorded(path: Path, dialect: str, name: str = "add") -> None:
    model = ScriptedModel([CALLS[dialect].format(name=name), '{"final": {"content": "5"}}'])
    await Agent(record(model, path), [add], dialect=dialect).run("What is 2 + 3?")


@pytest.mark.parametrize("dialect", sorted(CALLS))
async def test_a_recording_calling_its_own_tools_is_refused(dialect: str, tmp_path: Path) -> None:
    path = tmp_path / f"{dialect}.jsonl"
    await _recorded(path, dialect)
    assert foreign_calls(load(path)) == ["add"]


async def test_native_calls_of_its_own_tools_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "native.jsonl"
    call = CallChunk(index=0, id="c1", name="add", arguments='{"a": 2, "b": 3}', done=True)
    model = ScriptedModel([[call, FinishChunk(reason="tool_calls")], "5"])
    await Agent(record(model, path), [add], native=True).run("What is 2 + 3?")
    assert foreign_calls(load(path)) == ["add"]


async def test_the_demo_s_own_tools_and_an_invented_one_play(tmp_path: Path) -> None:
    """A call of a tool the recording never offered (a model's invention) was
    answered "unknown tool" when it was recorded too: that recording plays true."""
    path = tmp_path / "ours.jsonl"
    calculator = '<am:tool_call name="calculator"><expression>2+3</expression></am:tool_call>'
    invented = '<am:tool_call name="web_search"><q>2+3</q></am:tool_call>'
    model = ScriptedModel([calculator, invented, "5"])
    await Agent(record(model, path), DEMO_TOOLS).run("What is 2 + 3?")
    assert foreign_calls(load(path)) == []
    assert foreign_calls(load(Path(__file__).parent.parent / "fixtures" / "demo.jsonl")) == []


def test_the_command_says_why_and_what_to_run_instead(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    anyio.run(_recorded, path, "am_xml")
    proc = subprocess.run(
        [sys.executable, "-m", "streamtools", "demo", "--instant", "--fixture", str(path)],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""  # refused before anything is played
    assert "calls tools the demo does not have (add)" in proc.stderr
    assert f"streamtools replay {path}" in proc.stderr
