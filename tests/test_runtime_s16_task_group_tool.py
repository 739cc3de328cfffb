"""An async tool that runs a task group of its own, whose child ignores the
timeout's cancellation once: the call times out, and the child has ended by the
time the executor reports it (nothing of the tool is left running behind it).

A child that ignores cancellation for ever is not covered: the tool's task group
waits for it (structured concurrency: anyio shields that wait, trio's nursery
too), the tool is never resumed, and ``_Stoppable`` cannot close it without
leaving the child running; see the note in ``streamtools.runtime.executor``."""

from __future__ import annotations

import anyio
import pytest

from streamtools.events import CallEnd, ToolFailed
from streamtools.runtime.executor import Executor
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
