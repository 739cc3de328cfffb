"""A repeated call is the same call however its arguments are written: compared
as the tool takes them (``5`` and ``5.0`` for an int, ``2`` and ``2.0`` for a
float, a default written out or left out, key order), not as written. Compared
as written, a model that made the same call again in another form had it run
again (a write done twice) and was never redirected; only ``max_turns`` ended
the loop."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest

from streamtools.events import Event, Retry, ToolFailed, ToolResult
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool

pytestmark = pytest.mark.anyio

ran: list[tuple[Any, ...]] = []


@tool
def transfer(account: int, amount: float, note: str = "") -> str:
    """Transfer money to an account."""
    ran.append((account, amount, note))
    return f"sent {amount} to {account}"


class Query(pydantic.BaseModel):
    text: str


@tool
def ask(query: Query) -> str:
    """Ask a question."""
    ran.append((query.text,))
    return "an answer"


def hermes(name: str, **arguments: Any) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


async def run(model: ScriptedModel, **options: Any) -> list[Event]:
    ran.clear()
    async with Agent(model, [transfer, ask], **options).stream("pay") as events:
        return [e async for e in events]


@pytest.mark.parametrize(
    "again",
    [
        {"account": 7.0, "amount": 5},  # an int as a float, a float as an int
        {"amount": 5.0, "account": 7, "note": ""},  # the default written out, keys reordered
    ],
)
async def test_the_same_call_written_another_way_is_a_repeat(again: dict[str, Any]) -> None:
    first = hermes("transfer", account=7, amount=5.0)
    model = ScriptedModel([first, hermes("transfer", **again), "Sent."])
    events = await run(model, dialect="hermes")
    assert ran == [(7, 5.0, "")]  # once
    redirect = next(e for e in events if isinstance(e, Retry))
    assert redirect.reason == "repeated_call" and "sent 5.0 to 7" in redirect.message
    assert [e.kind for e in events if isinstance(e, ToolFailed)] == ["refused"]


async def test_in_a_prompt_dialect_a_typed_value_written_differently_is_a_repeat() -> None:
    first = '<am:tool_call name="transfer"><account>7</account><amount>5</amount></am:tool_call>'
    again = '<am:tool_call name="transfer"><account>7</account><amount>5.0</amount></am:tool_call>'
    events = await run(ScriptedModel([first, again, "Sent."]))
    assert ran == [(7, 5.0, "")]
    assert any(isinstance(e, Retry) and e.reason == "repeated_call" for e in events)


async def test_twins_in_one_reply_written_differently_run_once() -> None:
    both = hermes("transfer", account=7, amount=5) + hermes("transfer", account=7, amount=5.0)
    events = await run(ScriptedModel([both, "Sent."]), dialect="hermes")
    assert ran == [(7, 5.0, "")]
    refused = [e for e in events if isinstance(e, ToolFailed)]
    assert len(refused) == 1 and "more than once in one reply" in refused[0].message


async def test_other_arguments_still_run() -> None:
    first = hermes("transfer", account=7, amount=5)
    model = ScriptedModel([first, hermes("transfer", account=7, amount=6), "Sent."])
    events = await run(model, dialect="hermes")
    assert ran == [(7, 5.0, ""), (7, 6.0, "")]
    assert len([e for e in events if isinstance(e, ToolResult)]) == 2


async def test_a_value_with_no_json_form_is_compared_as_written() -> None:
    """A pydantic model parameter: its converted value does not encode, so the
    arguments as written decide (an exact repeat is still one)."""
    call = hermes("ask", text="why")
    other = hermes("ask", text="how")
    events = await run(ScriptedModel([call, other, call, "Done."]), dialect="hermes")
    assert ran == [("why",), ("how",)]
    assert any(isinstance(e, Retry) and e.reason == "repeated_call" for e in events)


async def test_native_calls_are_compared_the_same_way() -> None:
    from streamtools.model import CallChunk, Chunk, FinishChunk

    def native(arguments: str) -> list[Chunk]:
        return [
            CallChunk(index=0, id="c", name="transfer", arguments=arguments, done=True),
            FinishChunk(reason="tool_calls"),
        ]

    model = ScriptedModel(
        [native('{"account": 7, "amount": 5}'), native('{"amount": 5.0, "account": 7.0}'), "ok"]
    )
    await run(model, native=True)
    assert ran == [(7, 5.0, "")]
