"""One turn of the agent: stream the model, decode, dispatch calls eagerly.

Theory of operation
-------------------
``run_turn`` opens the model stream inside a task group that belongs to this
turn. Each chunk goes through a decoder (the sans-IO ``Parser`` in prompt
mode, ``NativeCalls`` in native mode) and every event it yields is sent on
at once. A ``CallEnd`` is dispatched to the executor in the turn's task group
the moment it arrives, while the model is still streaming (eager dispatch);
results are sent on as they complete, so a consumer sees a fast tool's result
before a slow model has finished its reply. What a running tool reports of its
progress is sent on too (``ToolProgress``, before its result: ``_reporting``).
A call of a tool marked ``sequential`` (a write) runs alone, in its place in the reply: it waits for
every call dispatched before it, and the calls after it wait for it (``_order``),
so a read the model wrote after a write sees it; the wait is not part of a
call's timeout.

The turn ends when the stream does, or earlier when we cut it client-side:
with ``stop_at_call`` at the first ``CallEnd`` (for providers that ignore the
``stop`` we sent), or when the parser reports that a user stop sequence was
hit. Leaving the ``model.stream`` block is what cancels the request. The task
group then waits for the turn's tools; each has its own timeout, so this
cannot hang.

Failures: a model stream that raises (``ProviderError``…) cancels the turn's
tools and re-raises after the task group closes, so the caller sees the
exception itself, not an exception group. So does a tool that raises what the
executor does not turn into a ``ToolFailed`` (a ``BaseException`` that is not
an ``Exception``, see ``streamtools.runtime.executor``): the model stream and
the other tools are cancelled, and ``run_turn`` raises it. A stream that
*finishes* with ``reason="error"`` is reported as a ``StreamError`` event; the decoder's
``end()`` then turns a call left open into a ``CallError``, which the repair
ladder handles. So is one that finishes with ``reason="pause"`` (the server
paused the turn and the provider did not go on with it: see
``unfinished_stream``), as ``StreamError(kind="pause")``.

``max_calls`` (``Agent(max_calls_per_reply=…)``): the calls of a reply past
that many are not run; each is a ``ToolFailed(kind="refused")`` that tells the
model so, climbs no repair rung, and counts as no earlier call: made again in
a later reply, it runs.

Repeated identical calls are caught here, before they run (see
``streamtools.runtime.repair``), by their signature (name and arguments); a
retry of a call that timed out or raised what may pass in an earlier reply
runs, within its bound. What a call is told depends only on the calls before
it in the reply and on earlier replies, never on which of this reply's tools
finished first.

Call ids. ``Reply.offsets`` and ``Reply.outcomes`` are keyed by call id for
one reply only, where ids are unique: the parser numbers its calls, and
``NativeCalls`` gives a call whose provider id an earlier call of the same
reply has a fresh one. Nothing that outlives the turn is keyed by id, since a
provider may use the same ids again in its next reply (``call_0`` every turn).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, assert_never

import anyio
from anyio.abc import TaskGroup

from streamtools.events import (
    ArgsDelta,
    CallEnd,
    CallError,
    CallStart,
    Event,
    Finish,
    ParserEvent,
    ReasoningDelta,
    ReasoningRetracted,
    Retry,
    StreamError,
    StreamErrorKind,
    TextDelta,
    ToolFailed,
    ToolResult,
    Usage,
)
from streamtools.model import (
    CallChunk,
    FinishChunk,
    Model,
    ModelRequest,
    ReasoningChunk,
    ReasoningOrigin,
    TextChunk,
    Thinking,
    UsageChunk,
)
from streamtools.runtime.call_key import CheckedCall, check_call
from streamtools.runtime.executor import Executor
from streamtools.runtime.progress import CallProgress, reset_progress, set_progress
from streamtools.runtime.repair import (
    OUT_OF_TOKENS,
    RepairState,
    over_call_limit,
    repeat_redirect,
    repeat_stop,
    repeat_twin,
)
from streamtools.tools import Tool

__all__ = ["Decoder", "Reply", "TurnContext", "run_turn", "unfinished_stream"]

Emit = Callable[[Event], Awaitable[None]]


class Decoder(Protocol):
    """What a turn needs from the parser (prompt mode) or ``NativeCalls`` (native)."""

    @property
    def stopped(self) -> bool: ...

    def text(self, text: str) -> list[ParserEvent]: ...

    def reasoning(self) -> list[ParserEvent]:
        """The provider sent reasoning in its own channel (a ``ReasoningChunk``
        with text); the events that ends, before that reasoning's."""
        ...

    def call(self, chunk: CallChunk) -> list[ParserEvent]: ...

    def validated(self, call: CallEnd) -> dict[str, Any] | None:
        """The keyword arguments the decoder's own check of ``call`` gave (the
        prompt parser's), or None: the runtime validates them itself."""
        ...

    def end(self, finish: FinishChunk | None) -> list[ParserEvent]: ...

    @property
    def reread(self) -> bool:
        """``end`` read the reply's opening reasoning (``think_open``) again as
        its answer: the reasoning so far was that answer (``decoders.TextReader``)."""
        ...


