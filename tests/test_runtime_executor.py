"""The executor: every call comes back as exactly one ToolResult or ToolFailed."""

from __future__ import annotations

import threading
import time
from typing import Any

import anyio
import msgspec
import pytest

from streamtools.events import CallEnd, ToolFailed, ToolResult
from streamtools.runtime.executor import Executor
from streamtools.tools import ToolRegistry, tool

pytestmark = pytest.mark.anyio


def call(name: str, arguments: dict[str, Any] | None = None, index: int = 0) -> CallEnd:
    return CallEnd(index=index, id=f"c{index}", name=name, arguments=arguments or {}, raw="")


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def shout(text: str) -> dict[str, str]:
    """Upper-case some text (sync: runs in a worker thread)."""
    assert threading.current_thread() is not threading.main_thread()
    return {"text": text.upper()}


@tool
async def boom() -> str:
    """Always fails."""
    raise ValueError("the disk is on fire")


@tool
async def hang() -> str:
    """Never returns."""
    await anyio.sleep_forever()
    return "unreachable"


@tool
def block() -> str:
    """A sync tool stuck in a blocking call."""
    time.sleep(0.5)
    return "late"


@tool
async def own_timeout() -> str:
    """Raises its own TimeoutError, which is an exception, not our timeout."""
    raise TimeoutError("upstream timed out")


REGISTRY = ToolRegistry([add, shout, boom, hang, block, own_timeout])


async def test_async_and_sync_tools_return_results() -> None:
    ex = Executor(REGISTRY)
    assert await ex.execute(call("add", {"a": 2, "b": "3"})) == ToolResult(
        index=0, id="c0", name="add", content="5"
    )
    result = await ex.execute(call("shout", {"text": "hi"}, index=1))
    assert result == ToolResult(index=1, id="c1", name="shout", content='{"text":"HI"}')


async def test_exception_becomes_tool_failed_without_traceback() -> None:
    failed = await Executor(REGISTRY).execute(call("boom"))
    assert failed == ToolFailed(
        index=0,
        id="c0",
        name="boom",
        kind="exception",
        message="Tool 'boom' raised ValueError: the disk is on fire",
    )
    verbose = await Executor(REGISTRY, include_tracebacks=True).execute(call("boom"))
    assert isinstance(verbose, ToolFailed)
    assert "Traceback (most recent call last)" in verbose.message
    assert 'raise ValueError("the disk is on fire")' in verbose.message


async def test_hanging_tools_hit_their_timeout() -> None:
    ex = Executor(REGISTRY, timeout=0.05)
    failed = await ex.execute(call("hang"))
    assert isinstance(failed, ToolFailed)
    assert (failed.kind, failed.message) == ("timeout", "Tool 'hang' timed out after 0.05 s.")
    # A blocked sync tool is abandoned to its thread rather than blocking the loop.
    with anyio.fail_after(0.4):
        stuck = await ex.execute(call("block"))
    assert isinstance(stuck, ToolFailed) and stuck.kind == "timeout"


async def test_tools_own_timeout_error_is_an_exception() -> None:
    failed = await Executor(REGISTRY, timeout=5).execute(call("own_timeout"))
    assert isinstance(failed, ToolFailed)
    assert failed.kind == "exception"
    assert "upstream timed out" in failed.message


async def test_unknown_tool_and_bad_arguments() -> None:
    ex = Executor(REGISTRY)
    unknown = await ex.execute(call("rm_rf"))
    assert isinstance(unknown, ToolFailed) and unknown.kind == "unknown_tool"
    assert unknown.message.startswith("Unknown tool `rm_rf`. The only tools you may call are:")
    bad = await ex.execute(call("add", {"a": "two", "b": 1}))
    assert isinstance(bad, ToolFailed) and bad.kind == "invalid_arguments"
    assert "$.a" in bad.message


