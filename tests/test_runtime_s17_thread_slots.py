"""Worker-thread slots (anyio's default thread limiter) and what a call's timeout covers.

- A sync tool that returns a coroutine gives its thread slot back once its
  thread has returned: the coroutine is awaited on the event loop, needing no
  thread. Before, the call held the slot until the coroutine ended, so with one
  slot two such calls could not run at once (the second waited for the first's
  coroutine, which here waits for the second: a deadlock).
- An async tool that returns a (sync) iterator has its items taken in a worker
  thread; waiting for that thread does not count against the call's timeout, as
  a sync tool's wait for its thread does not. Before, the wait did, and a call
  queued behind other threads was reported as the tool timing out. The timeout
  still bounds the tool's own work, its async part and the drain together."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from wait_support import until

from streamtools.events import CallEnd, ToolFailed, ToolResult
from streamtools.runtime.executor import Executor, tool_value
from streamtools.tools import ToolRegistry, tool

pytestmark = pytest.mark.anyio


def call(name: str, id: str = "c1", **arguments: Any) -> CallEnd:
    return CallEnd(index=0, id=id, name=name, arguments=arguments, raw="")


def one_thread() -> anyio.CapacityLimiter:
    threads = anyio.to_thread.current_default_thread_limiter()  # this event loop's own
    threads.total_tokens = 1
    return threads


# --- a sync tool returning a coroutine ------------------------------------------


def rendezvous_tool(arrived: list[str], both: anyio.Event) -> Any:
    """A sync tool whose coroutine ends once both calls' coroutines have started."""

    async def meet(word: str) -> str:
        arrived.append(word)
        if len(arrived) == 2:
            both.set()
        await both.wait()
        return word.upper()

    @tool
    def shout(word: str) -> Any:
        """Shout a word, later."""
        return meet(word)

    return shout


async def test_a_coroutine_a_sync_tool_returns_holds_no_thread(anyio_backend: str) -> None:
    threads = one_thread()
    arrived: list[str] = []
    both = anyio.Event()
    executor = Executor(ToolRegistry([rendezvous_tool(arrived, both)]), timeout=30.0)
    outcomes: dict[str, object] = {}

    async def run(word: str, id: str) -> None:
        outcomes[id] = await executor.execute(call("shout", id, word=word))

    with anyio.move_on_after(5) as bound:
        async with anyio.create_task_group() as tg:
            tg.start_soon(run, "a", "c1")
            tg.start_soon(run, "b", "c2")
    assert not bound.cancelled_caught, f"deadlocked: {arrived} arrived"
    assert outcomes == {
        "c1": ToolResult(index=0, id="c1", name="shout", content="A"),
        "c2": ToolResult(index=0, id="c2", name="shout", content="B"),
    }
    assert threads.borrowed_tokens == 0


async def test_tool_value_gives_the_thread_back_before_the_coroutine(
    anyio_backend: str,
) -> None:
    """The MCP server's way in (``tool_value``) behaves the same."""
    one_thread()
    arrived: list[str] = []
    both = anyio.Event()
    shout = rendezvous_tool(arrived, both)
    values: list[Any] = []

    async def run(word: str) -> None:
        values.append(await tool_value(shout, {"word": word}))

    with anyio.move_on_after(5) as bound:
        async with anyio.create_task_group() as tg:
            tg.start_soon(run, "a")
            tg.start_soon(run, "b")
    assert not bound.cancelled_caught, f"deadlocked: {arrived} arrived"
    assert sorted(values) == ["A", "B"]


# --- an async tool returning an iterator ------------------------------------------


@tool(timeout=1.0)
async def numbers(n: int) -> Iterator[int]:
    """Count to n."""
    return iter(range(1, n + 1))


async def test_an_async_tools_iterator_waits_for_a_thread_outside_its_timeout(
    anyio_backend: str,
) -> None:
    threads = one_thread()
    release = threading.Event()
    executor = Executor(ToolRegistry([numbers]), timeout=30.0)
    outcomes: list[object] = []

    async def run() -> None:
        outcomes.append(await executor.execute(call("numbers", n=3)))

    with anyio.fail_after(20):
        try:
            async with anyio.create_task_group() as tg:
                # another part of the program holds the only thread
                tg.start_soon(
                    lambda: anyio.to_thread.run_sync(release.wait, abandon_on_cancel=True)
                )
                await until(lambda: threads.borrowed_tokens == 1)
                tg.start_soon(run)
                await until(lambda: threads.statistics().tasks_waiting == 1)  # the drain waits
                await anyio.sleep(1.5)  # longer than the tool's timeout (1 s)
                assert outcomes == []  # it has not failed
                release.set()
        finally:
            release.set()
    assert outcomes == [ToolResult(index=0, id="c1", name="numbers", content="[1,2,3]")]
    assert threads.borrowed_tokens == 0


def slow_items(log: list[str]) -> Iterator[int]:
    for i in range(3):
        threading.Event().wait(0.35)
        log.append(f"item {i}")
        yield i


async def test_the_timeout_covers_the_async_part_and_the_drain_together(
    anyio_backend: str,
) -> None:
    """0.7 s of its own before it returns, about 1 s of items after: past its 1 s
    timeout in all, though each part alone is within it."""
    log: list[str] = []

    @tool(timeout=1.0)
    async def slow() -> Iterator[int]:
        """Think, then count slowly."""
        await anyio.sleep(0.7)
        log.append("returned")
        return slow_items(log)

    with anyio.fail_after(20):
        outcome = await Executor(ToolRegistry([slow])).execute(call("slow"))
    assert isinstance(outcome, ToolFailed), outcome
    assert outcome.kind == "timeout"
    assert log[0] == "returned"


async def test_a_call_cancelled_in_its_coroutine_leaves_no_thread_token(
    anyio_backend: str,
) -> None:
    threads = one_thread()
    started = anyio.Event()
    ended: list[str] = []

    async def wait() -> str:
        started.set()
        try:
            await anyio.sleep(10)
        finally:
            ended.append("ended")
        return "late"

    @tool
    def later() -> Any:
        """Answer later."""
        return wait()

    executor = Executor(ToolRegistry([later]))
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(executor.execute, call("later"))
            await started.wait()
            assert threads.borrowed_tokens == 0  # the coroutine holds no thread
            tg.cancel_scope.cancel()
    assert ended == ["ended"]
    assert threads.borrowed_tokens == 0


async def test_a_sync_tools_coroutine_may_return_items_taken_in_a_thread(
    anyio_backend: str,
) -> None:
    one_thread()

    async def items() -> Iterator[str]:
        return iter(["a", "b"])

    @tool(timeout=5.0)
    def letters() -> Any:
        """Some letters, later."""
        return items()

    with anyio.fail_after(10):
        outcome = await Executor(ToolRegistry([letters])).execute(call("letters"))
    assert outcome == ToolResult(index=0, id="c1", name="letters", content='["a","b"]')
