"""The agent loop: turns, budgets, repair, and the event stream (DESIGN §5).

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
the iterator after the last event, as a plain exception. An exception raised
by the consumer's own code in the block comes out unchanged too. What ``run``
returns is kept as ``EventStream.result``.

One turn (see ``streamtools.runtime.turn``): project the transcript with
``streamtools.prompts.project`` (the only place that builds request
messages), stream the model through the decoder, dispatch calls eagerly,
wait for the tools. Then the transcript gets the assistant reply (visible
text, with the raw text of any failed call left in place so that a repair
prompt refers to something the model can see; reasoning; calls with their
raw text) and the results paired by call id, in call order, whatever order
they finished in. Call ids are unique across the whole transcript
(``call_<reply>_<n>``, counting the replies already in a transcript passed
in), so pairing by id stays unambiguous.

Deciding what comes next, in order (``streamtools.runtime.repair`` has the
wording and the bounds):

1. call errors, while ``max_repairs`` allows: feedback, ``Retry(call_error)``;
2. calls: their results are in the transcript, the model is called again;
3. ``am:request_tools`` only: the named tools join the offer, continue;
4. a stream that failed and produced nothing usable: ``ProviderError``;
5. a refusal, or no call when one is required: one stronger re-prompt;
6. otherwise the reply is the answer: ``TurnEnd(final)``, ``Final``, unless
   the repairs ran out on a reply that is nothing but failed or refused calls
   (no visible text): then ``RepairExhausted``, never a silent empty answer.

Every model call counts against ``max_turns`` (repairs included), so the
loop always ends; ``time_budget`` bounds the whole run in seconds. Both raise
``BudgetExceeded``.

``stop_at_call`` ends a reply at its first complete call: the dialect's stop
marker goes into the request's ``stop`` (the provider cuts there, and the
parser completes the call at ``end()``), and the runtime also cuts
client-side at the first ``CallEnd`` for providers that ignore ``stop``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from streamtools.errors import BudgetExceeded, ProviderError, UsageError
from streamtools.events import Event, Final, Retry, ToolFailed, ToolResult, TurnEnd, TurnStart
from streamtools.model import Model, ModelRequest, ToolSpec
from streamtools.prompts import get_renderer, project
from streamtools.runtime.decoders import NativeDecoder, PromptDecoder, requested_tools
from streamtools.runtime.executor import Executor
from streamtools.runtime.repair import (
    RepairState,
    call_error_feedback,
    exhausted,
    looks_like_refusal,
    missing_call_reprompt,
    refusal_reprompt,
)
from streamtools.runtime.turn import Decoder, Emit, Reply, TurnContext, run_turn
from streamtools.tools import Tool, ToolRegistry
from streamtools.transcript import AssistantMessage, ToolCall, ToolResultMessage, Transcript

__all__ = ["Agent", "Emit", "EventStream", "RunResult", "event_stream"]

_BUFFER = 64


@dataclass(frozen=True)
class RunResult:
    """The outcome of ``Agent.run``: the final answer, the transcript, the turns used."""

    text: str
    transcript: Transcript
    turns: int


class EventStream:
    """The async iterator ``Agent.stream`` yields; raises the loop's error after the last event."""

    def __init__(self, receive: MemoryObjectReceiveStream[Event]) -> None:
        self._receive = receive
        self.error: Exception | None = None
        self.result: RunResult | None = None

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

    async def emit(event: Event) -> None:
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
                events.result = await run(emit)
            except Exception as exc:
                events.error = exc

    error: Exception | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(drive)
        try:
            yield events
        except Exception as exc:
            # Raised again below, outside the task group, unwrapped.
            error = exc
        finally:
            tg.cancel_scope.cancel()
            receive.close()
    if error is not None:
        raise error


