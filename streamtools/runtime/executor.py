"""The tool executor: run one finished call, always come back with an event.

Theory of operation
-------------------
``Executor.execute(call)`` turns a ``CallEnd`` into exactly one
``ToolResult`` or ``ToolFailed``; it never raises for an ``Exception`` a tool
raises, so a broken tool can never crash the agent loop (``SystemExit``
included: a tool wrapping a command line whose argparse refuses the
arguments). Cancellation (the consumer went away, the timeout) passes through,
as it must; a ``CancelledError`` a tool raises itself while nothing cancelled
it (it awaited a future someone else cancelled) is that tool failing.

Any other ``BaseException`` that is not an ``Exception`` passes through too:
``KeyboardInterrupt``, ``GeneratorExit``, a test's ``pytest.fail``
(``Failed``), a class of the tool's own that derives from ``BaseException``
just so that ``except Exception`` lets it through. These are by Python's
convention not errors to report but a request to stop; the model is not told.
The turn (``streamtools.runtime.turn``) cancels the model request and the other
tools, the turn ends with ``TurnEnd(reason="error")``, and the exception itself
(never inside an exception group) is raised by the event stream's iterator
after the events before it, or by ``Agent.run``.

A value is what the tool finally gives: a coroutine it returned without
``await`` is awaited, a generator's (or any iterator's) items are collected
into a list, so the model never reads ``<generator object … at 0x…>``; an
endless one stops being drained when its call times out or is cancelled. A
sync tool's iterator is drained in the worker thread call that made it (a
``sqlite3`` cursor works in its own thread only).

The agent starts one ``execute`` per call in the turn's task group the moment
the call's ``CallEnd`` arrives (eager dispatch), so the calls of a turn run
concurrently with each other and with the model still streaming. Two bounds
apply, in this order:

1. a ``CapacityLimiter`` (``max_concurrency``): a call waits for a slot, and
   waiting does not count against its timeout; nor does a wait for a worker
   thread: a sync tool takes a token of anyio's default thread limiter (40
   threads for the whole process, shared with everything else that uses
   ``to_thread``) before its timeout starts, and gives it back as soon as its
   thread returns (a coroutine it returned is then awaited on the event loop,
   needing no thread). Waited for inside the timeout, as ``to_thread.run_sync``
   does, a call queued behind other threads timed out before it had started
   and was reported as the tool timing out. The iterator an async tool returns
   (known only once it has run) waits for its thread with the timeout paused.
2. a per-call timeout (``move_on_after``; checking the scope rather than
   catching ``TimeoutError`` keeps a tool's own ``TimeoutError`` reported as
   the exception it is): the tool's own (``@tool(timeout=...)``), else the
   executor's. It covers the tool's own work, all of it: its run (in its
   thread, or its coroutine), what it returned awaited, and its items taken;
   for an async tool's iterator, what the tool left of it before returning.
   A tool that reports progress (an MCP call whose server sends it) starts
   it again with each report, up to ten times it in all or the tool's own
   limit (``streamtools.runtime.progress``): a call that says nothing is cut
   at it, one that keeps saying it works is not. So does a report of how far
   it has come, through the agent's ``call_progress()`` (the turn makes it).

Async tools are awaited in the task. Sync tools run in a worker thread
(``anyio.to_thread.run_sync``) with ``abandon_on_cancel=True``: Python
cannot stop a thread, so a sync tool that outlives its timeout (or a
cancelled run) is abandoned to finish in the background instead of blocking
the loop forever. Abandoned threads still running are counted for the whole
process (``abandoned_threads``); once ``MAX_ABANDONED_THREADS`` are, a new
sync call is refused as a tool error that says why (``ThreadsAbandoned``),
rather than leave one more thread behind each time a stuck tool is called.
The same call (tool and arguments) made again while the thread its timed-out
run left is still running is refused (``kind="refused"``, retryable): run
beside it, a write would happen twice.

An async tool that catches the cancellation and goes on (``except
CancelledError: pass`` in a loop) cannot be abandoned: anyio waits for every
task. It is stopped once it has waited ``GRACE`` (1 s) in a cancelled scope
(``Stoppable``: an exception it does not catch, thrown where it waits, so it
unwinds, a task group of its own included), so the run goes on; and a tool that
returns or raises after its timeout's cancellation reached it is reported as
timed out, since its answer came past the deadline. Not covered in the
caller's event loop: a task the tool started in a task group of its own that
swallows every cancellation. The group's exit waits for it (anyio shields that
wait; trio's nursery does the same), the tool is not resumed there, so it is
never closed, and the call, the turn and a consumer leaving all wait for that
task. Closing the tool would not help: its task group would be left broken and
the task running with nothing to wait for it; no task can outlive its group,
nor trio's run its tasks. A task that ignores the cancellation once and ends at
the next one is fine (``tests/test_runtime_s16_task_group_tool.py``). For code
that does worse, ``@tool(isolated=True)`` (``_isolated``) runs the async tool
in a worker thread, in an event loop of its own: past its timeout the call is
reported as timed out and the thread abandoned like a sync tool's (counted,
and cancelled in its own loop, so a tool that then ends frees it); the price is
that the tool cannot use objects of the caller's loop.

What the model is told: the exception's type and message (for an exception
group, such as an async tool's failed task group raises, the exceptions in it
too); the traceback only
with ``include_tracebacks=True`` (it can leak paths and source to the
model). A tool's ``StopIteration`` (``next()`` on an exhausted iterator) is
reported as itself, not as the ``RuntimeError`` Python turns it into when it
leaves a coroutine or generator (PEP 479). Turning the return value into
text (``format_result``) happens after the tool's own ``try``: the rare
value it cannot encode is reported as ``kind="unencodable_result"``, not as
the tool raising.

Arguments are validated leniently (``Tool.validate(lenient=True)``) because
prompt dialects such as ``am_xml`` carry numbers and booleans as text and the
parser has already checked them against the schema.
"""

