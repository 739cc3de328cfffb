"""The executor: every call comes back as exactly one ToolResult or ToolFailed."""

from __future__ import annotations

import argparse
import contextlib
import io
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import msgspec
import pytest

from streamtools.events import CallEnd, ToolFailed, ToolResult, TurnEnd
from streamtools.runtime import Agent
from streamtools.runtime.executor import Executor
from streamtools.testing import ScriptedModel
from streamtools.tools import ToolRegistry, tool
from streamtools.transcript import ToolResultMessage

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


async def test_an_int_over_python_s_digit_limit_is_a_result() -> None:
    """``factorial(2000)`` has 5,736 digits, past the 4,300 ``str()`` allows:
    it was ``ToolFailed(kind="unencodable_result")``; the model now gets the number."""
    import math

    @tool
    def factorial(n: int) -> int:
        """n!"""
        return math.factorial(n)

    outcome = await Executor(ToolRegistry([factorial])).execute(call("factorial", {"n": 2000}))
    assert isinstance(outcome, ToolResult)
    assert len(outcome.content) == 5736 and outcome.content.startswith("33162750924506332411")


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


async def test_a_cancelled_error_the_tool_raises_itself_is_a_failure(anyio_backend: str) -> None:
    """A tool whose own awaitable was cancelled (a future someone else
    cancelled) raises ``CancelledError`` while the run is not cancelled: that is
    the tool failing, reported like any exception, not a call that vanishes
    (the agent then had no outcome for it and crashed with a ``KeyError``)."""
    if anyio_backend != "asyncio":
        pytest.skip("only asyncio's cancellation exception can be raised by hand")
    import asyncio

    @tool
    async def orphan() -> str:
        """Await a future that was cancelled elsewhere."""
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        future.cancel()
        return await future

    failed = await Executor(ToolRegistry([orphan])).execute(call("orphan"))
    assert isinstance(failed, ToolFailed) and failed.kind == "exception"
    assert failed.message.startswith("Tool 'orphan' raised CancelledError")

    model = ScriptedModel(['<am:tool_call name="orphan"></am:tool_call>', "It failed."])
    result = await Agent(model, [orphan]).run("go")
    assert result.text == "It failed."
    error = result.transcript.messages[2]
    assert isinstance(error, ToolResultMessage) and error.is_error


async def test_a_real_cancellation_still_passes_through_and_times_out() -> None:
    """The check above does not swallow a cancellation that is real: the
    timeout still reports ``timeout``, and a cancelled caller is cancelled."""

    @tool
    async def stubborn() -> str:
        """Catch the cancellation, then raise it again after cleaning up."""
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class() as exc:
            caught = exc
        raise caught

    ex = Executor(ToolRegistry([stubborn]), timeout=0.05)
    timed_out = await ex.execute(call("stubborn"))
    assert isinstance(timed_out, ToolFailed) and timed_out.kind == "timeout"
    finished = False
    with anyio.move_on_after(0.05):
        await Executor(ToolRegistry([stubborn]), timeout=None).execute(call("stubborn"))
        finished = True
    assert not finished


async def test_a_coroutine_returned_without_await_is_awaited() -> None:
    """``return helper()`` in an async tool (the ``await`` forgotten) gives the
    helper's value, not ``"<coroutine object …>"`` and a never-awaited warning."""

    async def helper() -> int:
        return 5

    @tool
    async def forgetful() -> int:
        """Forget to await."""
        return helper()  # type: ignore[return-value]

    assert await Executor(ToolRegistry([forgetful])).execute(call("forgetful")) == ToolResult(
        index=0, id="c0", name="forgetful", content="5"
    )


