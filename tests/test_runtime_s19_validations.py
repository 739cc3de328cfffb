"""A call runs its tool's own checks (a Struct's ``__post_init__``, a pydantic
validator) once: the repeat key and the run share one validation
(``runtime.call_key``), in a prompt dialect the parser's own check
(``decoders.CheckedArguments``). They ran three times per call in native mode
(twice for the key, once to run), four in a prompt dialect. And a value a ``default_factory``
fills in is no part of the repeat key: a factory that changes now and then (a
clock in seconds) made the same call, made again once it had changed, a new
call that ran again."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pydantic
import pytest

from streamtools.events import CallError, Event, Retry, ToolFailed, ToolResult
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


def am_xml(name: str, **arguments: Any) -> str:
    inner = "".join(f"<{k}>{v}</{k}>" for k, v in arguments.items())
    return f'<am:tool_call name="{name}">{inner}</am:tool_call>'


@pytest.mark.parametrize("dialect", ["hermes", "am_xml"])
@pytest.mark.parametrize("name", ["order", "lookup"])
async def test_a_prompt_call_is_validated_once(name: str, dialect: str) -> None:
    # the parser's check (a bad call is a CallError before it runs) is the one
    # the call runs with, and the one its repeat key is made of
    checks.clear()
    arguments = {"item": 4} if name == "order" else {"key": 4}
    write = hermes if dialect == "hermes" else am_xml
    model = ScriptedModel([write(name, **arguments), "done"])
    events = await events_of(Agent(model, [order, lookup], dialect=dialect))
    assert [e.content for e in events if isinstance(e, ToolResult)] == [
        "ordered 4" if name == "order" else "found 4"
    ]
    assert checks == [4]


async def test_a_prompt_call_the_tool_refuses_is_checked_once() -> None:
    checks.clear()
    model = ScriptedModel([hermes("order", item="many"), hermes("order", item=2), "done"])
    events = await events_of(Agent(model, [order], dialect="hermes"))
    assert [e.reason for e in events if isinstance(e, CallError)] == ["invalid_arguments"]
    assert checks == [2]  # "many" never reached __post_init__; 2 once


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
