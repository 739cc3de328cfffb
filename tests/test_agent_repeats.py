"""Repeated calls and retries: a call made again after it failed runs again
(boundedly); a repeat of a call that succeeded, or of one in the same reply, is
redirected, and what it is told does not depend on which tool finished first."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from streamtools.events import Event, Final, Retry, ToolFailed, ToolResult
from streamtools.model import Chunk, FinishChunk, ModelRequest, TextChunk
from streamtools.runtime import Agent
from streamtools.runtime.repair import MAX_RETRIES, repeat_twin
from streamtools.testing import ScriptedModel
from streamtools.tools import tool
from streamtools.transcript import Transcript

pytestmark = pytest.mark.anyio


def hermes(name: str, **arguments: Any) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


FETCH = hermes("fetch", url="https://example.com")


async def collect(agent: Agent, prompt: str) -> list[Event]:
    async with agent.stream(prompt) as events:
        return [e async for e in events]


def outcomes(events: list[Event]) -> list[tuple[str, str]]:
    """(kind, text) of each call's outcome: ``result`` for a ToolResult."""
    out: list[tuple[str, str]] = []
    for e in events:
        if isinstance(e, ToolResult):
            out.append(("result", e.content))
        elif isinstance(e, ToolFailed):
            out.append((e.kind, e.message))
    return out


@pytest.mark.parametrize("failure", ["exception", "timeout"])
async def test_a_retry_of_a_call_that_failed_runs_again(anyio_backend: str, failure: str) -> None:
    """``fetch(url)`` timed out (or raised), the model called it again, and was
    told it had repeated itself ("it was not run again"): a retry of a failed
    call never ran, though the failure may well have passed."""
    runs: list[str] = []

    @tool
    async def fetch(url: str) -> str:
        """Fetch a page."""
        runs.append(url)
        if len(runs) == 1:
            if failure == "timeout":
                await anyio.sleep_forever()
            raise ConnectionError("connection reset")
        return "the page"

    model = ScriptedModel([FETCH, FETCH, "It says: the page."])
    agent = Agent(model, [fetch], dialect="hermes", tool_timeout=0.05)
    events = await collect(agent, "fetch it")
    assert runs == ["https://example.com"] * 2
    assert [kind for kind, _ in outcomes(events)] == [failure, "result"]
    assert not any(isinstance(e, Retry) for e in events)
    assert events[-1] == Final(text="It says: the page.", turns=3)


async def test_retries_of_a_failing_call_are_bounded() -> None:
    runs: list[str] = []

    @tool
    def fetch(url: str) -> str:
        """Fetch a page."""
        runs.append(url)
        raise ConnectionError("connection reset")

    model = ScriptedModel([FETCH] * 5 + ["The site is down."])
    events = await collect(Agent(model, [fetch], dialect="hermes"), "fetch it")
    assert len(runs) == 1 + MAX_RETRIES == 3
    kinds = [kind for kind, _ in outcomes(events)]
    assert kinds == ["exception"] * 3 + ["refused", "refused"]
    redirect, stop = (message for _, message in outcomes(events)[3:])
    assert "failed 3 times; it was not run again" in redirect
    assert "Its last error was:\nTool 'fetch' raised ConnectionError" in redirect
    assert "tool use is stopped" in stop
    assert [e.reason for e in events if isinstance(e, Retry)] == ["repeated_call"]
    assert events[-1] == Final(text="The site is down.", turns=6)


async def test_a_repeat_of_a_retry_that_succeeded_is_redirected() -> None:
    runs: list[str] = []

    @tool
    def fetch(url: str) -> str:
        """Fetch a page."""
        runs.append(url)
        if len(runs) == 1:
            raise ConnectionError("connection reset")
        return "the page"

    model = ScriptedModel([FETCH, FETCH, FETCH, "It says: the page."])
    events = await collect(Agent(model, [fetch], dialect="hermes"), "fetch it")
    assert len(runs) == 2
    kind, message = outcomes(events)[-1]
    assert kind == "refused"
    assert "it was not run again. Its result was:\nthe page\n" in message
    assert events[-1] == Final(text="It says: the page.", turns=4)