@dataclass
class Reply:
    """Everything one model reply produced."""

    text: list[str] = field(default_factory=list)
    # Visible text plus the raw text of failed calls, in order: what the
    # transcript keeps, so the model sees what it wrote when it is asked to fix it.
    written: list[str] = field(default_factory=list)
    written_size: int = 0  # characters in ``written``
    offsets: dict[str, int] = field(default_factory=dict)  # call id: ``written_size`` then
    # call id: the characters of visible text before it (native mode's transcript
    # keeps the visible text only, without the raw text of failed calls)
    text_offsets: dict[str, int] = field(default_factory=dict)
    text_size: int = 0  # characters in ``text``
    reasoning: list[str] = field(default_factory=list)
    # Signed reasoning blocks (``ReasoningChunk.signature`` / ``redacted``), and the
    # reasoning text since the last one: the text of the block its signature ends.
    thinking: list[Thinking] = field(default_factory=list)
    unsigned: list[str] = field(default_factory=list)
    # where the reasoning came from, for the server that sent it to take it back
    origin: ReasoningOrigin | None = None
    calls: list[CallEnd] = field(default_factory=list)
    errors: list[CallError] = field(default_factory=list)
    outcomes: dict[str, ToolResult | ToolFailed] = field(default_factory=dict)
    requested_tools: list[str] = field(default_factory=list)
    signatures: set[str] = field(default_factory=set)  # of the calls dispatched so far
    # Set as each dispatched call ends, in dispatch order; and the last sequential one's.
    ended: list[anyio.Event] = field(default_factory=list)
    barrier: anyio.Event | None = None
    finish: FinishChunk | None = None
    cut: bool = False
    # What a tool raised that the executor does not report (a ``BaseException``
    # that is not an ``Exception``): raised by ``run_turn`` after its task group.
    aborted: BaseException | None = None

    @property
    def visible_text(self) -> str:
        return "".join(self.text)


@dataclass
class TurnContext:
    """What stays fixed for one turn."""

    turn: int
    model: Model
    decoder: Decoder
    executor: Executor
    repair: RepairState
    emit: Emit
    stop_at_call: bool = False
    stop_marker: str | None = None
    max_calls: int | None = None  # run per reply (``Agent(max_calls_per_reply=…)``)
    # The reply is one JSON object whose answer is its text (``json_object`` in
    # prompt mode): an object the token limit cut in its answer is that answer.
    answer_object: bool = False
    # The tool error of every call of the reply, none run (the last turn of
    # ``Agent(answer_at_max_turns=True)``), or None.
    no_calls: str | None = None
    # Given a CallEnd, the tool names it requests (``am:request_tools``), or None
    # when it is an ordinary call.
    tool_request: Callable[[CallEnd], list[str] | None] = lambda call: None


async def run_turn(ctx: TurnContext, request: ModelRequest, reply: Reply | None = None) -> Reply:
    """Stream one model reply, running its calls as they complete; return what it
    produced. ``reply``: where to gather it, for a caller that needs what a turn
    cancelled midway had produced (a time budget's)."""
    reply = Reply() if reply is None else reply
    failure: BaseException | None = None
    async with anyio.create_task_group() as tools:
        try:
            await _read(ctx, request, reply, tools)
        except anyio.get_cancelled_exc_class():
            raise
        except BaseException as exc:
            # Re-raised below, outside the task group, so it is not wrapped in a group.
            failure = exc
            tools.cancel_scope.cancel()
    if reply.aborted is not None:
        raise reply.aborted
    if failure is not None:
        raise failure
    return reply


