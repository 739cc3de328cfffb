"""A ``streamtools chat`` session fed from a pipe (``< questions.txt``) writes
each question into its transcript after ``you ›``, but a command's line was not
written: the saved session showed ``(conversation cleared)`` or the ``/help``
text out of nowhere, with nothing to say which line it answered. Each command
line is now written as a question is, before what it answers."""

from __future__ import annotations

import io
import re

import pytest
from chat_support import reader

from streamtools.cli.chat import chat
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel

pytestmark = pytest.mark.anyio


async def test_a_piped_session_shows_each_command_before_its_answer() -> None:
    out = io.StringIO()
    lines = ["hello\n", "/reset\n", "/help\n", "/rset\n", "again\n", "/quit\n"]
    agent = Agent(ScriptedModel(["Hi.", "Hi again."]))
    assert await chat(agent, reader(lines), out, color=False, prompt=False) == 0
    rule = re.compile(r"(─|-){3} ")  # the turn and final-answer rules
    shown = [line for line in out.getvalue().splitlines() if line and not rule.match(line)]
    you = re.compile(r"you [›>] ")
    assert [you.sub("you: ", line) for line in shown] == [
        "you: hello",
        "Hi.",
        "you: /reset",
        "(conversation cleared)",
        "you: /help",
        "/reset clears the conversation, /quit (or Ctrl-D) leaves",
        "you: /rset",
        "unknown command /rset; /help",
        "you: again",
        "Hi again.",
    ]


async def test_an_interactive_session_does_not_write_the_line_twice() -> None:
    """At a prompt the terminal already shows what was typed."""
    out = io.StringIO()
    agent = Agent(ScriptedModel([]))
    assert await chat(agent, reader(["/reset\n", "/quit\n"]), out, color=False) == 0
    assert "/reset" not in out.getvalue() and "(conversation cleared)" in out.getvalue()
