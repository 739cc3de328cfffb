"""A running call's timeout, which a tool that reports progress keeps going.

Theory of operation
-------------------
The executor (``streamtools.runtime.executor``) runs each call under a timeout
(the tool's own, else the agent's ``tool_timeout``). While the call runs, its
``CallClock`` is the current one (``call_clock()``, a context variable of the
call's task). A tool that can tell it is still at work says so with
``clock.progressed()``: the timeout starts again from that moment. The
timeout thus bounds how long a call may go *without a word*; a call that keeps
reporting may run past it, up to ten times it in all (``PROGRESS_CAP``), or up
to the limit the tool gives (``progressed(until=...)``) when it bounds itself.

The MCP client is the reporter (``streamtools.mcp.connection``): a call asks
the server for progress, and each ``notifications/progress`` goes on to the
clock, with the MCP client's own limit in all (ten times ``call_timeout``).
Before, a 2-minute MCP build or search that reported progress all along was
cut at the agent's 30 s by the executor, whatever the MCP client allowed. A
tool that reports nothing (a silent MCP call, a plain function) is cut at its
timeout as ever; an MCP call so cut is cancelled, which the SDK tells the
server (``notifications/cancelled``).

Decided with what peers do: the MCP TypeScript SDK's ``resetTimeoutOnProgress``
with ``maxTotalTimeout`` (a call is cut after a stretch of silence, progress
starts it again, a limit in all stays, as the MCP spec asks); the OpenAI Agents
SDK and pydantic-ai bound an MCP call by a per-server read timeout alone, and
Claude Code users asked for ``MCP_TOOL_TIMEOUT`` because one fixed limit cut
long tools. Rather than exempting MCP tools from the agent's timeout (a silent
call would then wait the MCP client's 60 s, not the ``tool_timeout`` the user
set) or a hard limit whatever the server says. ``streamtools chat`` and ``ui``
give MCP calls no ``call_timeout`` of their own, so ``--tool-timeout`` alone
bounds them (``streamtools.cli.mcp_options``).

Nothing here is I/O: ``progressed`` only moves the deadline of the call's
cancel scope, and may be called from any task of the call's event loop (the
MCP SDK calls back from its receive loop), not from another thread: a sync
tool says so through ``anyio.from_thread.run_sync(clock.progressed)``. A
tool takes the clock with ``call_clock()`` in its own task, before handing it
to another (a context variable is the task's own).

Progress to show
----------------
How far a call has come is shown too: the agent makes a ``CallProgress`` for
each call it runs (``call_progress()``, a context variable of the call's task,
as the clock is, and of the worker thread a sync tool runs in), and
``report(progress, total, message)`` sends a ``ToolProgress`` event between the
call's ``CallEnd`` and its result, to the console (``streamtools chat``) and
the browser (``streamtools ui``); it also tells the call's clock that the tool
is at work (``progressed``). MCP progress notifications are reported so
(``streamtools.mcp.connection``). A report does not wait for the consumer: it
keeps the latest, and a task (started in the turn's task group at the call's
first report: a call that reports nothing costs nothing, and its result is not
held up) sends it when the event stream takes it, so a tool that reports a
thousand times a second costs a few events, not a thousand, and a slow consumer
never holds up a tool, nor the MCP SDK's reader that calls back. A report after
the call has ended is dropped; one being sent then goes before the result.
``report`` may be called from the event loop or from a worker thread of the
call (a sync tool's, whose clock it then moves on the loop).

Decided with what peers do: the MCP spec's progress (``progress``, optional
``total`` and ``message``); the AI SDK sends such updates to a page as
transient data parts, shown and not kept in the conversation.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Awaitable, Callable
from contextvars import ContextVar, Token

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.abc import TaskGroup

from streamtools.errors import UsageError
from streamtools.events import CallEnd, ToolProgress

__all__ = ["PROGRESS_CAP", "CallClock", "CallProgress", "call_clock", "call_progress"]

# A call that keeps reporting progress may take this many times its timeout in all.
PROGRESS_CAP = 10


class CallClock:
    """The timeout of one running call (``seconds`` from ``start``, on ``scope``)."""

    def __init__(self, scope: anyio.CancelScope, seconds: float, start: float) -> None:
        self.scope = scope
        self.seconds = seconds
        self.start = start
        self.heard = False  # whether the tool reported progress
        self.latest = start + seconds * PROGRESS_CAP

    def progressed(self, until: float | None = None) -> None:
        """The tool is still at work: its timeout starts again from now. In all the
        call may run ``PROGRESS_CAP`` times its timeout, or until ``until`` (a
        time of ``anyio.current_time()``'s clock) when the tool bounds itself."""
        self.heard = True
        if until is not None:
            self.latest = max(until, self.start + self.seconds)
        self.scope.deadline = min(anyio.current_time() + self.seconds, self.latest)

    def describe(self, name: str) -> str:
        """Why the call ran out of time, for the model."""
        if not self.heard:
            return f"Tool {name!r} timed out after {self.seconds:g} s."
        if self.scope.deadline >= self.latest:
            return (
                f"Tool {name!r} timed out: it reported progress, but did not finish within "
                f"{self.latest - self.start:g} s, the most a call may take while it does."
            )
        return (
            f"Tool {name!r} timed out: it reported progress, then nothing for "
            f"{self.seconds:g} s."
        )


_CLOCK: ContextVar[CallClock | None] = ContextVar("streamtools_call_clock", default=None)


def call_clock() -> CallClock | None:
    """The clock of the call this task runs for the executor (None: none, or no
    timeout)."""
    return _CLOCK.get()


def set_clock(clock: CallClock | None) -> Token[CallClock | None]:
    """Make ``clock`` the current one; ``reset_clock`` undoes it."""
    return _CLOCK.set(clock)


def reset_clock(token: Token[CallClock | None]) -> None:
    """Undo a ``set_clock``."""
    _CLOCK.reset(token)


class CallProgress:
    """How far one running call has come, for whoever reads the run's events
    (see "Progress to show" in the module docstring): reports go to ``emit``
    from a task started in ``tasks`` at the first. ``clock``: the call's
    timeout, which each report starts again (set by the executor)."""

    def __init__(
        self, call: CallEnd, tasks: TaskGroup, emit: Callable[[ToolProgress], Awaitable[None]]
    ) -> None:
        self.call = call
        self._tasks = tasks
        self._emit = emit
        self._forwarding = False
        self._sending: anyio.Event | None = None  # set once the report being sent is
        self.clock: CallClock | None = None
        self._latest: ToolProgress | None = None
        self._wake = anyio.Event()
        self._ended = False
        self._thread = threading.get_ident()  # the event loop's
        self._token = anyio.lowlevel.current_token()

    def report(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """The call has come ``progress`` of ``total`` (None: unknown), with
        ``message`` to show; it is still at work (its timeout starts again).
        Raises ``UsageError`` for a progress or total that is not a finite number,
        or a message that is not a string."""
        if not _finite(progress) or (total is not None and not _finite(total)):
            raise UsageError(
                f"progress and total must be finite numbers, got {progress!r} and {total!r}"
            )
        if message is not None and not isinstance(message, str):
            raise UsageError(f"a progress message must be a string, got {type(message).__name__}")
        call = self.call
        event = ToolProgress(
            index=call.index, id=call.id, name=call.name, progress=float(progress),
            total=None if total is None else float(total), message=message,
        )
        if threading.get_ident() == self._thread:
            self._note(event)
            return
        try:
            anyio.from_thread.run_sync(self._note, event, token=self._token)
        except anyio.RunFinishedError:
            pass  # a thread abandoned past its call's end: nobody to tell

    def _note(self, event: ToolProgress) -> None:
        if self._ended:
            return
        self._latest = event
        self._wake.set()
        if not self._forwarding:  # the first report: a call that makes none costs nothing
            self._forwarding = True
            self._tasks.start_soon(self._forward)
        if self.clock is not None:
            self.clock.progressed()

    def close(self) -> None:
        """The call has ended: later reports are dropped, the forwarding task ends."""
        self._ended = True
        self._wake.set()

    async def sent(self) -> None:
        """Once closed: wait for a report being sent, which goes before the outcome."""
        if self._sending is not None:
            await self._sending.wait()

    async def _forward(self) -> None:
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            event, self._latest = self._latest, None
            if self._ended:
                return
            if event is not None:
                self._sending = anyio.Event()
                try:
                    await self._emit(event)
                finally:
                    self._sending.set()
                    self._sending = None


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


_PROGRESS: ContextVar[CallProgress | None] = ContextVar("streamtools_call_progress", default=None)


def call_progress() -> CallProgress | None:
    """Where the call this task (or worker thread) runs for the agent, or for an
    MCP client (``streamtools.mcp.server``), reports its progress; None elsewhere
    (a bare ``Executor``, a test)."""
    return _PROGRESS.get()


def set_progress(progress: CallProgress | None) -> Token[CallProgress | None]:
    """Make ``progress`` the current one; ``reset_progress`` undoes it."""
    return _PROGRESS.set(progress)


def reset_progress(token: Token[CallProgress | None]) -> None:
    """Undo a ``set_progress``."""
    _PROGRESS.reset(token)