async def test_generators_give_their_items() -> None:
    """A tool that yields its results (a generator, an async generator, a
    ``map``) gives the model the items as a JSON array, not the object's repr
    with a memory address; a generator that raises is the tool raising."""

    @tool
    def lines(n: int) -> Iterator[str]:
        """Yield n lines."""
        for i in range(n):
            yield f"line {i}"

    @tool
    async def numbers(n: int) -> AsyncIterator[int]:
        """Yield n numbers, asynchronously."""
        for i in range(n):
            await anyio.lowlevel.checkpoint()
            yield i

    @tool
    def squares(n: int) -> Iterator[int]:
        """Squares, lazily."""
        return map(lambda i: i * i, range(n))

    @tool
    def broken() -> Iterator[int]:
        """Fail half way."""
        yield 1
        raise OSError("disk gone")

    ex = Executor(ToolRegistry([lines, numbers, squares, broken]))
    assert await ex.execute(call("lines", {"n": 2})) == ToolResult(
        index=0, id="c0", name="lines", content='["line 0","line 1"]'
    )
    assert await ex.execute(call("numbers", {"n": 3})) == ToolResult(
        index=0, id="c0", name="numbers", content="[0,1,2]"
    )
    assert await ex.execute(call("squares", {"n": 3})) == ToolResult(
        index=0, id="c0", name="squares", content="[0,1,4]"
    )
    failed = await ex.execute(call("broken"))
    assert isinstance(failed, ToolFailed) and failed.kind == "exception"
    assert failed.message == "Tool 'broken' raised OSError: disk gone"


async def test_a_tool_that_exits_is_a_failure_not_the_end_of_the_run() -> None:
    """A tool wrapping a command line whose argparse refuses the arguments
    raises ``SystemExit``: the model is told, the run goes on (it ended in an
    exception group around ``SystemExit``)."""

    @tool
    def cli(argv: list[str]) -> str:
        """Run the command line."""
        parser = argparse.ArgumentParser(prog="cli", exit_on_error=True)
        parser.add_argument("--count", type=int, required=True)
        with contextlib.redirect_stderr(io.StringIO()):
            return str(parser.parse_args(argv).count)

    failed = await Executor(ToolRegistry([cli])).execute(call("cli", {"argv": ["--count", "x"]}))
    assert failed == ToolFailed(
        index=0, id="c0", name="cli", kind="exception", message="Tool 'cli' raised SystemExit: 2"
    )
    model = ScriptedModel(
        ['<am:tool_call name="cli"><argv>["--nope"]</argv></am:tool_call>', "It refused."]
    )
    assert (await Agent(model, [cli]).run("go")).text == "It refused."


class Stop(BaseException):
    """A tool's own signal, a ``BaseException`` so that ``except Exception`` lets it by."""


RAISED: dict[str, type[BaseException]] = {
    "own": Stop,
    "interrupt": KeyboardInterrupt,
    "genexit": GeneratorExit,
}


def _raise(kind: str) -> None:
    if kind == "fail":
        pytest.fail("the tool was not meant to run")
    raise RAISED[kind]("stop")


@pytest.mark.parametrize("kind", ["own", "interrupt", "genexit", "fail"])
@pytest.mark.parametrize("is_async", [True, False])
async def test_a_tool_s_base_exception_stops_the_run_as_itself(kind: str, is_async: bool) -> None:
    """A tool raising a ``BaseException`` that is not an ``Exception`` (a class
    of its own, ``KeyboardInterrupt``, ``GeneratorExit``, ``pytest.fail``) came
    out of the Agent as a ``BaseExceptionGroup`` nested twice. Such an exception
    is a request to stop, not a tool error: the run stops, the turn ends with
    ``TurnEnd(error)``, the other tool is cancelled, and the iterator raises the
    exception itself after the events before it (``run`` too)."""
    expected = RAISED.get(kind, pytest.fail.Exception)
    slow_ended = anyio.Event()

    async def abort_async() -> str:
        await anyio.sleep(0.01)
        _raise(kind)
        return "unreachable"

    def abort_sync() -> str:
        time.sleep(0.01)
        _raise(kind)
        return "unreachable"

    abort = tool(abort_async if is_async else abort_sync, name="abort")

    @tool
    async def slow() -> str:
        """Take a while."""
        try:
            await anyio.sleep(5)
        finally:
            slow_ended.set()
        return "late"

    calls = '<am:tool_call name="slow"></am:tool_call><am:tool_call name="abort"></am:tool_call>'
    model = ScriptedModel([calls, "never asked"])
    events: list[Any] = []
    with anyio.fail_after(3):
        with pytest.raises(expected) as info:
            async with Agent(model, [slow, abort]).stream("go") as stream:
                async for event in stream:
                    events.append(event)
    assert type(info.value) is expected
    assert events[-1] == TurnEnd(turn=1, reason="error")
    assert not any(isinstance(e, ToolResult | ToolFailed) for e in events)
    assert slow_ended.is_set() and len(model.requests) == 1

    with pytest.raises(expected):
        await Agent(ScriptedModel([calls, "never asked"]), [slow, abort]).run("go")


