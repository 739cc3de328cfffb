"""A server that refuses the handshake because it is offered the user's answers
(elicitation) is loaded all the same, offering less.

``streamtools chat`` at a terminal offers every MCP server its questions, and
the SDK offers them as ``{"form": {}, "url": {}}`` (2025-11-25). A strict
2025-06-18 server (the Java SDK's) refuses that ``initialize`` with -32603
``Unrecognized field "form"`` (openai/codex#17492), so it did not load at all.
Such a refusal is now tried again offering the 2025-06-18 shape, ``{}`` (form
questions, which then work), and if that too is refused, nothing (questions
declined), each time with a warning. The server writes JSON-RPC by hand
(``mcp_servers/raw_server.py``) and logs each ``initialize``'s offer.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import anyio
import pytest
from mcp_servers.harness import RAW_SERVER, raw_command

from streamtools.mcp import ElicitAnswer, Elicitation, MCPLoadError, MCPStdio, mcp_tools

pytestmark = pytest.mark.anyio


@pytest.fixture
def errlog(tmp_path: Path) -> Iterator[TextIO]:
    """Where the server writes what each handshake offered."""
    with (tmp_path / "stderr").open("w+") as log:
        yield log


def _server(mode: str, errlog: TextIO) -> MCPStdio:
    return MCPStdio(sys.executable, [RAW_SERVER, mode], errlog=errlog)


def _offers(errlog: TextIO) -> list[object]:
    errlog.seek(0)
    return [json.loads(line) for line in errlog.read().splitlines()]


async def _ask(server: MCPStdio, asked: list[Elicitation]) -> str:
    def on_elicit(question: Elicitation) -> ElicitAnswer:
        asked.append(question)
        return ElicitAnswer("accept", {"name": "Ada"})

    with anyio.fail_after(30):
        async with mcp_tools(server, on_elicit=on_elicit) as registry:
            ask = registry.get("elicitation_create")
            assert ask is not None
            text = await ask.invoke({})
    assert isinstance(text, str)
    return text


async def test_a_strict_2025_06_18_server_loads_with_form_questions(
    errlog: TextIO, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="streamtools.mcp")
    asked: list[Elicitation] = []
    answer = await _ask(_server("strict-asks", errlog), asked)
    assert _offers(errlog) == [{"form": {}, "url": {}}, {}]
    # the question was put to the user, and the answer reached the server
    assert [(q.message, q.mode) for q in asked] == [("Your name?", "form")]
    assert json.loads(answer) == {"result": {"action": "accept", "content": {"name": "Ada"}}}
    assert 'refused the handshake offering to ask the user its questions (elicitation)' in (
        caplog.text
    )
    assert 'Unrecognized field "form"' in caplog.text
    assert "trying again offering form questions only" in caplog.text


async def test_a_server_that_refuses_any_offer_loads_with_questions_declined(
    errlog: TextIO, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="streamtools.mcp")
    asked: list[Elicitation] = []
    answer = await _ask(_server("refusing-asks", errlog), asked)
    assert _offers(errlog) == [{"form": {}, "url": {}}, {}, None]
    assert asked == []
    assert json.loads(answer) == {"result": {"action": "decline"}}
    assert "trying again offering no questions (they are declined)" in caplog.text


async def test_without_a_handler_nothing_is_offered_and_nothing_tried_again(
    errlog: TextIO,
) -> None:
    with anyio.fail_after(30):
        async with mcp_tools(_server("strict-asks", errlog)) as registry:
            assert "elicitation_create" in registry
    assert _offers(errlog) == [None]


async def test_a_handshake_refused_whatever_is_offered_is_still_a_load_error() -> None:
    def on_elicit(question: Elicitation) -> ElicitAnswer:
        return ElicitAnswer("decline")

    with anyio.fail_after(30), pytest.raises(MCPLoadError, match=r"error\.message: Field required"):
        async with mcp_tools(raw_command("bad-handshake"), on_elicit=on_elicit):
            pass