async def test_a_call_whose_result_could_not_be_written_is_not_retried() -> None:
    """Only a failure that may pass (raised, timed out) is retried: a tool that
    ran but whose value has no text would run (its side effects too) for the
    same failure again."""
    runs: list[str] = []

    class Opaque:
        def __str__(self) -> str:
            raise RuntimeError("no text")

        __repr__ = __str__

    @tool
    def fetch(url: str) -> Any:
        """Fetch a page."""
        runs.append(url)
        return Opaque()

    model = ScriptedModel([FETCH, FETCH, "No luck."])
    events = await collect(Agent(model, [fetch], dialect="hermes"), "fetch it")
    assert len(runs) == 1
    assert [kind for kind, _ in outcomes(events)] == ["unencodable_result", "refused"]


class GatedModel:
    """Turn 1 writes ``FETCH`` twice, awaiting ``between`` after the first and
    calling ``after`` once the second was taken; turn 2 answers."""

    def __init__(self, between: Callable[[], Awaitable[None]], after: Callable[[], None]) -> None:
        self.between = between
        self.after = after
        self.turns = 0

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[Chunk]]:
        self.turns += 1
        played = self._play(self.turns)
        try:
            yield played
        finally:
            await played.aclose()

    async def _play(self, turn: int) -> AsyncGenerator[Chunk, None]:
        if turn == 1:
            yield TextChunk(text=FETCH)
            await self.between()
            yield TextChunk(text=FETCH)
            self.after()
        else:
            yield TextChunk(text="Done.")
        yield FinishChunk(reason="stop")


async def twin_run(first_finishes_first: bool) -> tuple[list[Event], Transcript]:
    finished = anyio.Event()  # the first call's tool has returned
    taken = anyio.Event()  # the second call has been read

    @tool
    async def fetch(url: str) -> str:
        """Fetch a page."""
        if not first_finishes_first:
            await taken.wait()
        finished.set()
        return "the page"

    async def between() -> None:
        if first_finishes_first:
            await finished.wait()

    model = GatedModel(between, taken.set)
    async with Agent(model, [fetch], dialect="hermes").stream("fetch it") as events:
        seen = [e async for e in events]
        assert events.result is not None
        return seen, events.result.transcript


async def test_a_twin_in_one_reply_is_told_the_same_whichever_finishes_first(
    anyio_backend: str,
) -> None:
    """Two identical calls in one reply: the second's refusal quoted the first's
    result ("Its result was: …") when that had finished, and nothing when it
    had not, so the transcript depended on timing."""
    early, early_transcript = await twin_run(first_finishes_first=True)
    late, late_transcript = await twin_run(first_finishes_first=False)
    # the first call's result came before the second call's refusal, or after it
    assert [kind for kind, _ in outcomes(early)] == ["result", "refused"]
    assert [kind for kind, _ in outcomes(late)] == ["refused", "result"]
    refusal = outcomes(early)[1][1]
    assert refusal == outcomes(late)[0][1]
    assert refusal == repeat_twin("fetch")
    assert "only the first of them is answered" in refusal and "the page" not in refusal
    assert early_transcript == late_transcript


async def test_a_twin_climbs_no_rung_of_the_repeat_ladder() -> None:
    """A twin in one reply (parallel calls duplicated) used up the redirect, so
    the model's first real repeat in a later turn stopped tool use at once."""
    runs: list[str] = []

    @tool
    def fetch(url: str) -> str:
        """Fetch a page."""
        runs.append(url)
        return "the page"

    model = ScriptedModel([FETCH + FETCH + FETCH, FETCH, "It says: the page."])
    events = await collect(Agent(model, [fetch], dialect="hermes"), "fetch it")
    assert len(runs) == 1
    # (the first call's result comes before or after its twins' refusals)
    kinds = [kind for kind, _ in outcomes(events)]
    assert sorted(kinds) == ["refused", "refused", "refused", "result"]
    messages = [message for kind, message in outcomes(events) if kind == "refused"]
    assert messages[:2] == [repeat_twin("fetch")] * 2
    assert "Its result was:\nthe page" in messages[2]  # redirected, not stopped
    assert [e.reason for e in events if isinstance(e, Retry)] == ["repeated_call"]
    assert events[-1] == Final(text="It says: the page.", turns=3)