async def test_a_consumer_s_base_exception_comes_out_as_itself() -> None:
    """The consumer's own ``BaseException`` in the ``stream`` block (a test's
    ``pytest.fail`` while reading events) came out in a ``BaseExceptionGroup``."""
    model = ScriptedModel(['<am:tool_call name="add"><a>1</a><b>2</b></am:tool_call>', "3"])
    with pytest.raises(Stop):
        async with Agent(model, [add]).stream("go") as stream:
            async for _ in stream:
                raise Stop("enough")


async def test_an_endless_generator_stops_being_drained_when_its_call_times_out() -> None:
    """The generator's items were taken by ``list`` in a worker thread that the
    timeout abandons but cannot stop: an endless one (a ``tail -f``) went on
    being drained into memory after the call had failed, until memory ran out.
    The thread now stops at the next item and closes the generator."""
    pulled = 0
    closed = threading.Event()

    @tool
    def follow() -> Iterator[str]:
        """Follow a log."""

        def lines() -> Iterator[str]:
            nonlocal pulled
            try:
                while True:
                    pulled += 1
                    time.sleep(0.002)
                    yield "line"
            finally:
                closed.set()

        return lines()

    outcome = await Executor(ToolRegistry([follow]), timeout=0.2).execute(call("follow"))
    assert isinstance(outcome, ToolFailed) and outcome.kind == "timeout"
    assert await anyio.to_thread.run_sync(closed.wait, 2.0)
    before = pulled
    await anyio.sleep(0.1)
    assert pulled == before


async def test_a_tool_s_stop_iteration_is_reported_as_itself() -> None:
    """``next()`` on an exhausted iterator in a tool reached the model as
    "RuntimeError: coroutine raised StopIteration", which Python's coroutine
    machinery makes of it (PEP 479), sync tools (through the worker thread) and
    async ones alike; it is now the tool's own StopIteration."""

    @tool
    def first_sync(items: list[int]) -> int:
        """The first item."""
        return next(iter(items))

    @tool
    async def first_async(items: list[int]) -> int:
        """The first item."""
        return next(iter(items))

    @tool
    def firsts(items: list[int]) -> Iterator[int]:
        """The first item, as a generator."""
        yield next(iter(items))

    @tool
    async def own_message() -> int:
        """A RuntimeError of its own about a StopIteration."""
        try:
            return next(iter([]))
        except StopIteration as exc:
            raise RuntimeError("the queue is empty") from exc

    registry = ToolRegistry([first_sync, first_async, firsts, own_message])
    for name in ("first_sync", "first_async", "firsts"):
        outcome = await Executor(registry).execute(call(name, {"items": []}))
        message = f"Tool {name!r} raised StopIteration"
        assert outcome == ToolFailed(index=0, id="c0", name=name, kind="exception", message=message)
        verbose = await Executor(registry, include_tracebacks=True).execute(
            call(name, {"items": []})
        )
        assert isinstance(verbose, ToolFailed) and "next(iter(items))" in verbose.message
        assert " raised StopIteration" not in verbose.message.partition("\n")[2]
    outcome = await Executor(registry).execute(call("own_message"))
    assert isinstance(outcome, ToolFailed)
    assert outcome.message == "Tool 'own_message' raised RuntimeError: the queue is empty"


