"""How often a call's arguments are checked by the tool's own code.

``Tool.validate`` runs what the tool's types run: a Struct's ``__post_init__``,
pydantic's validators. da994e1 keyed each call by its validated arguments
(``call_signature``, which validates twice since bfb7d59, to see a
``default_factory``), in the agent and again in the executor, whose key is
the same: a call ran the tool's checks six times (the parser's check of the
call, the agent's key, the executor's conversion and its key again). The
agent now hands its key to the executor."""

from __future__ import annotations

import msgspec
import pytest

from streamtools.events import ToolResult
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool

pytestmark = pytest.mark.anyio

checks: list[int] = []


class Order(msgspec.Struct, kw_only=True):
    account: int
    amount: float

    def __post_init__(self) -> None:
        checks.append(self.account)


@tool
def transfer(order: Order) -> str:
    """Transfer money to an account."""
    return f"sent {order.amount} to {order.account}"


async def test_one_call_runs_the_tools_checks_four_times_at_most() -> None:
    checks.clear()
    call = '<tool_call>{"name": "transfer", "arguments": {"account": 7, "amount": 5}}</tool_call>'
    model = ScriptedModel([call, "Sent."])
    async with Agent(model, [transfer], dialect="hermes").stream("pay") as events:
        results = [e async for e in events if isinstance(e, ToolResult)]
    assert [r.content for r in results] == ["sent 5.0 to 7"]
    # the parser's check of the call, the agent's key (two conversions, to see
    # a value made anew each time) and the executor's conversion for the call:
    # the executor does not make the key again
    assert checks and set(checks) == {7}
    assert len(checks) <= 4