async def test_concurrency_limit_bounds_running_tools() -> None:
    running = 0
    peak = 0

    @tool
    async def work(n: int) -> int:
        """Count how many run at once."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await anyio.sleep(0.01)
        running -= 1
        return n

    ex = Executor(ToolRegistry([work]), max_concurrency=2, timeout=5)
    results: list[ToolResult | ToolFailed] = []

    async def one(i: int) -> None:
        results.append(await ex.execute(call("work", {"n": i}, index=i)))

    async with anyio.create_task_group() as tg:
        for i in range(6):
            tg.start_soon(one, i)
    assert peak == 2
    assert sorted(r.index for r in results if isinstance(r, ToolResult)) == list(range(6))


async def test_waiting_for_a_slot_does_not_count_against_the_timeout() -> None:
    @tool
    async def nap() -> str:
        """Takes 2/3 of the timeout."""
        await anyio.sleep(0.2)
        return "rested"

    # One slot: the second call waits ~0.2 s, then runs 0.2 s: 0.4 s after it was
    # asked for, more than the 0.3 s timeout, which only counts its own run.
    ex = Executor(ToolRegistry([nap]), max_concurrency=1, timeout=0.3)
    results: list[ToolResult | ToolFailed] = []

    async def one(i: int) -> None:
        results.append(await ex.execute(call("nap", index=i)))

    async with anyio.create_task_group() as tg:
        tg.start_soon(one, 0)
        tg.start_soon(one, 1)
    assert [type(r).__name__ for r in results] == ["ToolResult", "ToolResult"]


@tool
def by_year() -> dict[int, float]:
    """Non-str keys: not a tool failure."""
    return {2024: 1.5}


@tool
def mixed() -> object:
    """A set of mixed types."""
    return {1, "a"}


class Unreadable:
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


@tool
def unreadable() -> object:
    """A value no fallback can turn into text."""
    return Unreadable()


async def test_results_msgspec_cannot_encode_directly_are_results() -> None:
    executor = Executor(ToolRegistry([by_year, mixed]))
    assert await executor.execute(call("by_year")) == ToolResult(
        index=0, id="c0", name="by_year", content='{"2024":1.5}'
    )
    assert await executor.execute(call("mixed")) == ToolResult(
        index=0, id="c0", name="mixed", content='["a",1]'
    )


async def test_an_unencodable_result_is_not_reported_as_the_tool_raising() -> None:
    outcome = await Executor(ToolRegistry([unreadable])).execute(call("unreadable"))
    assert isinstance(outcome, ToolFailed)
    assert outcome.kind == "unencodable_result"
    assert outcome.message.startswith(
        "Tool 'unreadable' ran, but its result could not be turned into text:"
    )
    assert "raised" not in outcome.message


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise ValueError("cannot render")


class _Point(msgspec.Struct):
    x: int

    def __post_init__(self) -> None:
        if self.x < 0:
            raise RuntimeError("x must not be negative")


async def test_foreign_exceptions_are_reported_not_raised() -> None:
    """A tool's exception whose ``str()`` raises, and a check of the tool's own
    argument types that raises something other than msgspec's errors, come back
    to the model as a failure each: the run goes on."""

    @tool
    def unprintable() -> str:
        """Fail oddly."""
        raise _Unprintable()

    @tool
    def plot(p: _Point) -> int:
        """Plot a point."""
        return p.x

    ex = Executor(ToolRegistry([unprintable, plot]), include_tracebacks=True)
    failed = await ex.execute(call("unprintable"))
    assert isinstance(failed, ToolFailed) and failed.kind == "exception"
    assert failed.message.startswith("Tool 'unprintable' raised _Unprintable")
    refused = await ex.execute(call("plot", {"x": -1}))  # one Struct: its fields
    assert isinstance(refused, ToolFailed) and refused.kind == "invalid_arguments"
    assert "RuntimeError: x must not be negative" in refused.message
    assert await ex.execute(call("plot", {"x": 2})) == ToolResult(
        index=0, id="c0", name="plot", content="2"
    )
