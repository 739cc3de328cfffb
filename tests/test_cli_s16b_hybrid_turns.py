"""``streamtools chat --hybrid`` names its tool-selection step, against FakeServer.

The renderer numbered the turns from the events, and a hybrid agent's selection
request is ``TurnStart(turn=0)``: the session showed ``--- turn 0 ---``, then
``turn 1``, and "final answer after 2 turns" for one work turn."""

from __future__ import annotations

import io

import pytest
from chat_support import args_for, reader

from streamtools.cli.chat import build_model, chat, make_agent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import FakeCall, Reply

pytestmark = pytest.mark.anyio

CALC = '<am:tool_call name="calculator"><expression>6*7</expression></am:tool_call>'


async def session(script: list[str | Reply], *extra: str) -> str:
    async with FakeServer(script) as server:
        args = args_for(server, *extra)
        out = io.StringIO()
        code = await chat(
            make_agent(build_model(args), args), reader(["what is 6*7?\n"]), out,
            color=False, prompt=False,
        )
    assert code == 0, out.getvalue()
    return out.getvalue()


async def test_the_selection_step_is_named_and_the_turns_count_from_one(
    anyio_backend: str,
) -> None:
    select = Reply(calls=(FakeCall(name="select_tools", arguments={"names": ["calculator"]}),))
    text = await session([select, CALC, "It is 42."], "--hybrid")
    rules = [line for line in text.splitlines() if line.startswith("---")]
    assert rules == [
        "--- selecting tools ---",
        "--- turn 1 ---",
        "--- turn 2 ---",
        "--- final answer after tool selection and 2 turns",
    ], text
    assert "turn 0" not in text
    assert "<- calculator: 42" in text


async def test_an_answer_at_selection_is_said_so(anyio_backend: str) -> None:
    text = await session(["Hello there."], "--hybrid")
    rules = [line for line in text.splitlines() if line.startswith("---")]
    assert rules == ["--- selecting tools ---", "--- final answer at tool selection"], text
    assert "Hello there." in text


async def test_a_plain_agent_still_counts_its_turns(anyio_backend: str) -> None:
    text = await session([CALC, "It is 42."])
    rules = [line for line in text.splitlines() if line.startswith("---")]
    assert rules == ["--- turn 1 ---", "--- turn 2 ---", "--- final answer after 2 turns"], text
