"""``streamtools ui --fixture FILE`` refuses a recording that calls tools the
page does not have, as ``streamtools demo`` does: the README's ``record()``
example with its ``add`` tool was served, and each ``add`` call showed as
"Unknown tool `add`" and a repair, neither of which had happened."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from streamtools.cli import ui
from streamtools.errors import UsageError
from streamtools.runtime import Agent, record
from streamtools.testing import ScriptedModel
from streamtools.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


CALL = '<am:tool_call name="add"><a>2</a><b>3</b></am:tool_call>'


def _recorded(path: Path) -> Path:
    async def run() -> None:
        model = ScriptedModel([CALL, "5"])
        await Agent(record(model, path), [add]).run("What is 2 + 3?")

    anyio.run(run)
    return path


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    ui.register(parser.add_subparsers())
    return parser.parse_args(["ui", *argv])


def test_a_recording_calling_tools_the_page_has_not_is_refused(tmp_path: Path) -> None:
    path = _recorded(tmp_path / "add.jsonl")
    with pytest.raises(UsageError) as caught:
        ui.build_source(_args("--fixture", str(path)))
    message = str(caught.value)
    assert "calls tools the page would not have (add)" in message
    assert "the offline replay runs only calculator, clock" in message
    assert f"streamtools replay {path}" in message


def test_it_plays_when_tools_give_the_page_the_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--tools`` naming the recording's own tools: nothing is foreign."""
    path = _recorded(tmp_path / "add.jsonl")
    (tmp_path / "s17b_adder.py").write_text(
        "from streamtools.tools import tool\n\n\n@tool\n"
        "def add(a: int, b: int) -> int:\n    '''Add.'''\n    return a + b\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    source, subtitle, suggestion = ui.build_source(
        _args("--fixture", str(path), "--tools", "s17b_adder:add")
    )
    assert suggestion == "What is 2 + 3?"
    assert "add.jsonl" in subtitle


def test_the_demo_recording_still_plays() -> None:
    source, subtitle, suggestion = ui.build_source(_args())
    assert suggestion and "demo.jsonl" in subtitle


def test_the_command_exits_2_before_serving(tmp_path: Path) -> None:
    path = _recorded(tmp_path / "add.jsonl")
    proc = subprocess.run(
        [sys.executable, "-m", "streamtools", "ui", "--port", "0", "--fixture", str(path)],
        capture_output=True, text=True, timeout=30,
    )
    assert proc.returncode == 2
    assert "serving on" not in proc.stdout
    assert "calls tools the page would not have (add)" in proc.stderr


def _ui_with_mcp(path: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``streamtools ui --fixture PATH --mcp`` of a server whose one tool is ``hello``."""
    (tmp_path / "s17b_hello.py").write_text(
        "from streamtools.tools import tool\n\n\n@tool\n"
        "def hello() -> str:\n    '''Greet.'''\n    return 'hi'\n"
    )
    server = f"{sys.executable} -m streamtools.mcp s17b_hello:hello"
    argv = [sys.executable, "-m", "streamtools", "ui", "--port", "0", "--instant"]
    return subprocess.run(
        [*argv, "--fixture", str(path), "--mcp", server],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )


def test_with_mcp_it_is_refused_once_the_servers_tools_are_known(tmp_path: Path) -> None:
    proc = _ui_with_mcp(_recorded(tmp_path / "add.jsonl"), tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "serving on" not in proc.stdout
    assert "calls tools the page would not have (add)" in proc.stderr
    assert "runs only calculator, clock, hello" in proc.stderr
    assert "Traceback" not in proc.stderr
