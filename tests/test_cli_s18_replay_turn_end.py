"""``streamtools replay`` ended each model call with ``turn_end`` carrying the
call's finish reason (``stop``, ``length``), a word the agent never gives a
``TurnEnd``: its reasons are ``tool_calls``, ``retry``, ``final`` and
``error``, and ``--json`` is for programs that read the agent's events. The
replay's ``turn_end`` now says what the agent said for the recorded turn, read
from the call's events: the calls the reply made, a retry for a malformed call,
the answer otherwise, an error for a failed call."""

from __future__ import annotations

import io
import json
from pathlib import Path

import anyio

from streamtools.cli.replay import print_recording
from streamtools.events import TurnEnd
from streamtools.runtime import Agent, record
from streamtools.testing import ScriptedModel
from streamtools.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


CALL = '<am:tool_call name="add"><a>2</a><b>3</b></am:tool_call>'
BROKEN = '<am:tool_call name="add"><a>2</b></am:tool_call>'  # a mismatched tag


def _recorded(path: Path, *runs: list[str]) -> list[str]:
    """Record one run per reply list into ``path`` (one file, as a chat session
    is); the ``TurnEnd`` reasons the agent itself emitted, in order."""
    said: list[str] = []

    async def main() -> None:
        model = record(ScriptedModel([reply for run in runs for reply in run]), path)
        for _ in runs:
            async with Agent(model, [add]).stream("What is 2 + 3?") as events:
                async for event in events:
                    if isinstance(event, TurnEnd):
                        said.append(event.reason)

    anyio.run(main)
    return said


def _replayed(path: Path) -> list[str]:
    out = io.StringIO()
    print_recording(path, None, as_json=True, out=out)
    events: list[dict[str, object]] = [json.loads(line) for line in out.getvalue().splitlines()]
    return [str(e["reason"]) for e in events if e["type"] == "turn_end"]


def test_a_call_then_the_answer(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    said = _recorded(path, [CALL, "It is 5."])
    assert said == ["tool_calls", "final"]
    assert _replayed(path) == said


def test_a_malformed_call_asked_again(tmp_path: Path) -> None:
    path = tmp_path / "retry.jsonl"
    said = _recorded(path, [BROKEN, CALL, "It is 5."])
    assert said == ["retry", "tool_calls", "final"]
    assert _replayed(path) == said


def test_two_runs_in_one_file(tmp_path: Path) -> None:
    """A chat session's file: the first run's answer is final although a model
    call follows it (the next question's)."""
    path = tmp_path / "chat.jsonl"
    said = _recorded(path, ["Hello."], [CALL, "It is 5."])
    assert said == ["final", "tool_calls", "final"]
    assert _replayed(path) == said


def test_the_human_form_says_the_same(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    _recorded(path, [CALL, "It is 5."])
    out = io.StringIO()
    print_recording(path, None, as_json=False, out=out)
    ends = [line for line in out.getvalue().splitlines() if " turn_end " in line]
    assert [line.split("reason=")[1] for line in ends] == ['"tool_calls"', '"final"']

