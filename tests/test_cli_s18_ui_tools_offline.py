"""``streamtools ui --tools module:attribute`` with no ``--model``: the offline
page replays the demo recording, whose calls are to ``calculator`` and
``clock``; ``--tools`` replaces those, so every call of the demo showed as
"Unknown tool `calculator`" and a repair that never happened, on a page the
user had started to see their own tools. It is refused now, before serving,
with what to give instead (a live model or a recording of those tools)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from streamtools.cli import ui
from streamtools.errors import UsageError


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    ui.register(parser.add_subparsers())
    return parser.parse_args(["ui", *argv])


def _module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, body: str) -> None:
    (tmp_path / f"{name}.py").write_text("from streamtools.tools import tool\n\n\n" + body)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))


def test_tools_of_your_own_on_the_demo_replay_are_refused_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _module(
        tmp_path, monkeypatch, "s18_weather",
        "@tool\ndef get_weather(city: str) -> str:\n    '''Weather.'''\n    return city\n",
    )
    with pytest.raises(UsageError) as caught:
        ui.build_source(_args("--tools", "s18_weather:get_weather"))
    message = str(caught.value)
    assert "calls tools the page would not have (calculator, clock)" in message
    assert "--tools s18_weather:get_weather gives only get_weather" in message
    assert "--model" in message and "--fixture" in message


def test_tools_that_include_the_demos_own_still_play_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _module(
        tmp_path, monkeypatch, "s18_demo_too",
        "from streamtools.cli.demo import DEMO_TOOLS\n\n"
        "@tool\ndef get_weather(city: str) -> str:\n    '''Weather.'''\n    return city\n\n"
        "TOOLS = [*DEMO_TOOLS, get_weather]\n",
    )
    source, subtitle, suggestion = ui.build_source(_args("--tools", "s18_demo_too:TOOLS"))
    assert suggestion and "demo.jsonl" in subtitle


def test_a_live_model_with_tools_of_your_own_is_not_affected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _module(
        tmp_path, monkeypatch, "s18_weather_live",
        "@tool\ndef get_weather(city: str) -> str:\n    '''Weather.'''\n    return city\n",
    )
    source, subtitle, suggestion = ui.build_source(
        _args("--tools", "s18_weather_live:get_weather", "--model", "m",
              "--base-url", "http://127.0.0.1:9/v1")
    )
    assert suggestion is None and subtitle.startswith("m at http://127.0.0.1:9/v1")


def test_with_mcp_it_is_refused_once_the_servers_tools_are_known(tmp_path: Path) -> None:
    """With ``--mcp`` the check waits for the servers' tools (they might be the
    demo's); ``hello`` is not, so the command exits 2 before serving."""
    (tmp_path / "s18_hello.py").write_text(
        "from streamtools.tools import tool\n\n\n@tool\n"
        "def hello() -> str:\n    '''Greet.'''\n    return 'hi'\n"
    )
    server = f"{sys.executable} -m streamtools.mcp s18_hello:hello"
    proc = subprocess.run(
        [sys.executable, "-m", "streamtools", "ui", "--port", "0", "--instant",
         "--tools", "s18_hello:hello", "--mcp", f"m={server}"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )
    assert proc.returncode == 2, proc.stderr
    assert "serving on" not in proc.stdout
    assert "calls tools the page would not have (calculator, clock)" in proc.stderr
    assert "gives only hello, m.hello" in proc.stderr and "--model NAME" in proc.stderr
    assert "Traceback" not in proc.stderr
