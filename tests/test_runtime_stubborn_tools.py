"""Tools that outlive their timeout: a coroutine that swallows cancellation, a
sync tool whose thread cannot be stopped. The run goes on, the model is told the
timeout, and abandoned threads are bounded."""

from __future__ import annotations

import threading
import time
from typing import Any

import anyio
import pytest

from streamtools.events import CallEnd, Final, ToolFailed, ToolResult
from streamtools.runtime import Agent, executor
from streamtools.runtime.executor import Executor
from streamtools.testing import ScriptedModel
from streamtools.tools import ToolRegistry, tool

pytestmark = pytest.mark.anyio

# How long the stubborn tools below go on swallowing cancellations, at most:
# far past their timeout, so that a tool that is let run to this bound shows.
_STUBBORN_FOR = 5.0


def call(name: str) -> CallEnd:
    return CallEnd(index=0, id="c0", name=name, arguments={}, raw="")


class Stubborn:
    """An async tool that catches every cancellation and goes on awaiting."""

    def __init__(self) -> None:
        self.swallowed = 0
        self.ran_out = False  # it reached its own bound: nothing stopped it
        self.closed = False

    async def __call__(self) -> str:
        """Go on whatever happens."""
        cancelled = anyio.get_cancelled_exc_class()
        end = anyio.current_time() + _STUBBORN_FOR
        try:
            while anyio.current_time() < end:
                try:
                    await anyio.sleep(0.05)
                except cancelled:
                    self.swallowed += 1
                    # a cancelled sleep returns at once: not a busy spin
                    time.sleep(0.002)  # noqa: ASYNC251
            self.ran_out = True
            return "finished late"
        finally:
            self.closed = True


async def test_a_tool_that_swallows_cancellation_is_reported_as_timed_out() -> None:
    """It went on for ever after its timeout (anyio cannot abandon a task), so
    the turn waited for it; its coroutine is closed after a grace period now,
    and the model is told the timeout."""
    stubborn = Stubborn()
    registry = ToolRegistry([tool(stubborn, name="stubborn")])
    outcome = await Executor(registry, timeout=0.05).execute(call("stubborn"))
    assert isinstance(outcome, ToolFailed) and outcome.kind == "timeout", outcome
    assert outcome.message == "Tool 'stubborn' timed out after 0.05 s."
    assert stubborn.swallowed > 0 and stubborn.closed and not stubborn.ran_out


async def test_a_result_given_after_the_timeout_is_not_the_answer() -> None:
    """A tool that caught its timeout's cancellation and then returned: the model
    read that result as if the call had been in time."""

    @tool
    async def late() -> str:
        """Return after the timeout."""
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            pass
        return "too late"

    outcome = await Executor(ToolRegistry([late]), timeout=0.05).execute(call("late"))
    assert isinstance(outcome, ToolFailed) and outcome.kind == "timeout"

    @tool
    async def late_error() -> str:
        """Raise its own error on the timeout's cancellation."""
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            raise ValueError("aborted") from None
        return "unreachable"

    outcome = await Executor(ToolRegistry([late_error]), timeout=0.05).execute(call("late_error"))
    assert isinstance(outcome, ToolFailed) and outcome.kind == "timeout"


async def test_leaving_the_stream_does_not_wait_for_a_stubborn_tool() -> None:
    """The consumer leaves the block while a tool with no timeout swallows the
    cancellation: the block ended only when the tool gave up by itself."""
    stubborn = Stubborn()
    call_text = '<tool_call>{"name": "stubborn", "arguments": {}}</tool_call>'
    agent = Agent(
        ScriptedModel([call_text, "done"]),
        [tool(stubborn, name="stubborn")],
        dialect="hermes",
        tool_timeout=None,
    )
    async with agent.stream("go") as events:
        async for event in events:
            if isinstance(event, CallEnd):
                await anyio.sleep(0.05)  # the tool is running
                break
    assert stubborn.closed and not stubborn.ran_out


async def test_the_run_goes_on_after_a_stubborn_tool() -> None:
    stubborn = Stubborn()
    call_text = '<tool_call>{"name": "stubborn", "arguments": {}}</tool_call>'
    model = ScriptedModel([call_text, "It timed out."])
    agent = Agent(model, [tool(stubborn, name="stubborn")], dialect="hermes", tool_timeout=0.05)
    async with agent.stream("go") as stream:
        events = [e async for e in stream]
    assert [e.kind for e in events if isinstance(e, ToolFailed)] == ["timeout"]
    assert events[-1] == Final(text="It timed out.", turns=2)
    assert not stubborn.ran_out


