"""The event stream a run is consumed through (DESIGN §5).

Theory of operation
-------------------
``event_stream(run)`` is the stream plumbing, shared by ``Agent.stream`` and
``HybridAgent.stream``. It is an async context manager: entering it starts
``run(emit)`` in a task group it owns and hands back an async iterator of
events; ``emit`` sends them through a memory object stream (a small buffer,
so a slow consumer holds the model back instead of piling events up).
Leaving the block, for any reason, cancels that task group: the model
request (its ``stream`` context is exited, which closes the HTTP response)
and every running tool are cancelled, and the block does not exit until they
are gone. Nothing outlives it.

The run's own exceptions (``BudgetExceeded``, ``ProviderError``, …) are not
raised out of the task group, where they would arrive wrapped in an exception
group and cancel the consumer mid-iteration; they are stored and raised by
the iterator after the last event, as a plain exception. So is a
``BaseException`` that is not an ``Exception`` (``KeyboardInterrupt``, a
test's ``pytest.fail``, raised by a tool or by the model's stream). An
exception raised by the consumer's own code in the block comes out unchanged
too, ``BaseException`` or not. Only cancellation goes through the task group,
as it must. What ``run`` returns is kept as ``EventStream.result``, with
``usage``: the sum (``Usage.plus``) of every ``Usage`` event the run emitted,
one per model request, seen here as they pass, so that a hybrid agent's
selection request and its work agent's requests count alike. A run that
ends in ``BudgetExceeded``, ``RepairExhausted`` or ``ProviderError`` carries
the same sum as the error's ``usage``: the tokens a failed run spent are
billed all the same, and with ``run`` the caller has no other way to them.
``EventStream.usage`` is the sum so far, for a consumer that leaves the block
before the end (a stopped run is billed too).

``stream()`` methods are written as generators under ``@events_context``,
which is ``asynccontextmanager`` but for one thing: what it returns
(``StreamContext``) refuses ``async for`` with a ``TypeError`` that shows the
``async with`` form, where Python's own error named a private class (the
SDKs' streams are iterated directly, and people try that first).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import TYPE_CHECKING, NoReturn, ParamSpec

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from streamtools.errors import BudgetExceeded, ProviderError, RepairExhausted
from streamtools.events import Event, Usage
from streamtools.runtime.turn import Emit
from streamtools.transcript import Transcript

__all__ = [
    "EventStream", "RunResult", "StreamContext", "as_transcript", "drain", "event_stream",
    "events_context",
]

_BUFFER = 64


@dataclass(frozen=True)
class RunResult:
    """The outcome of ``Agent.run``: the final answer, the transcript, the turns
    used, and the tokens the run's model requests used, summed (``Usage.plus``:
    a count no request reported stays None; prompt-cache counts included).
    ``truncated``: the answer was cut off at the output token limit (as
    ``Final.truncated``): ``text`` is what came before the cut."""

    text: str
    transcript: Transcript
    turns: int
    usage: Usage = field(default_factory=Usage)
    truncated: bool = False


class EventStream:
    """The async iterator ``Agent.stream`` yields; raises the loop's error after the
    last event. ``usage``: the tokens of the run's requests so far (see the module
    docstring); ``result``: the run's result once it has ended with one."""

    def __init__(self, receive: MemoryObjectReceiveStream[Event]) -> None:
        self._receive = receive
        self.error: BaseException | None = None
        self.result: RunResult | None = None
        # The tokens used so far, as each request's ``Usage`` passes: what a
        # consumer that leaves the block (a stopped run) has spent too.
        self.usage = Usage()

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> Event:
        # Buffered events are taken without a checkpoint each: the consumer still
        # yields whenever the buffer is empty, so at least every ``_BUFFER`` events.
        try:
            return self._receive.receive_nowait()
        except anyio.WouldBlock:
            try:
                return await self._receive.receive()
            except anyio.EndOfStream:
                pass
        except anyio.EndOfStream:
            pass
        # Raised outside the except blocks so that the error keeps its own
        # cause and context, not EndOfStream's.
        if self.error is not None:
            raise self.error
        raise StopAsyncIteration


@asynccontextmanager
async def event_stream(run: Callable[[Emit], Awaitable[RunResult]]) -> AsyncIterator[EventStream]:
    """Run ``run(emit)`` in a task group of its own and yield the events it emits.

    The run's exception comes out of the iterator, plain, after the events
    before it; leaving the block cancels the run and waits for it to end.
    """
    send, receive = anyio.create_memory_object_stream[Event](_BUFFER)
    events = EventStream(receive)
    total = Usage()

    async def emit(event: Event) -> None:
        nonlocal total
        if type(event) is Usage:
            total = events.usage = total.plus(event)
        # Fast path without a scheduling round trip per event; the bounded
        # buffer still holds the run back when the consumer falls behind.
        try:
            send.send_nowait(event)
        except anyio.WouldBlock:
            await send.send(event)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            # The consumer closed its end, which it does only after cancelling
            # the run: take the cancellation here rather than fail a task with
            # an error that would reach the consumer inside an exception group.
            await anyio.lowlevel.checkpoint()
            raise

    async def drive() -> None:
        async with send:
            try:
                events.result = replace(await run(emit), usage=total)
            except anyio.get_cancelled_exc_class():
                raise
            except BaseException as exc:
                if isinstance(exc, BudgetExceeded | RepairExhausted | ProviderError):
                    # What the run spent goes with it (the outermost stream's sum:
                    # a hybrid agent's selection request counts too).
                    exc.usage = total
                events.error = exc

    error: BaseException | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(drive)
        try:
            yield events
        except anyio.get_cancelled_exc_class():
            raise
        except BaseException as exc:
            # Raised again below, outside the task group, unwrapped.
            error = exc
        finally:
            tg.cancel_scope.cancel()
            receive.close()
    if error is not None:
        raise error


_P = ParamSpec("_P")


class StreamContext(AbstractAsyncContextManager[EventStream]):
    """What an agent's ``stream(prompt)`` returns: entered, the run's events."""

    def __init__(self, manager: AbstractAsyncContextManager[EventStream]) -> None:
        self._manager = manager

    async def __aenter__(self) -> EventStream:
        return await self._manager.__aenter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        return await self._manager.__aexit__(exc_type, exc, traceback)

    if not TYPE_CHECKING:  # hidden from type checkers, so that mypy too reports the misuse

        def __aiter__(self) -> NoReturn:
            raise TypeError(
                "stream() gives an async context manager, not the events: write "
                "`async with agent.stream(prompt) as events:` then "
                "`async for event in events:` (leaving the block cancels the run)"
            )


def events_context(
    method: Callable[_P, AsyncIterator[EventStream]],
) -> Callable[_P, StreamContext]:
    """``asynccontextmanager`` for ``stream()`` methods (see the module docstring)."""
    manager = asynccontextmanager(method)

    @functools.wraps(method)
    def stream(*args: _P.args, **kwargs: _P.kwargs) -> StreamContext:
        return StreamContext(manager(*args, **kwargs))

    return stream


async def drain(stream: AbstractAsyncContextManager[EventStream]) -> RunResult:
    """Consume an agent's event stream to its end and return the run's result."""
    async with stream as events:
        async for _ in events:
            pass
    assert events.result is not None  # the loop either set it or raised
    return events.result


def as_transcript(prompt: str | Transcript) -> Transcript:
    """``prompt`` itself when it is a transcript, else a new one holding it as the user's turn."""
    if isinstance(prompt, Transcript):
        return prompt
    transcript = Transcript()
    transcript.user(prompt)
    return transcript
