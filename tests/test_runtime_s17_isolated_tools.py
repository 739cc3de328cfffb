"""An async tool that starts a task in a task group of its own, a task that
swallows every cancellation, cannot be stopped in the caller's event loop: the
group's exit waits for the task (anyio shields that wait; trio's nursery too),
and the tool is never resumed, so the call, the turn and the run waited for it
for ever. ``@tool(isolated=True)`` runs such a tool in a worker thread, in an
event loop of its own: past its timeout the call is reported as timed out and
the thread abandoned (as a sync tool's is), the run goes on and ends, and the
tool is cancelled in its own loop (one that then ends frees its thread)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator

import anyio
import pytest
from wait_support import until

from streamtools.errors import BudgetExceeded
from streamtools.events import CallEnd, ToolFailed, ToolResult
from streamtools.runtime import executor
from streamtools.runtime.agent import Agent
from streamtools.runtime.executor import Executor, tool_value
from streamtools.testing import ScriptedModel
from streamtools.tools import Tool, ToolRegistry, tool

pytestmark = pytest.mark.anyio


def call(name: str, **arguments: object) -> CallEnd:
    return CallEnd(index=0, id="c1", name=name, arguments=arguments, raw="")


class Stubborn:
    """An async tool whose task group's child swallows every cancellation, until
    ``release`` is set (or 10 s have passed: a bound for the test)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.swallowed = 0
        self.child_ended = False

    async def child(self) -> None:
        end = anyio.current_time() + 10
        try:
            while not self.release.is_set() and anyio.current_time() < end:
                try:
                    await anyio.sleep(0.01)
                except anyio.get_cancelled_exc_class():
                    self.swallowed += 1
        finally:
            self.child_ended = True

    async def __call__(self) -> str:
        """Start a helper and wait for it."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.child)
            await anyio.sleep_forever()
        return "never"

    def tool(self, **options: object) -> Tool:
        return tool(self, name="stubborn", **options)  # type: ignore[call-overload, no-any-return]


@pytest.fixture
def own_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executor, "_ABANDONED", executor._Abandoned())  # a count of its own


@pytest.mark.usefixtures("own_count")
async def test_an_isolated_tool_is_abandoned_past_its_timeout(anyio_backend: str) -> None:
    stubborn = Stubborn()
    run = Executor(ToolRegistry([stubborn.tool(isolated=True, timeout=0.3)]))
    try:
        with anyio.fail_after(5):
            outcome = await run.execute(call("stubborn"))
        assert outcome == ToolFailed(
            index=0, id="c1", name="stubborn", kind="timeout",
            message="Tool 'stubborn' timed out after 0.3 s.",
        )  # fmt: skip
        await until(lambda: stubborn.swallowed > 0)  # it was cancelled in its loop
        assert not stubborn.child_ended  # and goes on, in the abandoned thread
        assert executor.abandoned_threads() == 1
    finally:
        stubborn.release.set()
    await until(lambda: executor.abandoned_threads() == 0)  # its thread ended
    assert stubborn.child_ended


@pytest.mark.usefixtures("own_count")
async def test_the_run_ends_and_the_model_reads_the_timeout(anyio_backend: str) -> None:
    stubborn = Stubborn()
    call_text = '<tool_call>{"name": "stubborn", "arguments": {}}</tool_call>'
    model = ScriptedModel([call_text, "It timed out."])
    agent = Agent(model, [stubborn.tool(isolated=True)], dialect="hermes", tool_timeout=0.3)
    try:
        with anyio.fail_after(5):
            result = await agent.run("go")
        assert result.text == "It timed out."
        told = str(model.requests[1].messages[-1])
        assert "timed out after 0.3 s" in told
    finally:
        stubborn.release.set()
    await until(lambda: executor.abandoned_threads() == 0)


async def test_an_isolated_tool_gives_what_it_would_in_the_loop(anyio_backend: str) -> None:
    @tool(isolated=True)
    async def halve(n: int) -> list[int]:
        """Halve n, then its half, down to 1."""
        out = []
        while n >= 1:
            await anyio.sleep(0.001)
            out.append(n)
            n //= 2
        return out

    @tool(isolated=True)
    async def refuse(n: int) -> int:
        """Refuse n."""
        raise ValueError(f"no {n}")

    run = Executor(ToolRegistry([halve, refuse]))
    with anyio.fail_after(10):
        halved = await run.execute(call("halve", n=10))
        refused = await run.execute(call("refuse", n=3))
    assert halved == ToolResult(index=0, id="c1", name="halve", content="[10,5,2,1]")
    assert refused == ToolFailed(
        index=0, id="c1", name="refuse", kind="exception",
        message="Tool 'refuse' raised ValueError: no 3",
    )  # fmt: skip


@pytest.mark.usefixtures("own_count")
async def test_a_timed_out_isolated_tool_is_cancelled_and_frees_its_thread(
    anyio_backend: str,
) -> None:
    log: list[str] = []

    @tool(isolated=True, timeout=0.2)
    async def wait() -> str:
        """Wait for ever."""
        try:
            await anyio.sleep(10)
        finally:
            log.append("cleaned up")
        return "late"

    with anyio.fail_after(5):
        outcome = await Executor(ToolRegistry([wait])).execute(call("wait"))
        assert isinstance(outcome, ToolFailed) and outcome.kind == "timeout"
        await until(lambda: log == ["cleaned up"] and executor.abandoned_threads() == 0)


async def test_an_isolated_tools_items_are_taken_in_its_own_loop(anyio_backend: str) -> None:
    @tool(isolated=True)
    async def letters() -> Iterator[str]:
        """Some letters."""
        return iter(["x", "y"])

    @tool(isolated=True)
    async def counted(n: int) -> AsyncIterator[int]:
        """Count to n."""
        for i in range(n):
            await anyio.sleep(0.001)
            yield i

    run = Executor(ToolRegistry([letters, counted]))
    with anyio.fail_after(10):
        got = await run.execute(call("letters"))
        numbers = await run.execute(call("counted", n=3))
    assert got == ToolResult(index=0, id="c1", name="letters", content='["x","y"]')
    assert numbers == ToolResult(index=0, id="c1", name="counted", content="[0,1,2]")


@pytest.mark.usefixtures("own_count")
async def test_the_run_ends_within_its_time_budget(anyio_backend: str) -> None:
    """No tool timeout at all: the run's time budget is what ends it."""
    stubborn = Stubborn()
    call_text = '<tool_call>{"name": "stubborn", "arguments": {}}</tool_call>'
    model = ScriptedModel([call_text, "never asked"])
    agent = Agent(
        model, [stubborn.tool(isolated=True)], dialect="hermes",
        tool_timeout=None, time_budget=0.5,
    )  # fmt: skip
    try:
        with anyio.fail_after(5), pytest.raises(BudgetExceeded):
            await agent.run("go")
        assert len(model.requests) == 1
    finally:
        stubborn.release.set()
    await until(lambda: executor.abandoned_threads() == 0)


@pytest.mark.usefixtures("own_count")
async def test_tool_value_abandons_an_isolated_tool_when_its_caller_gives_up(
    anyio_backend: str,
) -> None:
    """The MCP server's way in (``tool_value``) runs it the same way: a caller's
    own timeout ends the wait, the thread is abandoned."""
    stubborn = Stubborn()
    try:
        with anyio.fail_after(5):
            with anyio.move_on_after(0.3) as waited:
                await tool_value(stubborn.tool(isolated=True), {})
        assert waited.cancelled_caught
        await until(lambda: stubborn.swallowed > 0)
        assert executor.abandoned_threads() == 1
    finally:
        stubborn.release.set()
    await until(lambda: executor.abandoned_threads() == 0)
