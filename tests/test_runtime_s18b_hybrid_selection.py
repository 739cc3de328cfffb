"""HybridAgent reads ``select_tools`` names under another key, and repairs a
selection of nothing.

A model that called ``select_tools`` with ``{"tools": [...]}``, a bare list or a
bare string selected nothing, and the work phase ran with no tool shown, silently;
so did a call of unknown names. Names are now read as ``am:request_tools`` reads
them, and a call that selects no tool is answered once with what to fix."""

from __future__ import annotations

import pytest

from streamtools.events import Event, Retry, TurnEnd, TurnStart
from streamtools.model import CallChunk, ModelRequest
from streamtools.runtime.hybrid import SELECT_TOOLS, HybridAgent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def sub(a: int, b: int) -> int:
    """Subtract two integers."""
    return a - b


def shown(request: ModelRequest) -> list[str]:
    """The tools whose full definitions a work-phase request shows."""
    system = request.messages[0].content
    return [n for n in ("add", "sub") if f'<am:tool name="{n}"' in system]


def select(arguments: str) -> list[CallChunk]:
    return [CallChunk(index=0, id="s", name=SELECT_TOOLS, arguments=arguments)]


@pytest.mark.parametrize(
    ("arguments", "offered"),
    [
        ('{"tools": ["add", "sub"]}', ["add", "sub"]),
        ('{"names_list": "sub"}', ["sub"]),
        ('{"tool_names": "[\\"add\\"]"}', ["add"]),
        ('["sub", "add"]', ["add", "sub"]),
        ('"add, sub"', ["add", "sub"]),
        ("sub", ["sub"]),
    ],
)
async def test_names_under_another_key_or_bare_are_selected(
    arguments: str, offered: list[str]
) -> None:
    model = ScriptedModel([select(arguments), "done"])
    result = await HybridAgent(model, [add, sub]).run("hi")
    assert result.text == "done"
    assert len(model.requests) == 2
    assert shown(model.requests[1]) == offered


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ('{"names": ["multiply"]}', "There is no tool named 'multiply'."),
        ('{"a": 1, "b": 2}', 'The arguments {"a": 1, "b": 2} name no tool.'),
        ("{}", "The arguments {} name no tool."),
        ("[3]", "The arguments [3] name no tool."),
    ],
)
async def test_a_selection_of_nothing_is_repaired_once(arguments: str, said: str) -> None:
    """The model is told what it sent and the tools there are, with its call
    and the error in the request; its second selection is used."""
    model = ScriptedModel([select(arguments), select('{"names": ["sub"]}'), "done"])
    events: list[Event] = []
    async with HybridAgent(model, [add, sub]).stream("hi") as stream:
        async for event in stream:
            events.append(event)
    assert len(model.requests) == 3
    retries = [e for e in events if isinstance(e, Retry)]
    assert len(retries) == 1 and retries[0].turn == 0 and retries[0].reason == "call_error"
    message = retries[0].message
    assert message.startswith(said)
    assert '"names"' in message and "add, sub" in message
    # the repair: the same request, then the call and the error as its result
    first, again = model.requests[0], model.requests[1]
    assert again.messages[: len(first.messages)] == first.messages
    call, result = again.messages[len(first.messages) :]
    assert call.role == "assistant" and [c.name for c in call.tool_calls] == [SELECT_TOOLS]
    assert (result.role, result.tool_call_id, result.is_error) == ("tool", "s", True)
    assert result.content == message
    assert again.tools == first.tools
    assert shown(model.requests[2]) == ["sub"]
    turns = [e for e in events if isinstance(e, TurnStart | TurnEnd)]
    assert turns[:2] == [TurnStart(turn=0), TurnEnd(turn=0, reason="tool_calls")]


async def test_a_second_selection_of_nothing_goes_on_as_before() -> None:
    """One repair: a second empty selection goes on to the work phase with summaries."""
    model = ScriptedModel([select('{"x": 1}'), select('{"names": ["nope"]}'), "done"])
    result = await HybridAgent(model, [add, sub]).run("hi")
    assert result.text == "done"
    assert len(model.requests) == 3
    assert shown(model.requests[2]) == []


async def test_an_answer_to_the_repair_is_the_answer() -> None:
    model = ScriptedModel([select('{"names": ["nope"]}'), "No tool needed: 4."])
    result = await HybridAgent(model, [add, sub]).run("2 + 2?")
    assert result.text == "No tool needed: 4."
    assert result.turns == 1


@pytest.mark.parametrize("arguments", ['{"names": []}', '{"names": "[]"}', "[]"])
async def test_an_empty_list_selects_nothing_on_purpose(arguments: str) -> None:
    model = ScriptedModel([select(arguments), "done"])
    assert (await HybridAgent(model, [add, sub]).run("hi")).text == "done"
    assert len(model.requests) == 2
    assert shown(model.requests[1]) == []


async def test_no_repair_with_max_repairs_zero() -> None:
    model = ScriptedModel([select('{"names": ["nope"]}'), "done"])
    result = await HybridAgent(model, [add, sub], max_repairs=0).run("hi")
    assert result.text == "done"
    assert len(model.requests) == 2


async def test_an_empty_list_beside_a_selection_keeps_the_selection() -> None:
    """Two calls, an empty list then names: the names were dropped, the first
    call's ``[]`` ending the reading."""
    calls = [
        CallChunk(index=0, id="s0", name=SELECT_TOOLS, arguments='{"names": []}', done=True),
        CallChunk(index=1, id="s1", name=SELECT_TOOLS, arguments='{"names": ["sub"]}'),
    ]
    model = ScriptedModel([calls, "done"])
    assert (await HybridAgent(model, [add, sub]).run("hi")).text == "done"
    assert len(model.requests) == 2
    assert shown(model.requests[1]) == ["sub"]
