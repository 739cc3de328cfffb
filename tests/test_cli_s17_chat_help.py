"""``/help`` in an interactive ``streamtools chat`` listed /reset and /quit but
not that Ctrl-C stops an answer in progress (and the session goes on), so a
user watching a long answer had only Ctrl-C-and-lose-the-session in mind. A
session without that (piped input, where Ctrl-C ends it) does not say it."""

from __future__ import annotations

import io

import pytest
from chat_support import reader

from streamtools.cli.chat import AnswerStopper, chat
from streamtools.testing import ScriptedModel

pytestmark = pytest.mark.anyio


async def _help(stopper: AnswerStopper | None) -> str:
    from streamtools.runtime import Agent

    out = io.StringIO()
    code = await chat(
        Agent(ScriptedModel([])), reader(["/help\n"]), out, color=False, prompt=False,
        stopper=stopper,
    )
    assert code == 0
    return out.getvalue()


async def test_help_says_ctrl_c_stops_an_answer_where_it_does() -> None:
    said = await _help(AnswerStopper())
    assert "/reset clears the conversation, /quit (or Ctrl-D) leaves" in said
    assert "Ctrl-C stops an answer in progress" in said


async def test_not_where_ctrl_c_ends_the_session() -> None:
    said = await _help(None)
    assert "/quit (or Ctrl-D) leaves" in said and "Ctrl-C" not in said
