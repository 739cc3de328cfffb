"""``streamtools demo --fixture FILE`` of a recording of one's own agent (the
README's ``record()`` example with its ``add`` tool) is refused, as it calls
tools the demo does not have; the message said only that, and how to print
the events. The way to watch such a recording streamed with its own tools
running is ``streamtools ui --tools MODULE:ATTRIBUTE --fixture FILE``, which
the message now names, and which plays it."""

from __future__ import annotations

import argparse
from pathlib import Path

import anyio
import pytest

from streamtools.cli import main, ui
from streamtools.runtime import Agent, record
from streamtools.testing import ScriptedModel
from streamtools.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _recorded(path: Path) -> Path:
    async def run() -> None:
        model = ScriptedModel(['<am:tool_call name="add"><a>2</a><b>3</b></am:tool_call>', "5"])
        await Agent(record(model, path), [add]).run("What is 2 + 3?")

    anyio.run(run)
    return path


def test_the_refusal_names_the_page_that_plays_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _recorded(tmp_path / "mine.jsonl")
    assert main(["demo", "--instant", "--fixture", str(path)]) == 2
    err = capsys.readouterr().err
    assert "calls tools the demo does not have (add)" in err
    assert f"streamtools ui --tools MODULE:ATTRIBUTE --fixture {path}" in err


def test_the_page_named_plays_it_with_those_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _recorded(tmp_path / "mine.jsonl")
    (tmp_path / "s18_adder.py").write_text(
        "from streamtools.tools import tool\n\n\n@tool\n"
        "def add(a: int, b: int) -> int:\n    '''Add.'''\n    return a + b\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    parser = argparse.ArgumentParser()
    ui.register(parser.add_subparsers())
    args = parser.parse_args(["ui", "--tools", "s18_adder:add", "--fixture", str(path)])
    _source, subtitle, suggestion = ui.build_source(args)
    assert suggestion == "What is 2 + 3?" and "mine.jsonl" in subtitle