async def _read(ctx: TurnContext, request: ModelRequest, reply: Reply, tools: TaskGroup) -> None:
    async with ctx.model.stream(request) as chunks:
        async for chunk in chunks:
            match chunk:
                case TextChunk(text=text):
                    events = ctx.decoder.text(text)
                case ReasoningChunk(text=text):
                    events = []
                    if text:  # the opening reasoning of ``think_open`` ends (``decoders``)
                        events = ctx.decoder.reasoning()
                        events.append(ReasoningDelta(text=text, origin=chunk.origin))
                    _sign(reply, chunk)
                case CallChunk():
                    events = ctx.decoder.call(chunk)
                case UsageChunk():
                    await ctx.emit(Usage.of(chunk))
                    events = []
                case FinishChunk():
                    reply.finish = chunk
                    events = []
                case _:
                    assert_never(chunk)
            for event in events:
                await _handle(ctx, event, reply, tools)
                if reply.cut:
                    break
            # Not on FinishChunk: some providers send usage after the finish.
            if reply.cut or ctx.decoder.stopped:
                break
    # The request is closed (cancelled if it was still running) from here on.
    unfinished = unfinished_stream(reply.finish)
    if unfinished is not None:
        await ctx.emit(StreamError(kind=unfinished[0], message=unfinished[1]))
    if reply.cut:
        await ctx.emit(Finish(reason="stop", stop_sequence=ctx.stop_marker))
        return
    ends = ctx.decoder.end(reply.finish)
    if ctx.decoder.reread:
        # it was the answer, which follows: not kept twice, and a UI drops what it showed
        if reply.reasoning:
            await ctx.emit(ReasoningRetracted(text="".join(reply.reasoning)))
        reply.reasoning.clear()
    for event in ends:
        if reply.cut and ctx.decoder.reread:
            # Read again at its end, the reply is cut at its first call as one read
            # as it came is (``stop_at_call``): the calls and text after it are not run
            # nor kept (a provider that ignores ``stop`` goes on past the call).
            await ctx.emit(Finish(reason="stop", stop_sequence=ctx.stop_marker))
            return
        if ctx.answer_object and isinstance(event, CallError) and _cut_answer(event, reply):
            continue  # json_object's answer cut at the token limit: not a call
        await _handle(ctx, event, reply, tools)


def _cut_answer(event: CallError, reply: Reply) -> bool:
    """Whether ``event``, from the end of a ``json_object`` reply, is the object
    the output token limit cut in its answer (``{"final": {"content": "The long
    answ``): unterminated, no tool named, its answer's text so far out as text.
    It is the answer, cut short (``Final(truncated=True)``), as a reply in any
    other dialect or in native mode is, where the limit cuts the text: no
    ``CallError`` ("the call to the tool was cut off") for what was no call, nor
    its raw in the transcript. Asked again, it would be cut again. An object cut
    in its call, or in its thought before any answer, stays a ``CallError``."""
    finish = reply.finish.reason if reply.finish is not None else None
    return (
        event.reason == "unterminated"
        and event.name is None
        and finish in OUT_OF_TOKENS
        and bool(reply.visible_text.strip())
    )


def unfinished_stream(finish: FinishChunk | None) -> tuple[StreamErrorKind, str] | None:
    """``(kind, message)`` of the ``StreamError`` for a reply whose stream ended
    without the model finishing it, None for one it finished: ``"stream"`` for an
    error finish (the stream broke), ``"pause"`` for a turn the server paused and
    did not go on with (Anthropic's ``pause_turn`` past the provider's
    ``max_pauses``): its text so far is no answer."""
    if finish is None or finish.reason not in _UNFINISHED:
        return None
    kind, default = _UNFINISHED[finish.reason]
    return kind, finish.message or default


_UNFINISHED: dict[str, tuple[StreamErrorKind, str]] = {
    "error": ("stream", "the model stream ended with an error"),
    "pause": (
        "pause",
        "the server paused the model's turn (pause_turn) and it was not continued; "
        "the answer is unfinished",
    ),
}


def _sign(reply: Reply, chunk: ReasoningChunk) -> None:
    """Keep the provider's signed reasoning blocks, to be sent back as they came,
    each with the number of calls before it (its place among them)."""
    reply.unsigned.append(chunk.text)
    if chunk.origin is not None:
        reply.origin = chunk.origin
    if chunk.redacted is not None:
        reply.thinking.append(Thinking(redacted=chunk.redacted, calls=len(reply.calls)))
    elif chunk.signature is not None:
        text = "".join(reply.unsigned)
        block = Thinking(text=text, signature=chunk.signature, calls=len(reply.calls))
        reply.thinking.append(block)
        reply.unsigned.clear()


def _write(reply: Reply, text: str) -> None:
    reply.written.append(text)
    reply.written_size += len(text)


async def _handle(ctx: TurnContext, event: ParserEvent, reply: Reply, tools: TaskGroup) -> None:
    match event:
        case TextDelta(text=text):
            reply.text.append(text)
            reply.text_size += len(text)
            _write(reply, text)
        case ReasoningDelta(text=text):
            reply.reasoning.append(text)
        case CallError():
            reply.errors.append(event)
            _write(reply, event.raw)
        case CallEnd():
            await ctx.emit(event)
            requested = ctx.tool_request(event)
            if requested is not None:
                reply.requested_tools.extend(requested)
                _write(reply, event.raw)
                return
            reply.offsets[event.id] = reply.written_size
            reply.text_offsets[event.id] = reply.text_size
            reply.calls.append(event)
            await _dispatch(ctx, event, reply, tools)
            if ctx.stop_at_call:
                reply.cut = True
            return
        case CallStart() | ArgsDelta() | Finish():
            pass
    await ctx.emit(event)


