"""``Replay``'s first failures in a user's own tests, said with what to do.

``Replay("session.jsonl")`` under pytest reads the file from the directory pytest
was started from, and said only ``[Errno 2] No such file or directory:
'session.jsonl'``, with nothing to say where it looked nor how to name a file
beside the test. With ``match_requests=True``, an agent made without the
``stop_at_call=True`` a recording was made with (``streamtools chat`` records
so) was told only ``request.stop: 1 recorded, 0 sent``, where the README says
what it means."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from streamtools.errors import UsageError
from streamtools.runtime import Agent, Replay, record
from streamtools.testing import ScriptedModel
from streamtools.tools import tool

CALL = '<am:tool_call name="add"><a>2</a><b>3</b></am:tool_call>'


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_a_missing_relative_recording_names_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError) as caught:
        Replay(Path("tests") / "session.jsonl")
    message = str(caught.value)
    assert f"no recording at {tmp_path / 'tests' / 'session.jsonl'}" in message
    assert f"the working directory, {tmp_path})" in message
    assert message.endswith("give Path(__file__).parent / 'tests/session.jsonl'")


def test_a_missing_absolute_recording_names_it(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as caught:
        Replay(tmp_path / "session.jsonl")
    assert str(caught.value) == f"Replay: no recording at {tmp_path / 'session.jsonl'}"


async def _refusal(tmp_path: Path, recorded: dict[str, Any], replayed: dict[str, Any]) -> str:
    """The message of replaying, with ``replayed`` options, a run made with ``recorded``."""
    path = tmp_path / "session.jsonl"
    await Agent(record(ScriptedModel([CALL, "5."]), path), [add], **recorded).run("2 + 3?")
    with pytest.raises(UsageError) as caught:
        await Agent(Replay(path, match_requests=True), [add], **replayed).run("2 + 3?")
    return str(caught.value)


@pytest.mark.anyio
async def test_a_stop_at_call_difference_says_so(tmp_path: Path) -> None:
    message = await _refusal(tmp_path, {"stop_at_call": True}, {})
    assert "(request.stop: 1 recorded, 0 sent; it was recorded with stop_at_call=True," in message
    assert "make the Agent with stop_at_call=True too)" in message
    message = await _refusal(tmp_path, {}, {"stop_at_call": True})
    assert "(request.stop: 0 recorded, 1 sent; it was recorded without stop_at_call: " in message
    message = await _refusal(tmp_path, {"stop": "END"}, {})  # the user's own: no such hint
    assert "(request.stop: 1 recorded, 0 sent); record it again" in message
