"""A call runs its tool's own checks (a Struct's ``__post_init__``, a pydantic
validator) once in the runtime: the repeat key and the run share one validation
(``runtime.call_key``). They ran three times per call (twice for the key, once
to run), four with the prompt parser's check. And a value a ``default_factory``
fills in is no part of the repeat key: a factory that changes now and then (a
clock in seconds) made the same call, made again once it had changed, a new
call that ran again."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pydantic
import pytest

from streamtools.events import Event, Retry, ToolFailed, ToolResult
from streamtools.model import CallChunk, FinishChunk
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool

pytestmark = pytest.mark.anyio

checks: list[int] = []


class Order(msgspec.Struct):
    item: int

    def __post_init__(self) -> None:
        checks.append(self.item)


@tool
def order(args: Order) -> str:
    """Order an item."""
    return f"ordered {args.item}"


class Lookup(pydantic.BaseModel):
    key: int

    @pydantic.field_validator("key")
    @classmethod
    def counted(cls, value: int) -> int:
        checks.append(value)
        return value


@tool
def lookup(query: Lookup) -> str:
    """Look a key up."""
    return f"found {query.key}"


def native(name: str, **arguments: Any) -> list[Any]:
    return [
        CallChunk(index=0, id="c1", name=name, arguments=json.dumps(arguments)),
        FinishChunk(reason="tool_calls"),
    ]


def hermes(name: str, **arguments: Any) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


async def events_of(agent: Agent) -> list[Event]:
    async with agent.stream("go") as events:
        return [e async for e in events]


@pytest.mark.parametrize("name", ["order", "lookup"])
async def test_a_native_call_is_validated_once(name: str) -> None:
    checks.clear()
    arguments = {"item": 3} if name == "order" else {"key": 3}
    model = ScriptedModel([native(name, **arguments), "done"])
    events = await events_of(Agent(model, [order, lookup], native=True))
    assert [e.content for e in events if isinstance(e, ToolResult)] == [
        "ordered 3" if name == "order" else "found 3"
    ]
    assert checks == [3]


@pytest.mark.parametrize("name", ["order", "lookup"])
async def test_a_prompt_call_is_validated_at_most_twice(name: str) -> None:
    # the parser checks the arguments (a bad call is a CallError before it runs),
    # the runtime converts them once for both the repeat key and the run
    checks.clear()
    arguments = {"item": 4} if name == "order" else {"key": 4}
    model = ScriptedModel([hermes(name, **arguments), "done"])
    events = await events_of(Agent(model, [order, lookup], dialect="hermes"))
    assert len([e for e in events if isinstance(e, ToolResult)]) == 1
    assert checks == [4, 4]


clock = [0]  # what the factory reads: a clock that moves on now and then
stamped: list[tuple[str, int]] = []


class Note(msgspec.Struct):
    text: str
    at: int = msgspec.field(default_factory=lambda: clock[0])


@tool
def note(args: Note) -> str:
    """Save a note."""
    stamped.append((args.text, args.at))
    clock[0] += 1  # the clock ticks before the model's next reply
    return "saved"


@pytest.mark.parametrize("mode", ["prompt", "native"])
async def test_a_repeat_is_caught_when_a_default_factory_changed(mode: str) -> None:
    clock[0] = 0
    stamped.clear()
    call: Any = hermes("note", text="hi") if mode == "prompt" else native("note", text="hi")
    model = ScriptedModel([call, call, "Saved."])
    agent = Agent(model, [note], dialect="hermes", native=mode == "native")
    events = await events_of(agent)
    assert stamped == [("hi", 0)]  # ran once; the second is the same call
    assert [e.reason for e in events if isinstance(e, Retry)] == ["repeated_call"]
    assert [e.kind for e in events if isinstance(e, ToolFailed)] == ["refused"]


async def test_a_factory_field_the_model_wrote_is_part_of_the_call() -> None:
    clock[0] = 0
    stamped.clear()
    first, second = hermes("note", text="hi", at=5), hermes("note", text="hi", at=6)
    model = ScriptedModel([first, second, "Saved."])
    events = await events_of(Agent(model, [note], dialect="hermes"))
    assert stamped == [("hi", 5), ("hi", 6)]  # two different calls: both ran
    assert not any(isinstance(e, Retry) for e in events)