async def _dispatch(ctx: TurnContext, call: CallEnd, reply: Reply, tools: TaskGroup) -> None:
    repair = ctx.repair
    tool = ctx.executor.registry.get(call.name)
    # the one validation of the call: the parser's, or this one
    checked = check_call(call.name, call.arguments, tool, ctx.decoder.validated(call))
    signature = checked.signature
    if ctx.no_calls is not None:
        await _refuse(ctx, call, reply, ctx.no_calls)
        return
    if repair.stopping:
        repeated = signature in repair.seen
        await _refuse(ctx, call, reply, repeat_stop(call.name, repeated=repeated))
        return
    if ctx.max_calls is not None and len(reply.calls) > ctx.max_calls:
        # Past the reply's limit: not run, and not seen (no repeat when made again).
        await _refuse(ctx, call, reply, over_call_limit(call.name, ctx.max_calls))
        return
    repeatable = tool is not None and tool.repeatable  # polled: a repeat is no loop
    if signature in reply.signatures and not repeatable:
        # The same call earlier in this reply (see ``repair``): not run, whatever
        # became of the first, and no rung climbed. A repeatable tool's twin is
        # another call ("roll two dice"): it runs.
        await _refuse(ctx, call, reply, repeat_twin(call.name))
        return
    reply.signatures.add(signature)
    if signature not in repair.seen or repeatable or repair.may_retry(signature):
        if signature in repair.seen and not repeatable:  # a retry of a failed call
            repair.retries[signature] = repair.retries.get(signature, 0) + 1
        repair.seen.add(signature)
        tools.start_soon(_run_tool, ctx, call, reply, checked, tools, _order(reply, tool))
        return
    if not repair.redirected:
        repair.redirected = True
        # An earlier reply's result: all of its calls have finished.
        previous = repair.results.get(signature)
        failed = signature in repair.errored
        runs = 1 + repair.retries.get(signature, 0)
        message = repeat_redirect(call.name, previous, failed=failed, runs=runs)
        await ctx.emit(Retry(turn=ctx.turn, reason="repeated_call", message=message))
        await _refuse(ctx, call, reply, message)
        return
    repair.stopping = True
    await _refuse(ctx, call, reply, repeat_stop(call.name))


async def _refuse(ctx: TurnContext, call: CallEnd, reply: Reply, message: str) -> None:
    failed = ToolFailed(
        index=call.index, id=call.id, name=call.name, kind="refused", message=message
    )
    reply.outcomes[call.id] = failed
    await ctx.emit(failed)


def _order(reply: Reply, tool: Tool | None) -> tuple[list[anyio.Event], anyio.Event]:
    """What a call dispatched now waits for before it runs, and the event it
    sets when it ends: a sequential tool's call waits for every call before it
    in the reply, any other call for the last sequential one before it."""
    ended = anyio.Event()
    if tool is not None and tool.sequential:
        waits, reply.barrier = list(reply.ended), ended
    else:
        waits = [] if reply.barrier is None else [reply.barrier]
    reply.ended.append(ended)
    return waits, ended


async def _run_tool(
    ctx: TurnContext,
    call: CallEnd,
    reply: Reply,
    checked: CheckedCall,
    tools: TaskGroup,
    order: tuple[list[anyio.Event], anyio.Event],
) -> None:
    waits, ended = order
    try:
        try:
            for earlier in waits:  # before the call's timeout starts
                await earlier.wait()
            outcome, retryable = await _reporting(ctx, call, checked, tools)
        finally:
            ended.set()  # its effects are done: the calls waiting for it may run
    except anyio.get_cancelled_exc_class():
        raise
    except BaseException as exc:
        # Not a tool error (see ``Executor``): the turn stops and ``run_turn``
        # raises it, plain rather than in an exception group from this task.
        if reply.aborted is None:
            reply.aborted = exc
        tools.cancel_scope.cancel()
        return
    reply.outcomes[call.id] = outcome
    ctx.repair.ran(checked.signature, outcome, retryable=retryable)
    await ctx.emit(outcome)


async def _reporting(
    ctx: TurnContext, call: CallEnd, checked: CheckedCall, tools: TaskGroup
) -> tuple[ToolResult | ToolFailed, bool]:
    """The executor's ``attempt``, with the progress the tool reports sent on as
    ``ToolProgress`` events meanwhile (``streamtools.runtime.progress``): all of
    them before its outcome, which the caller sends."""
    progress = CallProgress(call, tools, ctx.emit)
    token = set_progress(progress)
    try:
        attempted = await ctx.executor.attempt(call, checked)
    finally:
        reset_progress(token)
        progress.close()
    await progress.sent()
    return attempted