async def test_an_exception_group_tells_what_is_inside_it() -> None:
    """An async tool whose task group failed raises an ``ExceptionGroup``: the model
    was told only "unhandled errors in a TaskGroup (1 sub-exception)", nothing
    of what went wrong. The exceptions inside (nested groups flattened, five at
    most) follow now."""

    @tool
    async def fetch_all(n: int) -> int:
        """Fetch n pages at once."""

        async def fetch(i: int) -> None:
            raise ValueError(f"page {i} is gone")

        async with anyio.create_task_group() as tg:
            tg.start_soon(fetch, 1)
        return n

    @tool
    def nested() -> None:
        """Fails in many ways."""
        inner = ExceptionGroup("inner", [KeyError("k"), OSError("no disk")])
        raise ExceptionGroup("outer", [inner, *(ValueError(str(i)) for i in range(5))])

    executor = Executor(ToolRegistry([fetch_all, nested]))
    failed = await executor.execute(call("fetch_all", {"n": 1}))
    assert isinstance(failed, ToolFailed) and failed.kind == "exception"
    assert failed.message.endswith("sub-exception): ValueError: page 1 is gone")
    failed = await executor.execute(call("nested"))
    assert isinstance(failed, ToolFailed)
    assert failed.message == (
        "Tool 'nested' raised ExceptionGroup: outer (6 sub-exceptions): KeyError: 'k'; "
        "OSError: no disk; ValueError: 0; ValueError: 1; ValueError: 2; and 2 more"
    )


@tool
def sqlite_rows(n: int) -> Any:
    """Rows from a fresh database: a cursor, which works only in its own thread."""
    import sqlite3

    connection = sqlite3.connect(":memory:")
    connection.execute("create table t(x)")
    connection.executemany("insert into t values (?)", [(i,) for i in range(n)])
    return connection.execute("select x from t")


async def test_an_iterator_a_sync_tool_returns_is_drained_in_its_thread() -> None:
    """A sync tool ran in one worker thread and the iterator it returned was drained
    by a second ``to_thread`` call: with calls running at once that was often
    another thread, and a thread-bound iterator failed there (a ``sqlite3``
    cursor: ``ProgrammingError``, most of 8 calls at once). It is drained in the
    call that made it now."""
    executor = Executor(ToolRegistry([sqlite_rows]))
    outcomes: list[ToolResult | ToolFailed] = []

    async def run(i: int) -> None:
        outcomes.append(await executor.execute(call("sqlite_rows", {"n": 2}, index=i)))

    for _ in range(3):
        async with anyio.create_task_group() as tg:
            for i in range(8):
                tg.start_soon(run, i)
    assert len(outcomes) == 24
    assert all(isinstance(o, ToolResult) and o.content == "[[0],[1]]" for o in outcomes)


async def test_arguments_too_deep_to_take_apart_are_a_tool_error() -> None:
    """``Tool.validate`` ran its own check and the conversion into keyword
    arguments outside its ``try``: arguments nested too deep for them (a
    ``RecursionError`` from ``msgspec.to_builtins`` for a schema tool whose
    parameter takes anything) escaped ``Executor.execute`` and stopped the run.
    They are a tool error the model is told about now, and the tool never runs."""
    ran: list[Any] = []
    registry = ToolRegistry()
    schema = {"type": "object", "properties": {"x": {}}}
    registry.add_schema("keep", "Keep a value.", schema, fn=lambda x: ran.append(x))
    deep: Any = 1
    for _ in range(100_000):
        deep = [deep]
    outcome = await Executor(registry).execute(call("keep", {"x": deep}))
    assert isinstance(outcome, ToolFailed)
    assert outcome.kind == "invalid_arguments"
    assert "RecursionError" in outcome.message
    assert ran == []
    # The same tool still runs for arguments it can take apart.
    assert isinstance(await Executor(registry).execute(call("keep", {"x": [[1]]})), ToolResult)
    assert ran == [[[1]]]
