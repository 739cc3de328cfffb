"""``streamtools chat`` shows a running tool's progress (``ToolProgress``).

Nothing showed it: a long MCP build sat on its call line until its result.
On a terminal the console draws it as a status line redrawn in place (a
carriage return and an erase), erased before anything else is written, so the
call's result takes its place; where nothing can be redrawn (a pipe, a file)
each report is a plain line, unless it repeats the last.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from streamtools.cli import main
from streamtools.events import CallEnd, CallStart, Event, TextDelta, ToolProgress, ToolResult
from streamtools.runtime.console import ConsoleRenderer
from streamtools.testing import FakeServer

ERASE = "\r\x1b[K"


def screen(written: str) -> list[str]:
    """What a terminal shows for ``written`` (carriage returns and erase-to-end only)."""
    lines = [""]
    for piece in re.split(r"(\r\x1b\[K|\n)", written):
        if piece == ERASE:
            lines[-1] = ""
        elif piece == "\n":
            lines.append("")
        else:
            lines[-1] += piece
    return lines


def _progress(progress: float, total: float | None = None, message: str | None = None) -> Event:
    return ToolProgress(
        index=0, id="c1", name="build", progress=progress, total=total, message=message
    )


CALL: list[Event] = [
    CallStart(index=0, id="c1", name="build"),
    CallEnd(index=0, id="c1", name="build", arguments={}, raw=""),
]
RESULT = ToolResult(index=0, id="c1", name="build", content="built")


def _render(events: list[Event], *, live: bool) -> str:
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", newline="")
    view = ConsoleRenderer(out, color=False, live=live)
    for event in events:
        view.render(event)
    out.flush()
    return raw.getvalue().decode()


def test_on_a_terminal_progress_is_one_line_redrawn_then_replaced_by_the_result() -> None:
    progress = [_progress(1, 4, "compiling"), _progress(3, 4, "linking")]
    before_result = _render([*CALL, *progress], live=True)
    assert screen(before_result) == ["  → build ", "  … build: 3/4 (75%) linking"]
    written = _render([*CALL, *progress, RESULT], live=True)
    assert written.count(ERASE) == 2  # redrawn once, erased once
    assert screen(written) == ["  → build ", "  ← build: built", ""]


def test_a_report_while_the_model_writes_starts_its_own_line_and_goes() -> None:
    written = _render(
        [TextDelta(text="Building"), _progress(2), TextDelta(text=" now.")], live=True
    )
    assert screen(written) == ["Building", " now."]
    assert "build: 2" in written  # it was shown meanwhile


def test_a_status_line_never_wraps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    written = _render([*CALL, _progress(1, 2, "x" * 200)], live=True)
    assert len(screen(written)[-1]) == 39


def test_without_a_terminal_each_report_is_a_plain_line_once() -> None:
    progress = [_progress(1, 4), _progress(1, 4), _progress(2, None, "half")]
    written = _render([*CALL, *progress, RESULT], live=False)
    assert ERASE not in written
    assert written.splitlines() == [
        "  → build ",
        "  … build: 1/4 (25%)",
        "  … build: 2 half",
        "  ← build: built",
    ]


def test_a_pipe_is_not_live_and_a_dumb_terminal_neither(monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert not ConsoleRenderer(io.StringIO()).live
    monkeypatch.setenv("TERM", "xterm-256color")
    assert ConsoleRenderer(Terminal()).live
    monkeypatch.setenv("TERM", "dumb")
    assert not ConsoleRenderer(Terminal()).live


TOOLS = '''
import time

from streamtools import ToolRegistry, tool
from streamtools.runtime.progress import call_progress

@tool
def shout(text: str) -> str:
    """Say it loudly."""
    reporter = call_progress()
    assert reporter is not None
    reporter.report(1, 2, "taking a breath")
    time.sleep(0.05)
    return text.upper() + "!"

registry = ToolRegistry([shout])
'''
CALL_TEXT = '<am:tool_call name="shout"><text>hello</text></am:tool_call>'


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "s20_progress_tools.py").write_text(TOOLS)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "s20_progress_tools:registry"


def test_chat_shows_a_tool_s_progress(tools: str, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeServer([CALL_TEXT, "It said HELLO!"]) as server:
        argv = ["chat", "--base-url", server.base_url, "--model", "m", "--tools", tools]
        code = main([*argv, "--no-answer-only", "shout hello"])
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    shown = [n for n, line in enumerate(lines) if "shout: 1/2 (50%) taking a breath" in line]
    result = [n for n, line in enumerate(lines) if "shout: HELLO!" in line]
    assert len(shown) == 1 and len(result) == 1 and shown[0] < result[0], out


def test_answer_only_shows_progress_with_the_tools_at_work_on_stderr(
    tools: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeServer([CALL_TEXT, "It said HELLO!"]) as server:
        argv = ["chat", "--base-url", server.base_url, "--model", "m", "--tools", tools]
        code = main([*argv, "--answer-only", "shout hello"])
    captured = capsys.readouterr()
    assert code == 0 and captured.out == "It said HELLO!\n"
    assert "shout: 1/2 (50%) taking a breath" in captured.err