class Agent:
    """Runs a model with tools until it answers; see the module docstring."""

    def __init__(
        self,
        model: Model,
        tools: ToolRegistry | Iterable[Tool | Callable[..., Any]] = (),
        *,
        dialect: str = "am_xml",
        native: bool = False,
        system: str | None = None,
        max_turns: int = 8,
        time_budget: float | None = None,
        tool_timeout: float | None = 30.0,
        max_concurrency: int = 8,
        stop_at_call: bool = False,
        tool_choice: str = "auto",
        stop: str | Sequence[str] = (),
        temperature: float | None = None,
        max_tokens: int | None = None,
        include_tracebacks: bool = False,
        max_repairs: int = 2,
        offer: Iterable[str] | None = None,
    ) -> None:
        if max_turns < 1:
            raise UsageError(f"max_turns must be at least 1, got {max_turns}")
        self.model = model
        self.registry = tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools)
        self.renderer = get_renderer(dialect)
        self.dialect = dialect
        self.native = native
        self.system = system
        self.max_turns = max_turns
        self.time_budget = time_budget
        self.tool_timeout = tool_timeout
        self.max_concurrency = max_concurrency
        self.stop_at_call = stop_at_call
        if tool_choice not in ("auto", "none", "required") and tool_choice not in self.registry:
            raise UsageError(
                f"tool_choice must be auto, none, required or a tool name, got {tool_choice!r}"
            )
        self.tool_choice = tool_choice
        # A str is itself a Sequence[str]: taken as one stop string, not its characters.
        self.stop: tuple[str, ...] = (stop,) if isinstance(stop, str) else tuple(stop)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.include_tracebacks = include_tracebacks
        self.max_repairs = max_repairs
        # ``offer``: the tools described in full at first (None: all of them);
        # ``am:request_tools`` adds more from the registry during a run.
        self.offer = None if offer is None else list(offer)

    # --- public API ------------------------------------------------------------

    @asynccontextmanager
    async def stream(self, prompt: str | Transcript) -> AsyncIterator[EventStream]:
        """Run the loop for ``prompt``; yield its events. Leaving the block cancels the run."""
        transcript = as_transcript(prompt)  # on entering the block, as before the run starts
        async with event_stream(lambda emit: self._loop(transcript, emit)) as events:
            yield events

    async def run(self, prompt: str | Transcript) -> RunResult:
        """Run to the final answer and return it with the transcript."""
        return await drain(self.stream(prompt))

    # --- the loop -------------------------------------------------------------

    async def _loop(self, transcript: Transcript, emit: Emit) -> RunResult:
        repair = RepairState(max_repairs=self.max_repairs)
        executor = Executor(
            self.registry,
            timeout=self.tool_timeout,
            max_concurrency=self.max_concurrency,
            include_tracebacks=self.include_tracebacks,
        )
        offered = self.registry if self.offer is None else self.registry.subset(self.offer)
        turn = 0
        # Replies already in a transcript passed in (a chat's earlier runs): ids
        # continue from there, so they stay unique across the whole transcript.
        earlier = sum(isinstance(m, AssistantMessage) for m in transcript.messages)
        with anyio.move_on_after(self.time_budget):
            while True:
                if turn >= self.max_turns:
                    raise BudgetExceeded(
                        f"no final answer after {self.max_turns} turns", turns=turn
                    )
                turn += 1
                final_turn = repair.stopping
                await emit(TurnStart(turn=turn))
                specs = [] if self.tool_choice == "none" else offered.specs()
                ctx = TurnContext(
                    turn=turn,
                    model=self.model,
                    decoder=self._decoder(f"call_{earlier + turn}_", offered),
                    executor=executor,
                    repair=repair,
                    emit=emit,
                    stop_at_call=self.stop_at_call,
                    stop_marker=self.renderer.stop_marker,
                    tool_request=requested_tools,
                )
                try:
                    reply = await run_turn(ctx, self._request(transcript, specs, final_turn))
                except Exception:
                    await emit(TurnEnd(turn=turn, reason="error"))
                    raise
                _append_reply(transcript, reply, native=self.native)
                for name in reply.requested_tools:
                    if name in self.registry and name not in offered:
                        offered = self.registry.subset([*offered, name])
                try:
                    step = self._next_step(reply, repair, offered, final_turn)
                    if step is None:
                        _check_exhausted(reply, repair, turn)
                except Exception:
                    await emit(TurnEnd(turn=turn, reason="error"))
                    raise
                if step is None:
                    await emit(TurnEnd(turn=turn, reason="final"))
                    await emit(Final(text=reply.visible_text, turns=turn))
                    return RunResult(text=reply.visible_text, transcript=transcript, turns=turn)
                reason, message = step
                if message is not None:
                    transcript.user(message)
                if reason in ("call_error", "refusal", "missing_call"):
                    await emit(Retry(turn=turn, reason=reason, message=message or ""))
                    await emit(TurnEnd(turn=turn, reason="retry"))
                else:
                    await emit(TurnEnd(turn=turn, reason="tool_calls"))
        raise BudgetExceeded(
            f"time budget of {self.time_budget:g} s ran out during turn {turn}", turns=turn
        )

    def _next_step(
        self, reply: Reply, repair: RepairState, offered: ToolRegistry, final_turn: bool
    ) -> tuple[str, str | None] | None:
        """What follows ``reply``: None for the final answer, else (reason, message to add)."""
        reminder = self.renderer.format_reminder()
        if final_turn:
            return None
        if reply.errors and repair.can_repair():
            repair.call_error_repairs += 1
            return "call_error", call_error_feedback(reply.errors, reminder)
        if reply.calls:
            return "tool_calls", None
        if reply.requested_tools:
            found = ", ".join(n for n in reply.requested_tools if n in self.registry)
            return "tool_calls", f"These tools are now available: {found or '(none found)'}."
        if reply.finish is not None and reply.finish.reason == "error":
            raise ProviderError(reply.finish.message or "the model stream ended with an error")
        if repair.reprompted or not len(offered) or self.tool_choice == "none":
            return None
        names = list(offered)
        if self.tool_choice != "auto" and repair.calls_run == 0:
            repair.reprompted = True
            return "missing_call", missing_call_reprompt(names, reminder)
        if looks_like_refusal(reply.visible_text):
            repair.reprompted = True
            return "refusal", refusal_reprompt(names, reminder)
        return None

    def _request(
        self, transcript: Transcript, specs: Sequence[ToolSpec], final_turn: bool
    ) -> ModelRequest:
        stop = list(self.stop)
        marker = self.renderer.stop_marker
        if self.stop_at_call and not self.native and marker and marker not in stop:
            stop.append(marker)
        rest: list[ToolSpec] = []
        if self.offer is not None and not self.native:
            # Hybrid: tools not offered in full are listed in one line each, with
            # how to ask for them (``am:request_tools``), after the definitions.
            shown = {spec.name for spec in specs}
            rest = [spec for spec in self.registry.specs() if spec.name not in shown]
        messages = project(
            transcript,
            self.dialect,
            specs,
            native=self.native,
            system=self.system,
            more_tools=rest,
        )
        native_tools = tuple(specs) if self.native and specs else None
        choice = None
        if native_tools is not None:
            choice = "none" if final_turn else self.tool_choice
        return ModelRequest(
            messages=tuple(messages),
            stop=tuple(stop),
            tools=native_tools,
            tool_choice=choice,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
        )

    def _decoder(self, id_prefix: str, offered: ToolRegistry) -> Decoder:
        if self.native:
            return NativeDecoder(offered, id_prefix=id_prefix)
        return PromptDecoder(self.dialect, offered, self.stop, id_prefix=id_prefix)


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


def _check_exhausted(reply: Reply, repair: RepairState, turn: int) -> None:
    refused = [
        o.message
        for c in reply.calls
        if isinstance(o := reply.outcomes.get(c.id), ToolFailed) and o.kind == "refused"
    ]
    error = exhausted(
        repair, text=reply.visible_text, errors=reply.errors, refused=refused, turns=turn
    )
    if error is not None:
        raise error


def _append_reply(transcript: Transcript, reply: Reply, *, native: bool) -> None:
    calls = tuple(
        ToolCall(id=c.id, name=c.name, arguments=c.arguments, raw=None if native else c.raw)
        for c in reply.calls
    )
    transcript.add(
        AssistantMessage(
            text="".join(reply.written), calls=calls, reasoning="".join(reply.reasoning)
        )
    )
    for call in reply.calls:
        outcome = reply.outcomes[call.id]
        if isinstance(outcome, ToolResult):
            result = ToolResultMessage(call_id=call.id, name=call.name, content=outcome.content)
        else:
            result = ToolResultMessage(
                call_id=call.id, name=call.name, content=outcome.message, is_error=True
            )
        transcript.add(result)