from __future__ import annotations

import inspect
import math
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from functools import partial
from typing import Any

import anyio

from streamtools.errors import UsageError, describe_exception
from streamtools.events import CallEnd, ToolFailed, ToolFailedKind, ToolResult
from streamtools.results import cut_to_limit, format_result
from streamtools.runtime.call_key import CheckedCall, check_call
from streamtools.runtime.failures import describe_failure, may_pass
from streamtools.runtime.progress import CallClock, call_progress, reset_clock, set_clock
from streamtools.runtime.stoppable import Stoppable
from streamtools.tools import Tool, ToolRegistry

__all__ = [
    "MAX_ABANDONED_THREADS",
    "MAX_RESULT_CHARS",
    "Executor",
    "ThreadsAbandoned",
    "abandoned_threads",
    "check_concurrency",
    "check_result_chars",
    "check_seconds",
    "may_pass",
    "tool_value",
]


def check_seconds(name: str, value: float | None) -> None:
    """Refuse a time limit that is not a positive number of seconds (None: no limit):
    NaN fails inside anyio mid-run, zero or less cuts everything at once."""
    if value is not None and not value > 0:
        raise UsageError(f"{name} must be a positive number of seconds or None, got {value!r}")


def check_concurrency(value: int) -> None:
    """Refuse a concurrency limit below 1 (a limiter of 0 would hold every call
    forever) or that is not a whole number (``math.inf``: no limit), which anyio
    refuses only when the first run makes its limiter."""
    if not (value >= 1 and (isinstance(value, int) or value == math.inf)):
        raise UsageError(f"max_concurrency must be a whole number of at least 1, got {value!r}")


# The characters of a result (or a tool error) the model is given, by default.
MAX_RESULT_CHARS = 100_000


def check_result_chars(value: int | None) -> None:
    """Refuse a result limit that is not a whole number of characters (None: no
    limit) at least large enough for the note that says what was cut."""
    if value is not None and not (isinstance(value, int) and value >= 1000):
        raise UsageError(
            f"max_result_chars must be a whole number of at least 1000 or None, got {value!r}"
        )


