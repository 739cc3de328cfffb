"""Stopping an async tool that swallows its cancellation (``Stoppable``).

See ``streamtools.runtime.executor`` (its module docstring) for where this fits:
a task cannot be abandoned in anyio, so a tool that catches the cancellation and
goes on would hold its call, its turn and a consumer leaving for ever.
"""

from __future__ import annotations

import math
from collections.abc import Coroutine, Generator
from typing import Any

import anyio

__all__ = ["GRACE", "Stoppable"]


# How long a tool may go on waiting after a cancellation reached it (its
# timeout, the run cancelled) before it is stopped.
GRACE = 1.0


class Stoppable:
    """``await Stoppable(coro)`` is ``await coro``, with one difference: a
    coroutine that catches the cancellation and goes on awaiting (``except
    CancelledError: pass`` in a loop) is stopped, and the cancellation raised,
    once it has waited in a cancelled scope for ``GRACE`` seconds on end. A task
    cannot be abandoned in anyio, so the turn (and a consumer leaving the
    ``stream`` block) would otherwise wait for such a tool for ever.

    Stopping throws ``_Stop`` where it waits, the next time the event loop
    resumes it (so the wait it had registered is over, as for any resumption):
    neither ``except CancelledError`` nor ``except Exception`` catches it, and
    the tool unwinds as from any exception, its ``finally`` blocks and
    ``async with`` exits run and may await: a task group of its own cancels and
    waits for its children, and its cancel scopes close in order. (Closing the
    coroutine, as before, raised ``GeneratorExit`` there, which cannot await:
    a task group's exit could not wait for its children, which ran on orphaned,
    and its cancel scope was left open in the task, which then failed with
    "Attempted to exit a cancel scope that isn't the current tasks's current
    cancel scope" on asyncio, "Cancel scope stack corrupted" on trio.) A tool
    that catches ``_Stop`` too gets it again at each resumption of a wait in a
    cancelled scope, until it lets it through. It is never closed: a close (the
    last resort before) threw ``GeneratorExit``, which a tool that catches
    ``BaseException`` caught too, and awaited again inside trio's ``sleep``, so
    the coroutine was left suspended with the sleep's cancel scope open ("Cancel
    scope stack corrupted"). A tool that catches every exception for ever is
    not stopped (``@tool(isolated=True)`` is for such code). A scope the tool
    shields is not cancelled: its cleanup there is left alone (so is a task
    group's exit waiting for a child that swallows every cancellation: see
    ``streamtools.runtime.executor``). A tool waiting inside an async
    generator (an ``async for``) is stopped too: the exception goes into the
    generator's frame, which unwinds with it (closing, which left that frame
    suspended with its cancel scopes open, made such a tool be waited for). An
    async generator tool's items are each awaited through it. Each step is passed through
    unchanged, so the tool runs in the caller's task and cancel scopes as if
    awaited directly. (Whether a wait is in a cancelled scope is asked
    of anyio, ``current_effective_deadline`` being minus infinity: trio
    delivers a cancellation as a value sent in, not as an exception thrown.)"""

    def __init__(self, coro: Coroutine[Any, Any, Any]) -> None:
        self.coro = coro

    def __await__(self) -> Generator[Any, Any, Any]:
        coro = self.coro
        sent: Any = None
        thrown: BaseException | None = None
        since: float | None = None  # when it first waited in a cancelled scope
        stop: _Stop | None = None  # thrown into it at its next resumption
        stopped = False  # ``_Stop`` was thrown into it
        while True:
            try:
                step = coro.send(sent) if thrown is None else coro.throw(thrown)
            except StopIteration as done:
                return done.value
            except BaseException as exc:
                if not (stopped and _stopped(exc)):
                    raise
                yield from anyio.lowlevel.checkpoint_if_cancelled().__await__()
                raise RuntimeError("a tool was stopped in a scope that is not cancelled") from exc
            if anyio.current_effective_deadline() != -math.inf:
                since = None  # a scope of its own it had let expire is over
            else:
                now = anyio.current_time()
                since = now if since is None else since
                # Once stopped, again at each resumption: it caught ``_Stop``.
                if stopped or now - since >= GRACE:
                    stop, since = _Stop(), None
            try:
                sent, thrown = (yield step), None
            except BaseException as exc:
                sent, thrown = None, exc
            if stop is not None:  # instead of what the loop resumed it with
                sent, thrown, stop, stopped = None, stop, None, True


class _Stop(BaseException):
    """Thrown into a tool that swallowed its cancellation (``Stoppable``): not
    an ``Exception``, nor a cancellation, so that neither handler catches it."""


def _stopped(exc: BaseException) -> bool:
    """Whether ``exc`` is ``_Stop`` coming back out of the tool, alone or in the
    exception group a task group of the tool's made of it (with what its
    children raised as they were cancelled)."""
    if isinstance(exc, BaseExceptionGroup):
        return exc.subgroup(_Stop) is not None
    return isinstance(exc, _Stop)
