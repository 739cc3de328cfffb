"""``streamtools demo --fixture FILE`` plays a ``streamtools chat --record``
session in the mode it was recorded in. It played every recording in
``am_xml``: a session recorded with ``--dialect hermes`` showed its call as
malformed (then a repair), one recorded with ``--native`` an empty reply
(then a repair), neither of which happened."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from chat_support import args_for, reader

from streamtools.cli.chat import build_model, chat, make_agent
from streamtools.cli.demo import play
from streamtools.runtime import record
from streamtools.testing import FakeCall, FakeServer, Reply
from streamtools.testing.fake_server import ScriptItem

pytestmark = pytest.mark.anyio

QUESTION = "what is 2**10?"
EXPRESSION = {"expression": "2**10"}
CALLS: dict[str, ScriptItem] = {
    "am_xml": '<am:tool_call name="calculator"><expression>2**10</expression></am:tool_call>',
    "hermes": '<tool_call>{"name": "calculator", "arguments": {"expression": "2**10"}}</tool_call>',
    "json_action": (
        '```json action\n{"tool": "calculator", "parameters": {"expression": "2**10"}}\n```'
    ),
    "command": '@tool calculator {"expression": "2**10"}',
    "native": Reply(calls=(FakeCall(name="calculator", arguments=EXPRESSION),)),
    "hybrid": Reply(calls=(FakeCall(name="select_tools", arguments={"names": ["calculator"]}),)),
}


async def _chat_recorded(path: Path, mode: str) -> None:
    """``streamtools chat --record`` in ``mode``, against a fake server."""
    flags = (f"--{mode}",) if mode in ("native", "hybrid") else ("--dialect", mode)
    replies = [CALLS[mode], "It is 1024."]
    if mode == "hybrid":  # the tools selected, then the call in am_xml
        replies.insert(1, CALLS["am_xml"])
    async with FakeServer(replies) as server:
        args = args_for(server, *flags)
        agent = make_agent(record(build_model(args), path), args)
        said = io.StringIO()
        code = await chat(agent, reader([QUESTION + "\n"]), said, color=False, prompt=False)
    assert code == 0


@pytest.mark.parametrize("mode", sorted(CALLS))
async def test_a_chat_recording_plays_as_it_was_recorded(
    tmp_path: Path, mode: str, anyio_backend: str
) -> None:
    path = tmp_path / f"{mode}.jsonl"
    await _chat_recorded(path, mode)
    out = io.StringIO()
    result = await play(path, speed=None, out=out, color=False)
    shown = out.getvalue()
    assert result.text == "It is 1024.", shown
    # the call's turn, the answer's (and the hybrid's selection): no repair between
    assert result.turns == (3 if mode == "hybrid" else 2)
    assert "calculator: 1024" in shown, shown  # the tool ran on the recorded call
    assert "malformed" not in shown and "asking the model again" not in shown, shown
    assert QUESTION in shown


async def test_a_session_of_several_questions_says_what_was_not_played(
    tmp_path: Path, anyio_backend: str
) -> None:
    """The demo plays the first question's answer; the rest of a two-question
    session was left out without a word."""
    path = tmp_path / "two.jsonl"
    async with FakeServer([CALLS["am_xml"], "It is 1024.", "Bye."]) as server:
        args = args_for(server)
        agent = make_agent(record(build_model(args), path), args)
        lines = [QUESTION + "\n", "thanks\n"]
        code = await chat(agent, reader(lines), io.StringIO(), color=False, prompt=False)
    assert code == 0
    out = io.StringIO()
    result = await play(path, speed=None, out=out, color=False)
    assert result.text == "It is 1024."
    said = "(the recording holds 1 more model call after this answer; streamtools replay"
    assert f"{said} {path} prints them all)" in out.getvalue()
    # a session of one question says nothing more
    single = tmp_path / "am_xml.jsonl"
    await _chat_recorded(single, "am_xml")
    out = io.StringIO()
    await play(single, speed=None, out=out, color=False)
    assert "the recording holds" not in out.getvalue()