class Executor:
    """Runs calls against a registry with a timeout and a concurrency limit;
    results longer than ``max_result_chars`` are cut (``results.cut_to_limit``)."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        timeout: float | None = 30.0,
        max_concurrency: int = 8,
        include_tracebacks: bool = False,
        max_result_chars: int | None = MAX_RESULT_CHARS,
    ) -> None:
        check_seconds("timeout", timeout)
        check_concurrency(max_concurrency)
        check_result_chars(max_result_chars)
        self.registry = registry
        self.timeout = timeout
        self.include_tracebacks = include_tracebacks
        self.max_result_chars = max_result_chars
        self.limiter = anyio.CapacityLimiter(max_concurrency)
        # By call signature: the worker threads a timed-out (or cancelled) call left
        # running, which a retry of that same call must not run beside.
        self._left_running: dict[str, list[_Worker]] = {}

    async def execute(self, call: CallEnd) -> ToolResult | ToolFailed:
        """Run ``call``; return its result or why it failed. Raises only cancellation
        and a tool's ``BaseException`` that is neither an ``Exception`` nor ``SystemExit``."""
        outcome, _ = await self.attempt(call)
        return outcome

    async def attempt(
        self, call: CallEnd, checked: CheckedCall | None = None
    ) -> tuple[ToolResult | ToolFailed, bool]:
        """``execute``'s outcome, and whether the same call might succeed if run
        again: it timed out, or raised what may pass (``may_pass``). The agent
        runs a call the model makes again only then (``streamtools.runtime.repair``).
        ``checked``: the call validated, when the caller has done it (the agent
        does, for its repeat key: ``call_key.check_call``): validated here again,
        a tool's own checks (a Struct's ``__post_init__``, pydantic's validators)
        ran once more per call."""
        tool = self.registry.get(call.name)
        if tool is None:
            message = self.registry.unknown_tool_message(call.name)
            return self._failed(call, "unknown_tool", message), False
        if checked is None or (checked.kwargs is None and checked.error is None):
            checked = check_call(call.name, call.arguments, tool)  # (no tool when checked)
        kwargs, key = checked.kwargs, checked.signature
        if kwargs is None:
            return self._failed(call, "invalid_arguments", str(checked.error)), False
        if any(worker.alive for worker in self._left_running.get(key, ())):
            return self._failed(call, "refused", _still_running(call.name)), True
        timeout = self.timeout if tool.timeout is None else tool.timeout  # the tool's own
        left: list[_Worker] = []
        async with self.limiter:
            value, failure, timed_out = await _timed_value(tool, kwargs, timeout, left)
        if left:
            self._left_running[key] = left
        if timed_out is not None:
            # Also when the tool caught the timeout's cancellation and then returned
            # or raised: past its deadline, what it gives is not its answer.
            return self._failed(call, "timeout", timed_out), True
        if isinstance(failure, ThreadsAbandoned):
            return self._failed(call, "exception", f"Tool {call.name!r} was {failure}."), True
        if failure is not None:
            failed = self._failed(call, "exception", self._describe(call.name, failure))
            return failed, may_pass(failure)
        # Outside the tool's try: the tool did run, and the model should not be told
        # it raised when only its result could not be written as text.
        try:
            content = format_result(value)
        except Exception as exc:
            message = (
                f"Tool {call.name!r} ran, but its result could not be turned into text: "
                + describe_exception(exc)
            )
            return self._failed(call, "unencodable_result", message), False
        content = cut_to_limit(content, self.max_result_chars)
        return ToolResult(index=call.index, id=call.id, name=call.name, content=content), False

    def _describe(self, name: str, exc: BaseException) -> str:
        return describe_failure(name, exc, tracebacks=self.include_tracebacks)

    def _failed(self, call: CallEnd, kind: ToolFailedKind, message: str) -> ToolFailed:
        # an exception's message (a traceback, a command's whole output) may be huge too
        message = cut_to_limit(message, self.max_result_chars)
        return ToolFailed(index=call.index, id=call.id, name=call.name, kind=kind, message=message)


async def _timed_value(
    tool: Tool, kwargs: dict[str, Any], seconds: float | None, left: list[_Worker]
) -> tuple[Any, BaseException | None, str | None]:
    """``tool_value`` under a timeout of ``seconds``: the value, what the tool raised, and
    why the timeout fired (None: it did not). The timeout runs only while the tool works: a
    wait for a worker thread (before a sync tool's thread, before the thread
    that takes the items of an iterator an async tool returned) is outside it,
    and the drain gets what the tool's own part left of it. Progress the tool
    reports starts it again (``CallClock``, ``streamtools.runtime.progress``)."""
    token = _ThreadToken()
    try:
        if _threaded(tool):
            await token.take()  # before the timeout starts
        value: Any = None
        failure: BaseException | None = None
        with anyio.move_on_after(seconds) as scope:
            clock = None if seconds is None else CallClock(scope, seconds, anyio.current_time())
            progress = call_progress()
            if progress is not None:  # a report is progress for the clock too
                progress.clock = clock
            clocked = set_clock(clock)
            try:
                value, failure = await _caught(_own_value(tool, kwargs, left, token))
            finally:
                reset_clock(clocked)
        remaining = None if clock is None else scope.deadline - anyio.current_time()
        if not scope.cancel_called and failure is None and _needs_thread(value):
            await token.take()  # outside the timeout, as a sync tool's wait
            with anyio.move_on_after(remaining) as scope:
                value, failure = await _caught(_drain(value, left, token.limiter))
        if scope.cancel_called and clock is not None:
            return value, failure, clock.describe(tool.name)
        return value, failure, None
    finally:
        token.give_back()


