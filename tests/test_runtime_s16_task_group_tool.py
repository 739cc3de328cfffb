"""An async tool that runs a task group of its own, and swallows the timeout's
cancellation (its child does, once; or the tool itself, in the group's body):
the call times out, the tool unwinds whole, its child has ended by the time the
executor reports it, and the run goes on.

A child that ignores cancellation for ever is not covered: the tool's task group
waits for it (structured concurrency: anyio shields that wait, trio's nursery
too), the tool is never resumed, and ``_Stoppable`` cannot close it without
leaving the child running; see the note in ``streamtools.runtime.executor``."""

from __future__ import annotations

import anyio
import pytest

from streamtools.events import CallEnd, ToolFailed
from streamtools.runtime.agent import Agent
from streamtools.runtime.executor import Executor
from streamtools.testing import ScriptedModel
from streamtools.tools import ToolRegistry, tool

pytestmark = pytest.mark.anyio

log: list[str] = []


async def stubborn_child() -> None:
    ignored = False
    try:
        while True:
            try:
                await anyio.sleep(0.05)
                log.append("tick")
            except anyio.get_cancelled_exc_class():
                if ignored:
                    raise
                ignored = True  # once: it goes on waiting
                log.append("ignored")
    finally:
        log.append("child ended")


@tool(timeout=0.2)
async def fan_out() -> str:
    """Start a helper task and wait."""
    async with anyio.create_task_group() as tg:
        tg.start_soon(stubborn_child)
        await anyio.sleep_forever()
    return "never"


async def test_a_tool_whose_child_ignores_cancellation_once_ends_whole(
    anyio_backend: str,
) -> None:
    log.clear()
    executor = Executor(ToolRegistry([fan_out]))
    end = CallEnd(index=0, id="c1", name="fan_out", arguments={}, raw="{}")
    with anyio.fail_after(10):
        outcome = await executor.execute(end)
    assert isinstance(outcome, ToolFailed) and outcome.kind == "timeout"
    assert "ignored" in log and log[-1] == "child ended"
    seen = len(log)
    await anyio.sleep(0.2)  # longer than the child's tick: an orphan would tick on
    assert len(log) == seen


class Swallower:
    """An async tool that swallows every cancellation inside a task group of its
    own, whose child is an ordinary task."""

    def __init__(self) -> None:
        self.child_ticks = 0
        self.child_ended = False
        self.unwound = False

    async def child(self) -> None:
        try:
            while True:
                await anyio.sleep(0.05)
                self.child_ticks += 1
        finally:
            self.child_ended = True

    async def __call__(self) -> str:
        """Wait whatever happens."""
        cancelled = anyio.get_cancelled_exc_class()
        end = anyio.current_time() + 5  # far past the grace period: a bound for the test
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self.child)
                while anyio.current_time() < end:
                    try:
                        await anyio.sleep(0.05)
                    except cancelled:
                        pass
            return "finished late"
        finally:
            self.unwound = True


async def test_a_tool_swallowing_cancellation_in_its_own_task_group_is_stopped_whole(
    anyio_backend: str,
) -> None:
    """It was closed where it waited, inside its task group: the group's exit could
    not wait for its child, its cancel scope stayed open in the task, and the run
    failed ("Attempted to exit a cancel scope that isn't the current tasks's
    current cancel scope"; trio: "Cancel scope stack corrupted")."""
    swallower = Swallower()
    executor = Executor(ToolRegistry([tool(swallower, name="swallower", timeout=0.1)]))
    end = CallEnd(index=0, id="c1", name="swallower", arguments={}, raw="{}")
    with anyio.fail_after(4):  # the grace period (1 s) and some
        outcome = await executor.execute(end)
    assert outcome == ToolFailed(
        index=0, id="c1", name="swallower", kind="timeout",
        message="Tool 'swallower' timed out after 0.1 s.",
    )  # fmt: skip
    assert swallower.unwound and swallower.child_ended
    ticks = swallower.child_ticks
    with anyio.move_on_after(0.2) as scope:  # this task's own scopes still work
        await anyio.sleep(1)
    assert scope.cancelled_caught
    assert swallower.child_ticks == ticks  # nothing of the tool runs on


async def test_the_run_goes_on_after_it(anyio_backend: str) -> None:
    swallower = Swallower()
    call_text = '<tool_call>{"name": "swallower", "arguments": {}}</tool_call>'
    model = ScriptedModel([call_text, "It timed out."])
    agent = Agent(
        model, [tool(swallower, name="swallower")], dialect="hermes", tool_timeout=0.1
    )
    with anyio.fail_after(4):
        result = await agent.run("go")
    assert result.text == "It timed out."
    assert swallower.unwound and swallower.child_ended
