"""A repeated call of a tool whose arguments type fills a field with a new value
each time (``default_factory``: a request id, a timestamp) is still a repeat.

da994e1 compared calls as the tool takes them (``Tool.validate``); such a tool
takes the same written arguments as a new value every time, so every call had a
key of its own: the model's exact repeat ran again (a transfer done twice) and
was never redirected, where before it was caught as written."""

from __future__ import annotations

import itertools
import json
from typing import Any

import msgspec
import pytest

from streamtools.events import Event, Retry, ToolFailed
from streamtools.runtime import Agent
from streamtools.runtime.repair import call_signature
from streamtools.testing import ScriptedModel
from streamtools.tools import tool

pytestmark = pytest.mark.anyio

_ids = itertools.count()
ran: list[tuple[int, float]] = []


class Transfer(msgspec.Struct, kw_only=True):
    account: int
    amount: float
    request_id: int = msgspec.field(default_factory=lambda: next(_ids))


@tool
def transfer(order: Transfer) -> str:
    """Transfer money to an account."""
    ran.append((order.account, order.amount))
    return f"sent {order.amount} to {order.account}"


def hermes(name: str, **arguments: Any) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


async def run(model: ScriptedModel) -> list[Event]:
    ran.clear()
    async with Agent(model, [transfer], dialect="hermes").stream("pay") as events:
        return [e async for e in events]


async def test_an_exact_repeat_is_redirected_across_replies() -> None:
    call = hermes("transfer", account=7, amount=5)
    events = await run(ScriptedModel([call, call, "Sent."]))
    assert ran == [(7, 5.0)]  # once
    redirect = next(e for e in events if isinstance(e, Retry))
    assert redirect.reason == "repeated_call" and "sent 5.0 to 7" in redirect.message
    assert [e.kind for e in events if isinstance(e, ToolFailed)] == ["refused"]


async def test_twins_in_one_reply_run_once() -> None:
    call = hermes("transfer", account=7, amount=5)
    events = await run(ScriptedModel([call + call, "Sent."]))
    assert ran == [(7, 5.0)]
    refused = [e for e in events if isinstance(e, ToolFailed)]
    assert len(refused) == 1 and "more than once in one reply" in refused[0].message


def test_the_key_still_reads_the_arguments_as_the_tool_takes_them() -> None:
    # the factory's field written out: the tool takes it the same way each
    # time, so 7 and 7.0 are still one call (the key is not the written one)
    same = {"account": 7, "amount": 5, "request_id": 1}
    other_form = {"account": 7.0, "amount": 5.0, "request_id": 1}
    assert call_signature("transfer", same, transfer) == call_signature(
        "transfer", other_form, transfer
    )
    left_out = {"account": 7, "amount": 5}
    assert call_signature("transfer", left_out, transfer) == call_signature(
        "transfer", left_out, transfer
    )
    assert call_signature("transfer", left_out, transfer) != call_signature(
        "transfer", {"account": 8, "amount": 5}, transfer
    )
