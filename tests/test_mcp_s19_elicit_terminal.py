"""``streamtools chat`` at a terminal asks the user an MCP server's question
(elicitation) there: ``ask_in_terminal`` shows the message, asks whether to
answer, then each field of the form, and converts what is typed as the schema
says (asking again for what does not fit); end of input cancels. The time
the user takes does not run out the agent's ``--tool-timeout`` for the call.
Before, ``chat`` could not answer: the server got an error and the tool
failed."""

from __future__ import annotations

import argparse
import sys
import time

import anyio
import pytest
from mcp_servers.harness import HERE

from streamtools.cli.mcp_options import mcp_session
from streamtools.events import CallEnd, ToolResult
from streamtools.mcp import Elicitation, ask_in_terminal
from streamtools.runtime.executor import Executor
from streamtools.tools import ToolRegistry

pytestmark = pytest.mark.anyio

BOOKING = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name"},
        "nights": {"type": "integer", "title": "Nights", "default": 1},
        "late": {"type": "boolean", "description": "arriving after 22:00"},
        "size": {"type": "string", "enum": ["single", "double"]},
    },
    "required": ["name"],
}


class Typed:
    """stdin at a terminal, where the user types ``lines`` (the first after ``wait`` s)."""

    def __init__(self, *lines: str, wait: float = 0.0) -> None:
        self.lines = list(lines)
        self.wait = wait

    def isatty(self) -> bool:
        return True

    def readline(self) -> str:
        if self.wait:
            time.sleep(self.wait)
            self.wait = 0.0
        return self.lines.pop(0) + "\n" if self.lines else ""


def test_a_form_is_filled_in_field_by_field(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    typed = Typed("", "", "Ada", "two", "2", "maybe", "yes", "triple", "double")
    monkeypatch.setattr(sys, "stdin", typed)
    question = Elicitation(server="hotel", message="Who is it for?", schema=BOOKING)
    answer = ask_in_terminal(question)
    assert answer.action == "accept"
    assert answer.content == {"name": "Ada", "nights": 2, "late": True, "size": "double"}
    assert typed.lines == []
    said = capsys.readouterr().err
    assert "MCP server 'hotel' asks: Who is it for?" in said
    assert "(required)" in said  # the empty name
    assert "(a whole number)" in said
    assert "(yes or no)" in said
    assert "(choose one of single, double)" in said
    assert "arriving after 22:00" in said


def test_optional_fields_are_skipped_and_defaults_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", Typed("y", "Bo", "", "", ""))
    answer = ask_in_terminal(Elicitation(server="hotel", message="Who?", schema=BOOKING))
    assert (answer.action, answer.content) == ("accept", {"name": "Bo", "nights": 1})


@pytest.mark.parametrize(
    ("typed", "action"), [(("n",), "decline"), (("c",), "cancel"), (("y", "Ada"), "cancel")]
)
def test_no_decline_cancel_and_end_of_input(
    monkeypatch: pytest.MonkeyPatch, typed: tuple[str, ...], action: str
) -> None:
    monkeypatch.setattr(sys, "stdin", Typed(*typed))  # the last: input ends mid-form
    answer = ask_in_terminal(Elicitation(server="hotel", message="Who?", schema=BOOKING))
    assert (answer.action, answer.content) == (action, None)


@pytest.mark.parametrize(("typed", "action"), [("y", "accept"), ("n", "decline"), ("", "decline")])
def test_a_page_to_open(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    typed: str,
    action: str,
) -> None:
    monkeypatch.setattr(sys, "stdin", Typed(typed))
    question = Elicitation(
        server="shop", message="Pay", url="https://example.com/pay", elicitation_id="p1"
    )
    assert ask_in_terminal(question).action == action
    assert "open: https://example.com/pay" in capsys.readouterr().err


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # one is enough: it takes 2 s
async def test_chat_asks_at_the_terminal_within_the_tool_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As ``streamtools chat --mcp … --tool-timeout 0.5``: the user answers
    after 1.5 s, three times the timeout; the call is not cut."""
    monkeypatch.setattr(sys, "stdin", Typed("y", "Ada", "3", wait=1.5))
    command = f"{sys.executable} {HERE / 'asking_server.py'} legacy"
    args = argparse.Namespace(mcp=[command], mcp_url=[], mcp_header=[], mcp_timeout=None)
    call = CallEnd(index=0, id="call_1", name="book", arguments={"room": "4"}, raw="")
    async with mcp_session(args, ToolRegistry(), "chat") as registry:
        executor = Executor(registry, timeout=0.5)
        with anyio.fail_after(20):
            outcome = await executor.execute(call)
    assert isinstance(outcome, ToolResult), outcome
    assert outcome.content == "booked 4 for Ada, 3 nights"