async def test_abandoned_sync_threads_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each call of a sync tool stuck in a blocking call left one more thread
    behind, without bound; past the limit a call is refused as a tool error,
    and runs again once the stuck threads have ended."""
    release = threading.Event()

    @tool
    def stuck(n: int) -> str:
        """Block until released."""
        release.wait(10)
        return "released"

    def nth(n: int) -> CallEnd:  # other arguments each time: not a retry of one call
        return CallEnd(index=0, id="c0", name="stuck", arguments={"n": n}, raw="")

    abandoned_threads = executor.abandoned_threads
    # a count of this test's own: earlier tests' threads ending do not move it
    monkeypatch.setattr(executor, "_ABANDONED", executor._Abandoned())
    before = abandoned_threads()
    assert before == 0
    monkeypatch.setattr(executor, "MAX_ABANDONED_THREADS", 2)
    # long enough for each call's thread to have started (a call still waiting for
    # one is not counted: it never runs)
    ex = Executor(ToolRegistry([stuck]), timeout=0.3)
    try:
        for n in range(2):
            timed_out = await ex.execute(nth(n))
            assert isinstance(timed_out, ToolFailed) and timed_out.kind == "timeout"
        assert abandoned_threads() == before + 2
        refused = await ex.execute(nth(2))
        assert isinstance(refused, ToolFailed) and refused.kind == "exception"
        assert refused.message.startswith("Tool 'stuck' was not run: ")
        assert "still running in their threads" in refused.message
        assert abandoned_threads() == before + 2  # the refused call started no thread
    finally:
        release.set()
    with anyio.fail_after(10):
        while abandoned_threads() > before:  # noqa: ASYNC110 (other threads end them)
            await anyio.sleep(0.01)
    ran: Any = await ex.execute(nth(3))
    assert ran == ToolResult(index=0, id="c0", name="stuck", content="released")


async def test_a_tool_whose_own_timeouts_expire_again_and_again_is_left_alone() -> None:
    """Its own ``move_on_after`` expiring is a cancelled scope for a moment,
    each time; that is no swallowing, however long it goes on."""

    @tool
    async def patient() -> bool:
        """Try again and again, each try cut short by its own timeout."""
        end = anyio.current_time() + 1.5  # past the grace period
        tries = 0
        while anyio.current_time() < end:
            with anyio.move_on_after(0.02):
                try:
                    await anyio.sleep_forever()
                finally:
                    await anyio.lowlevel.checkpoint()  # waits (cancelled) as it cleans up
            tries += 1
        return tries > 1

    outcome = await Executor(ToolRegistry([patient]), timeout=10).execute(call("patient"))
    assert outcome == ToolResult(index=0, id="c0", name="patient", content="true")



async def test_a_tool_waiting_inside_an_async_generator_is_not_closed() -> None:
    """Closing a coroutine leaves an async generator it waits in suspended, its
    cancel scopes open (trio: "Cancel scope stack corrupted"): such a tool is
    not closed. It is stopped by the exception thrown where it waits, which
    unwinds the generator too (tests/test_runtime_s17_peer_scenarios.py)."""
    swallowed: list[int] = []

    async def ticks() -> Any:
        cancelled = anyio.get_cancelled_exc_class()
        end = anyio.current_time() + 1.5  # past the grace period
        while anyio.current_time() < end:
            try:
                await anyio.sleep(0.05)
            except cancelled:
                swallowed.append(1)
                time.sleep(0.002)  # noqa: ASYNC251 (not a busy spin)
            yield 1

    @tool
    async def count() -> int:
        """Count ticks."""
        return sum([n async for n in ticks()])

    outcome = await Executor(ToolRegistry([count]), timeout=0.05).execute(call("count"))
    assert isinstance(outcome, ToolFailed) and outcome.kind == "timeout"
    assert swallowed


async def test_a_call_cancelled_before_its_thread_started_is_not_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A call cancelled while it waited for a worker thread (all of anyio's
    busy) never runs, and was counted as an abandoned thread for ever after: in
    a busy process the limit was reached by threads that did not exist. The
    executor's call waits for its thread before its timeout starts (see
    tests/test_runtime_s16_thread_wait.py), so here the run is what cancels it;
    ``tool_value`` (the MCP server's way in) waits inside the caller's scope."""
    release = threading.Event()
    ran: list[str] = []

    @tool
    def stuck() -> str:
        """Block until released."""
        ran.append("stuck")
        release.wait(10)
        return "released"

    limiter = anyio.to_thread.current_default_thread_limiter()
    tokens = limiter.total_tokens
    limiter.total_tokens = 1  # this test's event loop only
    monkeypatch.setattr(executor, "_ABANDONED", executor._Abandoned())  # a count of its own
    before = executor.abandoned_threads()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(anyio.to_thread.run_sync, release.wait, 10)  # holds the one thread
            with anyio.fail_after(5):
                while limiter.borrowed_tokens < 1:  # noqa: ASYNC110 (a thread takes it)
                    await anyio.sleep(0.01)
            with anyio.move_on_after(0.1) as run:
                await Executor(ToolRegistry([stuck]), timeout=0.05).execute(call("stuck"))
            assert run.cancelled_caught
            with anyio.move_on_after(0.1) as run:
                await executor.tool_value(stuck, {})
            assert run.cancelled_caught
            assert executor.abandoned_threads() == before
            assert ran == []
            release.set()
    finally:
        release.set()
        limiter.total_tokens = tokens


async def test_a_retry_does_not_run_beside_the_call_that_timed_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A sync call that timed out runs on in its thread; the model's retry of it
    ran a second one beside it (an invoice written twice). It is refused while
    the first runs, and runs once that has ended."""
    monkeypatch.setattr(executor, "_ABANDONED", executor._Abandoned())
    release = threading.Event()
    runs: list[str] = []

    @tool
    def invoice(customer: str) -> str:
        """Write an invoice (slowly)."""
        runs.append(customer)
        release.wait(10)
        return f"invoice for {customer}"

    ex = Executor(ToolRegistry([invoice]), timeout=0.3)
    first = CallEnd(index=0, id="c0", name="invoice", arguments={"customer": "ann"}, raw="")
    try:
        timed_out = await ex.execute(first)
        assert isinstance(timed_out, ToolFailed) and timed_out.kind == "timeout"
        again = await ex.execute(first)
        assert isinstance(again, ToolFailed) and again.kind == "refused"
        assert "is still running in its thread" in again.message
        assert runs == ["ann"]
    finally:
        release.set()
    with anyio.fail_after(10):
        while executor.abandoned_threads():  # noqa: ASYNC110 (its thread ends it)
            await anyio.sleep(0.01)
    done = await ex.execute(first)
    assert done == ToolResult(index=0, id="c0", name="invoice", content="invoice for ann")
    assert runs == ["ann", "ann"]
