"""The agent loop: turns, budgets and repair (DESIGN §5).

Theory of operation
-------------------
The event stream plumbing under ``Agent.stream`` (``event_stream``, ``EventStream``,
``RunResult``) is in ``streamtools.runtime.stream``.

One turn (see ``streamtools.runtime.turn``): project the transcript with
``streamtools.prompts.project`` (the only place that builds request
messages), stream the model through the decoder, dispatch calls eagerly,
wait for the tools. Then the transcript gets the assistant reply (visible
text, with the raw text of any failed call left in place so that a repair
prompt refers to something the model can see; reasoning; calls with their
raw text) and the results paired by call id, in call order, whatever order
they finished in. In native mode a failed call's raw text (its argument JSON)
is left out: the call was never text, and a reply that showed the model
writing calls as text would teach it just that; the repair prompt quotes it.
Ids are unique within a reply, which is where results are
paired (``prompts.project`` pairs results with the reply they follow). Ids we
make are unique across the whole transcript (``call_<reply>_<n>``, counting
the replies already in a transcript passed in); in native mode a provider's
own ids are kept, as its API expects them back, and may repeat in later
replies (``call_0`` every turn), so nothing across turns is keyed by id.

Deciding what comes next, in order (``streamtools.runtime.repair`` has the
wording and the bounds):

1. call errors, while ``max_repairs`` allows: feedback, ``Retry(call_error)``;
   a call the output token limit cut off is repaired once per run, then
   ``RepairExhausted(reason="max_tokens")`` (see ``repair``);
2. calls: their results are in the transcript, the model is called again;
3. ``am:request_tools`` only: the named tools join the offer, continue; a
   request that grants nothing (no tool exists by that name, ``tool_choice``
   is ``"none"``, or every tool it names is already offered) is told so, as
   rung 1, within ``max_repairs``;
4. a stream that failed and produced nothing usable: ``ProviderError``;
   the cut reply is left out of the transcript (see below). So is a reply
   the server paused (``Finish(reason="pause")``: Anthropic's ``pause_turn``,
   its server tools at their iteration limit) that the provider did not go on
   with (past ``AnthropicMessages(max_pauses=...)``): the model had not
   finished, and its text so far taken as the answer would end the run as if
   it had. The agent cannot go on with it itself: the server tools' blocks
   the API needs back are the provider's, not in the transcript;
5. a refusal, or no call when one is required: one stronger re-prompt; so
   too, once per run, a short reply that ends by announcing a call it did not
   make ("Let me check the weather.", or words ending in a colon), which
   models (local ones, Gemini, GPT-4.1) write and then stop:
   ``Retry(missing_call)``, saying to make the call or answer;
6. a reply with nothing in it (no text, no call): one re-prompt asking for
   the answer (``Retry(reason="empty_reply")``); empty again,
   ``RepairExhausted(reason="empty_reply")`` (``"max_tokens"`` when the token
   limit cut it: all reasoning, ``reply_checks.empty_answer``);
7. otherwise the reply is the answer: ``TurnEnd(final)``, ``Final`` (with
   ``truncated`` when it ended at the output token limit; so does a
   ``json_object`` answer cut so, its object no ``CallError``: ``turn._cut_answer``),
   unless
   the repairs ran out on a reply that is nothing but failed or refused calls
   (no visible text): then ``RepairExhausted``, never a silent empty answer.

Every model call counts against ``max_turns`` (repairs included), so the
loop always ends; ``time_budget`` bounds the whole run in seconds. Both raise
``BudgetExceeded``. The calls of the last turn ``max_turns`` allows run, as
the model asked, though no turn is left to read their results: the results
go in the transcript ``BudgetExceeded`` carries, for a run that goes on from
it (refused, a step the caller allowed would never happen). A repair the last
turn would need (rungs 1, 5 and 6) is not announced: no ``Retry``, and the turn
ends with ``TurnEnd(reason="error")`` before ``BudgetExceeded``, its feedback
written to the transcript the error carries all the same. A turn the
time budget cut short still gets its ``TurnEnd(reason="error")``, as a turn
that failed does, and its reply so far goes in the transcript, with the
results of the calls that finished and, for a call still running, a tool
error saying it did not finish: the history ``BudgetExceeded`` carries must
show a call that ran, lest a run going on from it make it again. Once a
reply is known to be the answer, the run ends with it (``TurnEnd(final)``,
``Final``) even if the budget runs out while a slow consumer's full buffer
holds those two events back.

A turn the consumer stopped (leaving the ``stream`` block, cancelling ``run``)
goes in the transcript as one the time budget cut short does: the reply so
far, the results of the calls that finished, and a tool error for a call still
running ("the run was stopped while it ran"). A chat that goes on from it
keeps what its user saw, and a run going on from it knows which calls ran
(left out, a model not told of them could make them again).

A model stream that fails (it raises ``ProviderError``, or ends with an
error and rung 4 raises one) leaves the transcript as it was before that
turn: a chat that catches the error and asks again must not send the model a
reply cut off mid-sentence as if it had said it. Earlier turns stay, their
tool calls and results above all (the tools ran). The cut reply's visible
text is on the error (``ProviderError.partial_text``), and the history on
``ProviderError.transcript``. A failed stream whose reply has calls is not
rung 4: its complete calls ran and are kept with their results, and a call it
cut off is a ``CallError`` for rung 1. So is a reply with calls whose stream
raised (whatever it raised): it goes in the transcript before the error is
raised, a call still running told that it did not finish; and a reply one of
whose tools stopped the run (its ``KeyboardInterrupt``), the other calls' results
kept and a call cut short told the run was stopped while it ran.

``stop_at_call`` ends a reply at its first complete call: the dialect's stop
marker goes into the request's ``stop`` (the provider cuts there, and the
parser completes the call at ``end()``), and the runtime also cuts
client-side at the first ``CallEnd`` for providers that ignore ``stop``.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Any, Literal

import anyio

from streamtools.errors import (
    BudgetExceeded,
    ProviderError,
    RepairExhausted,
    UsageError,
)
from streamtools.events import Final, Retry, RetryReason, TurnEnd, TurnStart
from streamtools.model import Model, ModelRequest, ToolChoice, ToolSpec, UseTool
from streamtools.parser.markers import stop_strings
from streamtools.prompts import get_renderer, project
from streamtools.prompts.choice import choice_instruction
from streamtools.runtime.decoders import NativeDecoder, PromptDecoder, requested_tools
from streamtools.runtime.executor import (
    MAX_RESULT_CHARS,
    Executor,
    check_concurrency,
    check_result_chars,
    check_seconds,
)
from streamtools.runtime.history import FAILED, OUT_OF_TIME, STOPPED, append_reply
from streamtools.runtime.repair import (
    LAST_TURN_NOTE,
    LAST_TURN_REFUSAL,
    OUT_OF_TOKENS,
    RepairState,
    announced_reprompt,
    call_error_feedback,
    cut_calls,
    cut_exhausted,
    looks_like_announcement,
    looks_like_refusal,
    missing_call_reprompt,
    refusal_reprompt,
)
from streamtools.runtime.reply_checks import (
    NATIVE_REMINDER,
    RETRIES,
    check_exhausted,
    check_stream,
    empty_answer,
    not_granted,
)
from streamtools.runtime.stream import (
    EventStream,
    RunResult,
    as_transcript,
    drain,
    event_stream,
    events_context,
)
from streamtools.runtime.tool_choice import agent_choice, check_choice, choice_met
from streamtools.runtime.turn import (
    Decoder,
    Emit,
    Reply,
    TurnContext,
    run_turn,
)
from streamtools.tools import Tool, ToolRegistry
from streamtools.transcript import (
    AssistantMessage,
    Transcript,
    UserMessage,
)

__all__ = ["Agent"]


def check_model(model: object, who: str) -> None:
    """Refuse at once what is not a ``Model``: a model's name given for the model
    (``Agent("qwen3:8b", tools)``) failed only at the first run, with
    ``'str' object has no attribute 'stream'``."""
    if not isinstance(model, Model):
        raise TypeError(
            f"{who}() takes a model provider, an object with .stream(request), not "
            f"{type(model).__name__} {model!r}: make one from streamtools.providers, "
            f'e.g. {who}(OpenAIChat("qwen3:8b", base_url="http://127.0.0.1:11434/v1"), tools) '
            f'or {who}(OllamaChat("qwen3:8b"), tools)'
        )


class Agent:
    """Runs a model with tools until it answers; see the module docstring.

    ``tool_choice`` is ``"auto"``, ``"none"`` (no tool is shown or run),
    ``"required"`` (some call is required before the answer), or the tool that
    must be called: ``UseTool(name)``, or for short the name itself. A tool
    named like a keyword (``auto``, ``none``, ``required``) can only be chosen
    with ``UseTool``; the bare string is the keyword. In native mode a forced
    choice goes in the request until a call it asks for has run (any call for
    ``required``, a call to the named tool for ``UseTool``), then ``auto``: a
    model still forced to call a tool could never give its answer. The tool that
    must be called is offered in full even if ``offer`` leaves it out. It must be
    in the registry when a run starts, not when the agent is made (a registry
    filled later, with an MCP server's tools, works): a run whose named tool is
    missing raises ``UsageError`` before its first request.

    ``think_open=True``: the model's chat template ends the prompt with
    ``<think>`` (DeepSeek-R1 and its distills, QwQ, Qwen3 thinking templates),
    so every reply begins inside reasoning, ``reasoning…</think>answer``: the
    parser starts there (see ``Parser``), and a call written in the reasoning
    does not run. With ``native=True`` too: the text of a server that does not
    split the reasoning out (llama-server's ``--reasoning-format none``) is
    read the same way, and a ``<think>…</think>`` in it is reasoning with or
    without the option (``NativeDecoder``). A server that splits reasoning into
    its own field (``reasoning_content``, Ollama's ``thinking``: llama-server's
    default ``--reasoning-format``, vLLM's and SGLang's reasoning parsers) has
    read that ``<think>`` itself and sends no ``</think>``: its first reasoning
    chunk ends the opening reasoning, and the text after it is text
    (``decoders.TextReader``), in either mode; a reply already out of its
    reasoning is unchanged. A reply that finishes with no ``</think>`` at all
    (the model skipped its thinking) is read again as one without the option:
    its text, streamed as reasoning, comes again as the answer (``TextDelta``),
    and a call in it runs; one cut at the token limit stays reasoning.

    ``max_result_chars`` (100,000; None: no limit): a tool's result, or its
    error, longer than that reaches the model (and the transcript, and the
    ``ToolResult`` event) cut to its start and end around a note saying so
    (``results.cut_to_limit``): a result of megabytes would go into every
    later request, past any model's context, and fail them all.

    ``max_calls_per_reply`` (None: no limit): the calls of one reply past that
    many are not run (small models write the same kind of call ten times over).
    Each is a ``ToolFailed(kind="refused")``, in the transcript as a tool error
    telling the model only the first N of a reply are run and to make it again
    after their results if it still needs it; it climbs no repair rung, and made
    again in a later reply it runs. The first N run as ever (eagerly, at most
    ``max_concurrency`` at once: that limits calls running together, this one
    calls per reply). With 1 in native mode, the request also says so where the
    API can (``ModelRequest.parallel_tool_calls``: OpenAI-compatible
    ``parallel_tool_calls: false``, Anthropic's ``disable_parallel_tool_use``;
    a server that refuses the field is asked again without it), so the model
    writes one call and no turn is spent on calls refused; the limit holds
    whether the model heeds it or not. Ollama's API has no such field. In a
    prompt dialect, 1 sends the dialect's stop marker as ``stop`` (as
    ``stop_at_call`` does, without its client-side cut): the reply ends with
    its first call, before the model writes more calls, or their results.

    ``answer_at_max_turns=True``: the last turn ``max_turns`` allows (from the
    second) asks for the answer instead of more calls (``repair.LAST_TURN_NOTE``,
    in that request only; native ``tool_choice`` ``none``); a call written
    anyway is refused, not run. A reply without calls is then the ``Final``
    answer, where the run would have raised ``BudgetExceeded`` (which it still
    does for a reply of calls, or one that needs a repair).

    A tool's ``Exception`` (and ``SystemExit``) is a tool error the model is
    told about. A tool's other ``BaseException`` (``KeyboardInterrupt``,
    ``GeneratorExit``, ``pytest.fail``'s ``Failed``, a user class deriving from
    ``BaseException``) stops the run: the turn ends with ``TurnEnd(reason="error")``
    and the exception is raised as itself, never in an ``ExceptionGroup``, by
    the stream after its last event, or by ``run`` (see
    ``streamtools.runtime.executor``).
    """

    # declared, not left to inference, which pyright widens to ``str | UseTool``
    tool_choice: ToolChoice

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
        tool_choice: str | UseTool = "auto",
        stop: str | Sequence[str] = (),
        temperature: float | None = None,
        max_tokens: int | None = None,
        top_p: float | None = None,
        top_k: int | None = None,
        seed: int | None = None,
        presence_penalty: float | None = None,
        frequency_penalty: float | None = None,
        include_tracebacks: bool = False,
        max_result_chars: int | None = MAX_RESULT_CHARS,
        max_repairs: int = 2,
        max_calls_per_reply: int | None = None,
        offer: Iterable[str] | None = None,
        think_open: bool = False,
        answer_at_max_turns: bool = False,
    ) -> None:
        check_model(model, "Agent")
        if not max_turns >= 1:  # NaN too: no turn would ever be the last
            raise UsageError(f"max_turns must be at least 1, got {max_turns}")
        # checked here, not when the first run makes its executor
        check_seconds("time_budget", time_budget)
        check_seconds("tool_timeout", tool_timeout)
        check_concurrency(max_concurrency)
        check_result_chars(max_result_chars)
        if not (isinstance(max_repairs, int) and max_repairs >= 0):
            # None failed only when a call first needed repair ("'<' not supported")
            raise UsageError(
                f"max_repairs must be a whole number of at least 0, got {max_repairs!r}"
            )
        if max_calls_per_reply is not None and not (
            type(max_calls_per_reply) is int and max_calls_per_reply >= 1
        ):
            raise UsageError(
                "max_calls_per_reply must be a whole number of at least 1 or None, "
                f"got {max_calls_per_reply!r}"
            )
        for option, value in (
            ("temperature", temperature),
            ("top_p", top_p),
            ("presence_penalty", presence_penalty),
            ("frequency_penalty", frequency_penalty),
        ):  # JSON has no NaN: msgspec writes it as null, and the server samples at its default
            if value is not None and not math.isfinite(value):
                raise UsageError(f"{option} must be a finite number or None, got {value!r}")
        self.think_open = think_open
        self.answer_at_max_turns = answer_at_max_turns
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
        self.tool_choice = agent_choice(tool_choice)
        # A str is itself a Sequence[str]: taken as one stop string, not its characters.
        self.stop: tuple[str, ...] = (stop,) if isinstance(stop, str) else tuple(stop)
        stop_strings(self.stop)  # an empty or non-str one is refused now, not at a run
        self.temperature = temperature
        self.max_tokens = max_tokens
        # sent to the APIs that take them (see ``streamtools.model.sampling``)
        self.sampling: dict[str, Any] = {
            "top_p": top_p,
            "top_k": top_k,
            "seed": seed,
            "presence_penalty": presence_penalty,
            "frequency_penalty": frequency_penalty,
        }
        self.include_tracebacks = include_tracebacks
        self.max_result_chars = max_result_chars
        self.max_repairs = max_repairs
        self.max_calls_per_reply = max_calls_per_reply
        # ``offer``: the tools described in full at first (None: all of them);
        # ``am:request_tools`` adds more from the registry during a run.
        # A str is itself an Iterable[str]: one tool's name, not its characters (as ``stop``).
        self.offer = None if offer is None else [offer] if isinstance(offer, str) else list(offer)
        forced = self.tool_choice.name if isinstance(self.tool_choice, UseTool) else None
        if self.offer is not None and forced is not None and forced not in self.offer:
            # The tool that must be called, left out (a HybridAgent's selection did
            # not pick it), could only be refused as unknown: it is offered in full.
            self.offer.append(forced)

    # --- public API ------------------------------------------------------------

    @events_context
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
        try:
            return await self._turns(transcript, emit)
        except (BudgetExceeded, RepairExhausted, ProviderError) as exc:
            # The history so far goes with the error: with a str prompt the caller
            # has no other way to the work done (tool results, the model's text).
            exc.transcript = exc.transcript or transcript
            raise

    async def _turns(self, transcript: Transcript, emit: Emit) -> RunResult:
        check_choice(self.tool_choice, self.registry)  # before the first event
        repair = RepairState(max_repairs=self.max_repairs)
        executor = Executor(
            self.registry,
            timeout=self.tool_timeout,
            max_concurrency=self.max_concurrency,
            include_tracebacks=self.include_tracebacks,
            max_result_chars=self.max_result_chars,
        )
        # The names offered in full (None: every tool), the registry read each turn:
        # a tool removed mid-run (an MCP server withdrew it) is no longer shown.
        offer = None if self.offer is None else list(self.offer)
        turn = 0
        # Replies already in a transcript passed in (a chat's earlier runs): ids
        # continue from there, so they stay unique across the whole transcript.
        earlier = sum(isinstance(m, AssistantMessage) for m in transcript.messages)
        in_turn = False  # between a TurnStart and its TurnEnd
        partial: Reply | None = None  # the reply being read, until it is in the transcript
        final: Reply | None = None  # the reply that is the answer
        with anyio.move_on_after(self.time_budget) as budget:
            while True:
                if turn >= self.max_turns:
                    count = "1 turn" if self.max_turns == 1 else f"{self.max_turns} turns"
                    raise BudgetExceeded(
                        f"no final answer after {count}: max_turns={self.max_turns} allows "
                        "no more model calls; give a larger max_turns to allow more",
                        turns=turn,
                    )
                turn += 1
                final_turn = repair.stopping
                # the last turn, told to answer with no call run (``answer_at_max_turns``)
                last = self.answer_at_max_turns and turn == self.max_turns > 1
                await emit(TurnStart(turn=turn))
                in_turn = True
                # tool_choice "none": no tool is shown, and none runs: a call the model
                # writes anyway (copying its history) is an unknown tool's CallError
                offered = self.registry if offer is None else self.registry.subset(offer)
                callable_now = self.registry.subset([]) if self.tool_choice == "none" else offered
                specs = callable_now.specs()
                ctx = TurnContext(
                    turn=turn,
                    model=self.model,
                    decoder=self._decoder(f"call_{earlier + turn}_", callable_now),
                    executor=executor,
                    repair=repair,
                    emit=emit,
                    stop_at_call=self.stop_at_call,
                    stop_marker=self.renderer.stop_marker,
                    tool_request=requested_tools,
                    max_calls=self.max_calls_per_reply,
                    answer_object=self.dialect == "json_object" and not self.native,
                    no_calls=LAST_TURN_REFUSAL if last else None,
                )
                try:
                    request = self._request(transcript, specs, final_turn, repair, last)
                    partial = Reply()
                    reply = await run_turn(ctx, request, partial)
                except anyio.get_cancelled_exc_class():
                    # The time budget (below) or the consumer leaving: what the reply
                    # had produced goes in the history (see the module docstring).
                    if partial is not None and (partial.calls or partial.written):
                        why = OUT_OF_TIME if budget.cancel_called else STOPPED
                        append_reply(transcript, partial, native=self.native, unfinished=why)
                    partial = None
                    raise
                except BaseException as exc:  # a tool's KeyboardInterrupt too (see the docstring)
                    if isinstance(exc, ProviderError) and partial is not None:
                        if exc.partial_text is None:
                            exc.partial_text = partial.visible_text
                    if partial is not None and partial.calls:
                        # They ran (the stream failed, or a tool stopped the run): kept,
                        # as for a stream ended in error, or a chat that goes on makes
                        # them again. A tool's KeyboardInterrupt is a stop, as the
                        # consumer leaving is.
                        why = STOPPED if partial.aborted is not None else FAILED
                        append_reply(transcript, partial, native=self.native, unfinished=why)
                    await emit(TurnEnd(turn=turn, reason="error"))
                    raise
                kept = len(transcript.messages)
                append_reply(transcript, reply, native=self.native)
                partial = None
                try:  # (what the reply asked for is judged against what it was offered)
                    step = self._next_step(reply, repair, offered, final_turn, turn)
                    if step is None:
                        check_exhausted(reply, repair, turn)
                except Exception as exc:
                    if isinstance(exc, ProviderError):
                        # A reply cut off by a failed stream is no part of the history
                        # (see the module docstring): its text is on the error.
                        del transcript.messages[kept:]
                    await emit(TurnEnd(turn=turn, reason="error"))
                    raise
                for name in reply.requested_tools:
                    if offer is not None and name in self.registry and name not in offer:
                        offer.append(name)
                if step is None:
                    final = reply
                    break
                reason, message = step
                if message is not None:
                    transcript.user(message)
                if reason in RETRIES and turn >= self.max_turns:
                    # No turn is left to ask again in: no Retry (a UI would say "asking
                    # the model again"), the turn failed; the feedback stays in the
                    # transcript BudgetExceeded carries, for a run that goes on from it.
                    await emit(TurnEnd(turn=turn, reason="error"))
                elif reason != "tool_calls":  # a retry (RETRIES)
                    await emit(Retry(turn=turn, reason=reason, message=message or ""))
                    await emit(TurnEnd(turn=turn, reason="retry"))
                else:
                    await emit(TurnEnd(turn=turn, reason="tool_calls"))
                in_turn = False
        if final is not None:
            # Outside the time budget: once the answer is known the run ends with it,
            # even when a slow consumer's full buffer holds these two back past it.
            # an answer cut off at max_tokens is its start: marked so (``truncated``)
            cut_short = final.finish is not None and final.finish.reason in OUT_OF_TOKENS
            await emit(TurnEnd(turn=turn, reason="final"))
            await emit(Final(text=final.visible_text, turns=turn, truncated=cut_short))
            return RunResult(
                text=final.visible_text, transcript=transcript, turns=turn, truncated=cut_short
            )
        if in_turn:  # the time ran out mid-turn: it ends as a failed turn does
            await emit(TurnEnd(turn=turn, reason="error"))
        raise BudgetExceeded(
            f"time budget of {self.time_budget:g} s ran out during turn {turn}", turns=turn
        )

    def _next_step(
        self, reply: Reply, repair: RepairState, offered: ToolRegistry, final_turn: bool, turn: int
    ) -> tuple[RetryReason | Literal["tool_calls"], str | None] | None:
        """What follows ``reply``: None for the final answer, else (reason, message to add)."""
        reminder = NATIVE_REMINDER if self.native else self.renderer.format_reminder()
        if final_turn:  # its calls were refused: only a stream cut short is not the answer
            check_stream(reply)
            return None
        finish = reply.finish.reason if reply.finish is not None else None
        cut = cut_calls(reply.errors, finish)
        if cut and (repair.cut_told or not repair.can_repair()):
            # Cut at max_tokens again (or no repair left): the same request would
            # cut it again. Complete calls of the reply ran: their results go back.
            if not reply.calls:
                raise cut_exhausted(
                    cut, told=repair.cut_told, max_tokens=self.max_tokens, turns=turn
                )
        elif reply.errors and repair.can_repair():
            repair.call_error_repairs += 1
            repair.cut_told = repair.cut_told or bool(cut)
            return "call_error", call_error_feedback(reply.errors, reminder, cut=bool(cut))
        if reply.calls:
            return "tool_calls", None
        if reply.requested_tools:
            # Under tool_choice "none" nothing is granted: no tool is shown or runs.
            grantable = self.registry.subset([]) if self.tool_choice == "none" else self.registry
            asked = list(dict.fromkeys(reply.requested_tools))
            found = [n for n in asked if n in grantable and n not in offered]
            if found:
                return "tool_calls", f"These tools are now available: {', '.join(found)}."
            # Nothing to grant (no such tool, or all already offered: granted again, a
            # model asking on and on would loop to max_turns): repaired as an unknown
            # tool's call is, and as boundedly; past the bound the reply stands.
            told = "\n".join(not_granted(n, grantable, offered) for n in asked)
            if repair.can_repair():
                repair.call_error_repairs += 1
                return "call_error", told
            if not reply.visible_text.strip():  # nothing but the request: no answer
                raise RepairExhausted(
                    f"the model's tool requests still failed after {repair.call_error_repairs} "
                    f"repairs: {told}",
                    reason="call_error",
                    turns=turn,
                )
        check_stream(reply)
        if not (repair.reprompted or not len(offered) or self.tool_choice == "none"):
            names = list(offered)
            if self.tool_choice != "auto" and not choice_met(self.tool_choice, repair):
                repair.reprompted = True
                forced = self.tool_choice.name if isinstance(self.tool_choice, UseTool) else None
                return "missing_call", missing_call_reprompt(names, reminder, forced=forced)
            # Only before any tool has run: after results, "I can't check tomorrow's
            # forecast" is an answer that states its limits, not a model that thinks it
            # has no tools; a re-prompt there would demand a call the answer does not need.
            if repair.calls_run == 0 and looks_like_refusal(reply.visible_text):
                repair.reprompted = True
                return "refusal", refusal_reprompt(names, reminder)
        if (  # "Let me check the weather." and no call: the call is missing (rung 5)
            not (repair.announced or reply.errors or reply.requested_tools or not len(offered))
            and self.tool_choice != "none"
            and finish not in OUT_OF_TOKENS
            and looks_like_announcement(reply.visible_text)
        ):
            repair.announced = True
            return "missing_call", announced_reprompt(reminder)
        return empty_answer(reply, repair, turn, max_tokens=self.max_tokens)

    def _request(
        self,
        transcript: Transcript,
        specs: Sequence[ToolSpec],
        final_turn: bool,
        repair: RepairState,
        last: bool = False,
    ) -> ModelRequest:
        stop = list(self.stop)
        marker = self.renderer.stop_marker
        # One call per reply in a prompt dialect: the provider stops at its end, as
        # native mode asks the API (``parallel_tool_calls``, below)
        at_call = self.stop_at_call or self.max_calls_per_reply == 1
        if at_call and not self.native and marker and marker not in stop:
            stop.append(marker)
        rest: list[ToolSpec] = []
        if self.offer is not None and not self.native and self.tool_choice != "none":
            # Hybrid: tools not offered in full are listed in one line each, with
            # how to ask for them (``am:request_tools``), after the definitions.
            # Under ``tool_choice="none"`` none is shown, in full or in summary.
            shown = {spec.name for spec in specs}
            rest = [spec for spec in self.registry.specs() if spec.name not in shown]
        told = None
        if not self.native and not final_turn and not choice_met(self.tool_choice, repair):
            told = choice_instruction(self.tool_choice)  # None for auto and none
        if last:  # in the request only, as the choice: a chat going on is not told it
            told = LAST_TURN_NOTE
        if told is not None:
            # A prompt dialect has no tool_choice field: the model is told, last,
            # in a message project merges into the final user message (see
            # ``prompts.choice``), until the call it asks for has run.
            transcript = Transcript(messages=[*transcript.messages, UserMessage(content=told)])
        messages = project(
            transcript,
            self.dialect,
            specs,
            native=self.native,
            system=self.system,
            more_tools=rest,
        )
        native_tools = tuple(specs) if self.native and specs else None
        choice: ToolChoice | None = None
        if native_tools is not None:
            # A forced choice (required, a named tool) holds until a call has run:
            # sent after that, it would leave the model no way to answer.
            choice = "none" if final_turn or last else self.tool_choice
            if choice != "none" and choice_met(self.tool_choice, repair):
                choice = "auto"
        # One call per reply: a native API that can be told so is (the calls past
        # it would be refused, a turn spent on each; see the class docstring).
        one_call = native_tools is not None and self.max_calls_per_reply == 1
        return ModelRequest(
            messages=tuple(messages),
            stop=tuple(stop),
            tools=native_tools,
            tool_choice=choice,
            parallel_tool_calls=False if one_call else None,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            **self.sampling,
        )

    def _decoder(self, id_prefix: str, offered: ToolRegistry) -> Decoder:
        if self.native:
            return NativeDecoder(
                offered, id_prefix=id_prefix, stop=self.stop, think_open=self.think_open
            )
        return PromptDecoder(
            self.dialect, offered, self.stop, id_prefix=id_prefix, think_open=self.think_open
        )