async def _caught(step: Coroutine[Any, Any, Any]) -> tuple[Any, BaseException | None]:
    """What ``step`` gives, or what the tool raised: an ``Exception``, a
    ``SystemExit`` (``sys.exit()`` or argparse refusing its arguments in a tool
    that wraps a command line; in a thread it ends only that), a cancellation
    the tool raised itself while nothing cancelled it. A real cancellation (ours,
    the timeout's) is raised."""
    try:
        return await step, None
    except (Exception, SystemExit) as exc:
        return None, exc
    except anyio.get_cancelled_exc_class() as exc:
        # Raises again when the cancellation is real; goes on when the tool raised
        # it itself (asyncio's CancelledError from a future someone else
        # cancelled): that is the tool failing.
        await anyio.lowlevel.checkpoint_if_cancelled()
        return None, exc


class _ThreadToken:
    """A call's token of anyio's default thread limiter (40 threads for the
    whole process, shared with everything else that uses ``to_thread``), taken
    before the call's timeout starts and given back as soon as the call's
    worker thread has returned (see the module docstring). Its thread runs under
    ``limiter``, the call's own, as the default token is already held.

    The token is borrowed by this object, not by the task: a coroutine the sync
    tool returns, awaited in this task, may use ``to_thread`` itself, and a task
    may hold only one token of a limiter ("this borrower is already holding one
    of this CapacityLimiter's tokens")."""

    def __init__(self) -> None:
        self.limiter = anyio.CapacityLimiter(1)
        self._threads: anyio.CapacityLimiter | None = None  # while held

    async def take(self) -> None:
        if self._threads is None:
            threads = anyio.to_thread.current_default_thread_limiter()
            await threads.acquire_on_behalf_of(self)
            self._threads = threads

    def give_back(self) -> None:
        if self._threads is not None:
            self._threads.release_on_behalf_of(self)
            self._threads = None


async def tool_value(
    tool: Tool, kwargs: dict[str, Any], *, left_running: list[_Worker] | None = None
) -> Any:
    """What ``tool`` finally gives for ``kwargs`` (see the module docstring): a
    returned awaitable awaited (a coroutine that swallows cancellation closed),
    an iterator's items collected, a sync tool in a worker thread abandoned on
    cancellation (and put in ``left_running``, when given). What it raises is
    raised. The MCP server runs tools through this too, so that a tool gives
    the same to both."""
    token = _ThreadToken()
    try:
        value = await _own_value(tool, kwargs, left_running, token)
        if _needs_thread(value):
            await token.take()
            value = await _drain(value, left_running, token.limiter)
        return value
    finally:
        token.give_back()


async def _own_value(
    tool: Tool, kwargs: dict[str, Any], left_running: list[_Worker] | None, token: _ThreadToken
) -> Any:
    """``tool_value`` but for the items of a sync iterator an async tool (or a
    coroutine) gave, which need a thread again (``_needs_thread``). A sync tool
    runs in a worker thread under ``token`` (taken here if not yet), which is
    given back as soon as the thread returns: a coroutine it returned is awaited
    on the event loop, and needs no thread."""
    if not _threaded(tool):
        value = tool.invoke(kwargs)
    else:
        await token.take()
        try:
            if tool.is_async:  # isolated
                value = await _isolated(tool, kwargs, left_running, token.limiter)
            else:
                value = await _called_in_thread(
                    partial(tool.invoke, kwargs), left_running, token.limiter
                )
        finally:
            token.give_back()
    return await _settled(value)


async def _settled(value: Any) -> Any:
    """What a tool's ``value`` finally gives, on the event loop (see ``_own_value``)."""
    # A sync function may still hand back an awaitable (a wrapped coroutine),
    # an async one a coroutine it forgot to await (``return helper()``).
    # A coroutine that swallows cancellation is stopped (``Stoppable``).
    while inspect.isawaitable(value):
        value = await (Stoppable(value) if inspect.iscoroutine(value) else value)
    # A generator's items are its result, not its repr (with a memory address);
    # a sync one is drained in a worker thread, as its body may block.
    if isinstance(value, AsyncIterator):
        value = await _collect(value)
    return value


