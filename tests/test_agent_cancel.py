"""Nothing blocks forever: cancellation, budgets and timeouts, on asyncio and trio."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from streamtools.errors import BudgetExceeded
from streamtools.events import CallEnd, Event, Final, ToolFailed, TurnEnd, TurnStart
from streamtools.model import Chunk, ModelRequest, TextChunk
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool
from streamtools.transcript import AssistantMessage, ToolResultMessage, UserMessage

pytestmark = pytest.mark.anyio


def hermes(name: str, **arguments: Any) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


class Endless:
    """A model that writes one call, then keeps the stream open forever."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.opened = 0
        self.closed = 0
        self.cancelled = 0

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[Chunk]]:
        self.opened += 1
        try:
            yield self._chunks()
        finally:
            self.closed += 1

    async def _chunks(self) -> AsyncIterator[Chunk]:
        yield TextChunk(text=self.text)
        try:
            await anyio.sleep_forever()
        except BaseException:
            self.cancelled += 1
            raise
        yield TextChunk(text="never")  # pragma: no cover


class Sleeper:
    """State of a tool that sleeps forever."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.cancelled = False

    def tool(self) -> Any:
        @tool
        async def sleep_forever() -> str:
            """Never returns."""
            self.started.set()
            try:
                await anyio.sleep_forever()
            finally:
                self.cancelled = True
            return "unreachable"

        return sleep_forever


async def test_leaving_the_block_cancels_model_and_tools() -> None:
    model, sleeper = Endless(hermes("sleep_forever")), Sleeper()
    agent = Agent(model, [sleeper.tool()], dialect="hermes", tool_timeout=None)
    before = len(anyio.get_running_tasks())
    with anyio.fail_after(5):
        async with agent.stream("go") as events:
            async for event in events:
                if isinstance(event, CallEnd):
                    await sleeper.started.wait()
                    break
    assert sleeper.cancelled
    assert (model.opened, model.closed, model.cancelled) == (1, 1, 1)
    assert len(anyio.get_running_tasks()) == before


async def test_cancelling_the_consumer_from_outside_cancels_everything() -> None:
    model, sleeper = Endless(hermes("sleep_forever")), Sleeper()
    agent = Agent(model, [sleeper.tool()], dialect="hermes", tool_timeout=None)
    before = len(anyio.get_running_tasks())
    seen: list[Event] = []
    with anyio.move_on_after(0.2) as scope:
        async with agent.stream("go") as events:
            async for event in events:
                seen.append(event)
    assert scope.cancelled_caught
    assert any(isinstance(e, CallEnd) for e in seen)
    assert sleeper.started.is_set() and sleeper.cancelled
    assert model.closed == 1
    assert len(anyio.get_running_tasks()) == before


async def test_hanging_tool_hits_its_timeout_and_the_model_is_told() -> None:
    sleeper = Sleeper()
    model = ScriptedModel([hermes("sleep_forever"), "It timed out."])
    agent = Agent(model, [sleeper.tool()], dialect="hermes", tool_timeout=0.05)
    async with agent.stream("go") as events:
        seen = [e async for e in events]
    failed = [e for e in seen if isinstance(e, ToolFailed)]
    assert [(f.kind, f.message) for f in failed] == [
        ("timeout", "Tool 'sleep_forever' timed out after 0.05 s.")
    ]
    assert sleeper.cancelled
    assert "timed out" in model.requests[1].messages[-1].content


async def test_a_model_that_never_stops_calling_hits_max_turns() -> None:
    @tool
    async def count(n: int) -> int:
        """Echo a number."""
        return n

    model = ScriptedModel([hermes("count", n=i) for i in range(10)])
    agent = Agent(model, [count], dialect="hermes", max_turns=3)
    seen: list[Event] = []
    with pytest.raises(BudgetExceeded, match="no final answer after 3 turns") as info:
        async with agent.stream("go") as events:
            async for event in events:
                seen.append(event)
    assert info.value.turns == 3
    assert [e for e in seen if isinstance(e, TurnStart)] == [TurnStart(turn=t) for t in (1, 2, 3)]
    assert len(model.requests) == 3
    # the prompt was a str: the history of the work done comes with the error
    history = info.value.transcript
    assert history is not None
    results = [m.content for m in history.messages if isinstance(m, ToolResultMessage)]
    assert results == ["0", "1", "2"]  # the last turn's call ran too (see below)
    with pytest.raises(BudgetExceeded):
        await Agent(
            ScriptedModel([hermes("count", n=1)] * 2), [count], dialect="hermes", max_turns=1
        ).run("x")


@pytest.mark.parametrize("max_turns", [1, 2])
async def test_the_last_turn_max_turns_allows_runs_its_tools(max_turns: int) -> None:
    """The calls of the last turn run, as the model asked (``max_turns=1`` is one
    step, tool and all), though no turn is left to read their results: those go
    in the transcript ``BudgetExceeded`` carries, for a run that goes on from it."""
    sent: list[str] = []

    @tool
    def send(text: str) -> str:
        """Send a message."""
        sent.append(text)
        return "sent"

    model = ScriptedModel([hermes("send", text=f"m{n}") for n in range(3)])
    agent = Agent(model, [send], dialect="hermes", max_turns=max_turns)
    seen: list[Event] = []
    with pytest.raises(BudgetExceeded) as info:
        async with agent.stream("go") as events:
            async for event in events:
                seen.append(event)
    assert sent == [f"m{n}" for n in range(max_turns)]
    assert not [e for e in seen if isinstance(e, ToolFailed)]
    assert info.value.turns == max_turns
    history = info.value.transcript
    assert history is not None
    last = history.messages[-1]
    assert isinstance(last, ToolResultMessage) and not last.is_error
    assert last.content == "sent"


async def test_time_budget_bounds_the_run() -> None:
    model, sleeper = Endless("thinking..."), Sleeper()
    agent = Agent(model, [sleeper.tool()], dialect="hermes", time_budget=0.1)
    with anyio.fail_after(5), pytest.raises(BudgetExceeded, match="time budget of 0.1 s") as info:
        await agent.run("go")
    assert info.value.turns == 1
    assert model.cancelled == 1 and model.closed == 1
    history = info.value.transcript
    assert history is not None and history.messages[0] == UserMessage(content="go")


async def test_a_turn_the_time_budget_cuts_short_is_kept_in_the_history() -> None:
    """The time budget ran out in a turn whose first call had run (a message
    sent), and ``BudgetExceeded.transcript`` held nothing of that turn: a run
    that went on from it would send the message again. The reply so far is kept
    with the results of the calls that finished, and a call still running is
    told it did not finish."""
    sent: list[str] = []

    @tool
    async def send(text: str) -> str:
        """Send a message."""
        sent.append(text)
        return "sent"

    sleeper = Sleeper()
    model = Endless("Sending. " + hermes("send", text="hi") + hermes("sleep_forever"))
    agent = Agent(model, [send, sleeper.tool()], dialect="hermes", time_budget=0.5)
    with anyio.fail_after(5), pytest.raises(BudgetExceeded) as info:
        await agent.run("go")
    assert sent == ["hi"] and sleeper.cancelled
    history = info.value.transcript
    assert history is not None
    user, reply, *results = history.messages
    assert user == UserMessage(content="go")
    assert isinstance(reply, AssistantMessage) and reply.text == "Sending. "
    assert [c.name for c in reply.calls] == ["send", "sleep_forever"]
    assert results == [
        ToolResultMessage(call_id="call_1_0", name="send", content="sent"),
        ToolResultMessage(
            call_id="call_1_1",
            name="sleep_forever",
            content="`sleep_forever` did not finish: the run's time budget ran out while it ran.",
            is_error=True,
        ),
    ]


async def test_leaving_while_results_are_arriving_is_clean() -> None:
    @tool
    async def quick(n: int) -> int:
        """Returns at once."""
        await anyio.lowlevel.checkpoint()
        return n

    reply = "".join(hermes("quick", n=i) for i in range(12))
    for attempt in range(30):
        model = ScriptedModel([reply, "done"], seed=attempt, chunk_sizes=(20, 80))
        agent = Agent(model, [quick], dialect="hermes", max_concurrency=12)
        async with agent.stream("go") as events:
            async for event in events:
                if type(event).__name__ == "ToolResult":
                    break  # leave while other results are being emitted
        assert model.open_streams == 0


async def test_a_turn_the_time_budget_cuts_short_still_ends() -> None:
    """Out of time mid-turn (a tool still running): the turn gets its
    ``TurnEnd(reason="error")`` before ``BudgetExceeded``, as a failed turn
    does, so a consumer pairing turns (a UI's steps) is not left with one open.
    The budget is long enough for the tool to start on a loaded machine (0.1 s
    once ran out before it did, and so before there was a tool to cancel): the
    tool never ends, so the budget is what ends the turn, however long it is."""
    model, sleeper = ScriptedModel([hermes("sleep_forever"), "done"]), Sleeper()
    events: list[Event] = []
    with anyio.fail_after(10), pytest.raises(BudgetExceeded):
        async with Agent(model, [sleeper.tool()], dialect="hermes", time_budget=1.0).stream(
            "go"
        ) as stream:
            async for event in stream:
                events.append(event)
    turns = [e for e in events if isinstance(e, TurnStart | TurnEnd)]
    assert turns == [TurnStart(turn=1), TurnEnd(turn=1, reason="error")]
    assert sleeper.started.is_set(), "the budget ran out before the tool started"
    assert sleeper.cancelled


async def test_an_answer_known_before_the_time_budget_ends_the_run() -> None:
    """A slow consumer: its buffer (64 events) is full when the reply turns out
    to be the answer, and the budget runs out while ``TurnEnd(final)`` or
    ``Final`` waits for room. The run raised ``BudgetExceeded`` after
    ``TurnEnd(final)`` was sent, or after the reply's ``Finish`` with
    ``TurnEnd(error)``: the answer was known, and lost. It ends with it now.
    (Replies of 58 to 63 chunks put the full buffer at each of those moments.)"""
    for n in range(58, 64):
        model = ScriptedModel([[TextChunk(text="x")] * n])
        events: list[Event] = []
        with anyio.fail_after(5):
            async with Agent(model, time_budget=0.1).stream("hi") as stream:
                async for event in stream:
                    events.append(event)
                    if len(events) == 1:
                        await anyio.sleep(0.25)  # the budget runs out meanwhile
        assert events[-2:] == [TurnEnd(turn=1, reason="final"), Final(text="x" * n, turns=1)]
        assert stream.result is not None and stream.result.text == "x" * n