@pytest.mark.parametrize(
    "error",
    [ValueError("no such date: 2024-02-30"), TypeError("bad"), ZeroDivisionError("division")],
)
async def test_a_call_that_raised_for_its_arguments_is_not_run_again(error: Exception) -> None:
    """A tool that raised what says its arguments are wrong fails the same way
    with the same arguments: the model sending them again is redirected at once,
    with the error quoted, instead of the tool running (side effects and all)
    two more times for the same error and two turns."""
    runs: list[str] = []

    @tool
    def fetch(url: str) -> str:
        """Fetch a page."""
        runs.append(url)
        raise error

    model = ScriptedModel([FETCH, FETCH, "I could not fetch it."])
    events = await collect(Agent(model, [fetch], dialect="hermes"), "fetch it")
    assert len(runs) == 1
    (kind, first), (again, redirect) = outcomes(events)
    assert (kind, again) == ("exception", "refused")
    assert "the same arguments would fail the same way, so it was not run again" in redirect
    assert f"Its error was:\n{first}\n" in redirect
    assert "Its result was" not in redirect
    assert events[-1] == Final(text="I could not fetch it.", turns=3)


async def test_an_os_error_that_is_also_a_value_error_may_pass() -> None:
    """requests' JSONDecodeError (a gateway's error page) is both: it is retried."""
    runs: list[str] = []

    class PageError(OSError, ValueError):
        pass

    @tool
    def fetch(url: str) -> str:
        """Fetch a page."""
        runs.append(url)
        if len(runs) == 1:
            raise PageError("Expecting value: line 1 column 1")
        return "the page"

    model = ScriptedModel([FETCH, FETCH, "It says: the page."])
    events = await collect(Agent(model, [fetch], dialect="hermes"), "fetch it")
    assert len(runs) == 2
    assert [kind for kind, _ in outcomes(events)] == ["exception", "result"]


async def test_a_repeat_of_a_call_whose_result_had_no_text_quotes_it_as_an_error() -> None:
    """Its redirect said "Its result was: <the error>. Use that result"."""

    class Opaque:
        def __str__(self) -> str:
            raise RuntimeError("no text")

        __repr__ = __str__

    @tool
    def fetch(url: str) -> Any:
        """Fetch a page."""
        return Opaque()

    model = ScriptedModel([FETCH, FETCH, "No luck."])
    events = await collect(Agent(model, [fetch], dialect="hermes"), "fetch it")
    redirect = outcomes(events)[-1][1]
    assert "Its error was:\nTool 'fetch' ran, but its result could not be turned" in redirect
    assert "Use that result" not in redirect


def test_an_exception_group_may_pass_when_one_exception_in_it_may() -> None:
    from streamtools.runtime.executor import may_pass

    settled = ExceptionGroup("g", [ValueError("a"), ExceptionGroup("h", [TypeError("b")])])
    assert not may_pass(settled)
    assert may_pass(ExceptionGroup("g", [ValueError("a"), ConnectionError("reset")]))
    assert may_pass(RuntimeError("coroutine raised StopIteration"))
    assert not may_pass(SystemExit(2))


async def test_a_repeatable_tool_is_polled_and_others_still_redirected() -> None:
    """A model polling a job's status makes the same call again and again; it was
    redirected at the second poll ("use its result") and tool use stopped at the
    third, so no agent could wait for a job. A repeatable tool runs each time;
    a repeat of another tool is still a repeat."""
    polls: list[str] = []

    @tool(repeatable=True)
    def status(job: str) -> str:
        """A job's status."""
        polls.append(job)
        return "done" if len(polls) == 4 else "running"

    @tool
    def start(job: str) -> str:
        """Start a job."""
        return "started"

    poll = hermes("status", job="build")
    begin = hermes("start", job="build")
    model = ScriptedModel([begin, poll, poll, poll, poll + begin, "The build is done."])
    agent = Agent(model, [status, start], dialect="hermes", max_turns=8)
    events = await collect(agent, "build it and wait")
    assert polls == ["build"] * 4
    seen = outcomes(events)  # the last reply's two in the order they finished
    assert seen[:4] == [("result", "started")] + [("result", "running")] * 3
    assert sorted(kind for kind, _ in seen[4:]) == ["refused", "result"]
    assert ("result", "done") in seen[4:]
    assert events[-1] == Final(text="The build is done.", turns=6)


def test_repeatable_is_off_unless_asked_for() -> None:
    @tool
    def plain() -> str:
        """Plain."""
        return ""

    assert plain.repeatable is False
    assert tool(plain.fn, name="other", repeatable=True).repeatable is True  # type: ignore[type-var]