def _threaded(tool: Tool) -> bool:
    """Whether ``tool`` runs in a worker thread: a sync one, an isolated async one."""
    return not tool.is_async or tool.isolated


async def _isolated(
    tool: Tool,
    kwargs: dict[str, Any],
    left_running: list[_Worker] | None,
    limiter: anyio.CapacityLimiter,
) -> Any:
    """An isolated async tool's value (``@tool(isolated=True)``): ``tool_value``
    in a worker thread, in an event loop of its own (of the caller's kind), so
    that the thread can be abandoned on cancellation as a sync tool's is. The
    tool is cancelled in its loop too, within ``_ISOLATED_POLL``: one that ends
    then frees its thread; one that cannot be stopped (a task it started that
    swallows every cancellation) keeps it, counted in ``abandoned_threads``."""
    stop = threading.Event()
    trio = anyio.get_cancelled_exc_class().__module__.startswith("trio")
    run = partial(_in_own_loop, tool, kwargs, stop, "trio" if trio else "asyncio")
    try:
        return await _in_thread(run, left_running, limiter)
    finally:
        stop.set()


# How often an isolated tool's own event loop looks whether its call was cancelled.
_ISOLATED_POLL = 0.05


def _in_own_loop(tool: Tool, kwargs: dict[str, Any], stop: threading.Event, backend: str) -> Any:
    """What an isolated async tool gives for ``kwargs``, run by a new event loop
    in this (worker) thread, cancelled once ``stop`` is set; what the tool raises
    is raised."""

    async def main() -> Any:
        got: list[Any] = []
        raised: list[BaseException] = []

        async def work() -> None:
            try:
                value = await _settled(tool.invoke(kwargs))
                got.append(await _drain(value, None) if _needs_thread(value) else value)
            except BaseException as exc:  # raised, plain, outside the task group
                raised.append(exc)
            finally:
                tg.cancel_scope.cancel()

        async with anyio.create_task_group() as tg:
            tg.start_soon(work)
            while not stop.is_set():  # noqa: ASYNC110 (a thread's event, not a loop's)
                await anyio.sleep(_ISOLATED_POLL)
            tg.cancel_scope.cancel()
        if raised:
            raise raised[0]
        return got[0] if got else None

    return anyio.run(main, backend=backend)


def _needs_thread(value: Any) -> bool:
    """Whether ``value`` is an iterator whose items are still to be taken, in a
    worker thread (a sync tool's own are taken in its thread: ``_called_in_thread``)."""
    return isinstance(value, Iterator)


class _Carried:
    """A ``GeneratorExit`` raised in a worker thread, carried out of it as a value:
    asyncio cannot raise one into the task awaiting the thread (the task fails
    with "coroutine ignored GeneratorExit", outside the caller's ``try``). Also a
    coroutine the thread's function returned: trio refuses one from a thread
    ("expected a sync function") before the caller could await it."""

    def __init__(self, exc: GeneratorExit | None = None, awaitable: Any = None) -> None:
        self.exc = exc
        self.awaitable = awaitable


# How many worker threads of sync tool calls abandoned on cancellation (see
# ``abandoned_threads``) may still be running before a new call is refused.
MAX_ABANDONED_THREADS = 16


class ThreadsAbandoned(RuntimeError):
    """A sync tool call refused: too many abandoned worker threads still run."""


