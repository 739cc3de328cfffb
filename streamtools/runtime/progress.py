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
"""

from __future__ import annotations

from contextvars import ContextVar, Token

import anyio

__all__ = ["PROGRESS_CAP", "CallClock", "call_clock"]

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
