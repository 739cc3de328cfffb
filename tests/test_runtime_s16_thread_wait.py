"""A sync tool's call that waits for a worker thread (anyio's default thread limiter
is busy: other threads of the process hold its tokens) does not spend its timeout
waiting: the timeout bounds the tool's run, as it does not count the wait for the
executor's own slot either. Before, the call timed out without having started and
was reported as the tool timing out."""

from __future__ import annotations

import threading

import anyio
import pytest
from wait_support import until

from streamtools.events import CallEnd, ToolResult
from streamtools.runtime.executor import Executor
from streamtools.tools import ToolRegistry, tool

pytestmark = pytest.mark.anyio

ran: list[str] = []


@tool(timeout=1.0)
def quick(word: str) -> str:
    """Echo a word."""
    ran.append(word)
    return word.upper()


def call(word: str) -> CallEnd:
    return CallEnd(index=0, id="c1", name="quick", arguments={"word": word}, raw="")


async def test_a_call_waiting_for_a_worker_thread_does_not_time_out(anyio_backend: str) -> None:
    threads = anyio.to_thread.current_default_thread_limiter()  # this event loop's own
    threads.total_tokens = 1
    release = threading.Event()
    executor = Executor(ToolRegistry([quick]), timeout=30.0)
    ran.clear()
    outcomes: list[object] = []
    with anyio.fail_after(20):
        try:
            await _wait_behind(threads, release, executor, outcomes)
        finally:
            release.set()  # the blocking thread ends, whatever happened
    assert outcomes == [ToolResult(index=0, id="c1", name="quick", content="HI")]
    assert ran == ["hi"]
    assert threads.borrowed_tokens == 0  # the call's token went back


async def _wait_behind(
    threads: anyio.CapacityLimiter,
    release: threading.Event,
    executor: Executor,
    outcomes: list[object],
) -> None:
    """Run the call while another thread holds the only token, past the tool's timeout."""

    async def run() -> None:
        outcomes.append(await executor.execute(call("hi")))

    async with anyio.create_task_group() as tg:
        # another part of the program holds the only thread token
        tg.start_soon(lambda: anyio.to_thread.run_sync(release.wait, abandon_on_cancel=True))
        await until(lambda: threads.borrowed_tokens == 1)
        tg.start_soon(run)
        await until(lambda: threads.statistics().tasks_waiting == 1)  # the call waits
        await anyio.sleep(1.5)  # longer than the tool's timeout (1 s)
        assert outcomes == [] and ran == []  # it has not started, nor failed
        release.set()


async def _threaded() -> str:
    return await anyio.to_thread.run_sync(lambda: "threaded")


@tool
def wrapped() -> object:
    """A sync tool that returns a coroutine, which uses a worker thread itself."""
    return _threaded()


async def test_a_coroutine_a_sync_tool_returns_may_use_a_thread_too(anyio_backend: str) -> None:
    executor = Executor(ToolRegistry([wrapped]), timeout=10.0)
    end = CallEnd(index=0, id="c1", name="wrapped", arguments={}, raw="{}")
    outcome = await executor.execute(end)
    assert outcome == ToolResult(index=0, id="c1", name="wrapped", content="threaded")
    assert anyio.to_thread.current_default_thread_limiter().borrowed_tokens == 0