class _Abandoned:
    """The worker threads abandoned still running, in the whole process (threads are)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count = 0


_ABANDONED = _Abandoned()


def abandoned_threads() -> int:
    """How many worker threads of sync tool calls this process abandoned (the call
    timed out, or its run was cancelled) are still running. Python cannot stop a
    thread: a tool blocked for ever (a network read with no timeout) keeps its
    thread, and one more with each call. Once ``MAX_ABANDONED_THREADS`` (16) are,
    a new sync call (a sync tool, or the items of an iterator an async tool
    returned) is not started: it fails as a tool error that says so, until some
    of them end."""
    return _ABANDONED.count


class _Worker:
    """One worker thread call: whether it started, ended, was abandoned."""

    def __init__(self) -> None:
        self.started = self.ended = self.abandoned = False

    @property
    def alive(self) -> bool:
        """Abandoned and still running (read without the lock: a stale answer
        only holds a retry back until the next look)."""
        return self.abandoned and not self.ended


def _still_running(name: str) -> str:
    return (
        f"Tool {name!r} was not run again: its call with these arguments that timed out "
        "is still running in its thread (a sync tool cannot be stopped), and may yet "
        "take effect. Do not repeat it now: check its effect another way, or answer."
    )


async def _in_thread(
    fn: Callable[[], Any],
    left_running: list[_Worker] | None = None,
    limiter: anyio.CapacityLimiter | None = None,
) -> Any:
    """``fn()`` in a worker thread, abandoned on cancellation; what it raises is raised."""
    worker = _Worker()
    counted = _ABANDONED  # the count this call goes into, and out of

    def run() -> Any:
        with counted.lock:
            worker.started = True
        try:
            value = fn()
        except GeneratorExit as exc:
            return _Carried(exc)
        finally:
            with counted.lock:
                worker.ended = True
                if worker.abandoned:
                    counted.count -= 1
        return _Carried(awaitable=value) if inspect.iscoroutine(value) else value

    with counted.lock:
        if counted.count >= MAX_ABANDONED_THREADS:
            raise ThreadsAbandoned(
                f"not run: {counted.count} earlier calls of sync tools that timed out or "
                "were cancelled are still running in their threads (the limit is "
                f"{MAX_ABANDONED_THREADS}); a sync tool is run again once some of them end"
            )
    try:
        value = await anyio.to_thread.run_sync(run, abandon_on_cancel=True, limiter=limiter)
    except anyio.get_cancelled_exc_class():
        with counted.lock:
            # not a call still waiting for a worker thread: it never runs
            if worker.started and not worker.ended:
                worker.abandoned = True
                counted.count += 1
                if left_running is not None:
                    left_running.append(worker)
        raise
    if isinstance(value, _Carried):
        if value.exc is not None:
            raise value.exc
        return value.awaitable
    return value


async def _drain(
    items: Iterator[Any],
    left_running: list[_Worker] | None,
    limiter: anyio.CapacityLimiter | None = None,
) -> list[Any]:
    """The items of an iterator an async tool returned, taken in a worker thread
    (its ``next`` may block), as ``_called_in_thread`` takes a sync tool's."""
    taken: list[Any] = await _called_in_thread(lambda: items, left_running, limiter)
    return taken


async def _called_in_thread(
    fn: Callable[[], Any],
    left_running: list[_Worker] | None,
    limiter: anyio.CapacityLimiter | None = None,
) -> Any:
    """A sync tool's ``fn()`` in a worker thread; an iterator it returns is drained
    in that same call, so in the thread that made it: drained by a second
    ``to_thread`` call, which may run in another worker thread, a thread-bound
    one failed (a ``sqlite3`` cursor: "SQLite objects created in a thread can
    only be used in that same thread"), as soon as calls ran at once.

    The thread is abandoned on cancellation (the timeout, the run cancelled),
    but it stops taking items at the next one and closes a generator: an
    endless one (``itertools.count()``, a ``tail -f``) would otherwise be
    drained into a list in the background until memory ran out."""
    stop = threading.Event()

    def call() -> Any:
        value = fn()
        return _take(value, stop) if isinstance(value, Iterator) else value

    try:
        return await _in_thread(call, left_running, limiter)
    finally:
        stop.set()


def _take(items: Iterator[Any], stop: threading.Event) -> list[Any]:
    """The items of ``items`` until ``stop`` is set; a generator cut short is closed."""
    out: list[Any] = []
    try:
        for item in items:
            if stop.is_set():
                break
            out.append(item)
    finally:
        close = getattr(items, "close", None)
        if stop.is_set() and callable(close):
            close()
    return out


async def _collect(items: AsyncIterator[Any]) -> list[Any]:
    """The items of an async iterator; an async generator is closed even when cut
    short. One that swallows the cancellation (its call's timeout, the run's) is
    cut: at the next item when it goes on yielding (an endless one piled items
    up for ever), and by ``Stoppable`` when it goes on waiting for one."""
    out: list[Any] = []
    try:
        while True:
            try:
                out.append(await Stoppable(_next(items)))
            except StopAsyncIteration:
                return out
            await anyio.lowlevel.checkpoint_if_cancelled()
    finally:
        aclose = getattr(items, "aclose", None)
        if aclose is not None:
            await aclose()


async def _next(items: AsyncIterator[Any]) -> Any:
    return await items.__anext__()
