"""Hybrid mode: pick tools natively from short summaries, then work in a prompt dialect.

Theory of operation
-------------------
Full tool definitions are expensive in the prompt, and a model with native
function calling is good at *choosing* among short descriptions even when it
is weaker at writing arguments natively (or when the tool names, with dots,
are not valid native function names). ``HybridAgent`` splits the work:

1. **Selection** (turn 0). One request whose system prompt lists every tool in
   one line (``renderer.tool_summaries``) and whose only native tool is
   ``select_tools(names: [enum of tool names])``. The model's text and
   reasoning stream to the consumer as they come; its ``select_tools`` call is
   not shown (it is plumbing, not a tool run). ``names`` given as one string
   (``"a, b"``, or a JSON list in a string, ``'["a", "b"]'``, as models send it
   too) is read as ``am:request_tools`` reads its names (``tool_names``), and
   so are names under another key when it is the only one (``{"tools": …}``)
   and names sent as the whole arguments (a bare list or string). A call that
   selects no tool of the registry (unknown names, arguments that name none,
   another function called) is answered once, within ``max_repairs``, with
   what to fix: ``Retry(turn=0, reason="call_error")``, and the selection
   request again with that call and, as its result, the error; the reply to
   it is read as the first was. An empty list selects no tool on purpose.
2. **Work.** If it selected tools, an ordinary ``Agent`` continues the same
   transcript in the prompt dialect with ``offer`` = the chosen names: their
   full definitions are in the prompt, the others stay listed in summary, and
   ``<am:request_tools>`` adds more mid-conversation (the Agent handles that).
   The selection turn's text is not kept in the transcript, so the model
   does not read its own preamble twice. If it did not call ``select_tools``,
   its text is the answer: ``TurnEnd(turn=0, reason="final")`` and ``Final``
   (kept with its reasoning, as an Agent's answer is),
   unless ``tool_choice`` requires a tool (``select_tools`` is then required in
   the request): then ``TurnEnd(turn=0, reason="retry")`` and step 2 with every
   tool in full. A call with no known name, after its repair, still goes on to
   step 2, with only summaries (every tool in full when one is required).
   ``tool_choice="none"`` makes the selection request a plain chat, its reply
   the answer; so does having no tools at all: there is nothing to select (and
   ``select_tools`` would carry ``"enum": []``, which JSON Schema validators
   refuse), and a required tool that cannot exist is not asked for, as an
   ``Agent`` with no tools takes its reply as the answer.

Events, errors and cancellation are ``Agent.stream``'s, from the same
``event_stream``: the run is a task in a task group owned by the ``stream``
block; its exceptions are raised by the iterator after the last event;
leaving the block cancels everything. A selection stream that ends with an
error, or with a turn the server paused (``pause``), is a ``ProviderError``
(after a ``StreamError`` event), as an Agent's reply without a call is: its
text was cut off, it is not the answer (it is the error's ``partial_text``,
and not in the transcript).

The keywords for the work phase are checked when the ``HybridAgent`` is made
(an Agent is built from them once), not when a run first selects a tool.
``time_budget`` bounds the whole run, selection included: the work phase gets
what is left of it. ``max_turns`` is the work phase's (an Agent's), after the
selection turn. ``turns`` counts the selection turn, in ``Final``, ``RunResult``
and the ``BudgetExceeded`` or ``RepairExhausted`` of either phase alike, and a
``BudgetExceeded`` for time names the whole budget. A selection turn the
budget cuts short still gets its ``TurnEnd(turn=0, reason="error")`` before
``BudgetExceeded``, as an Agent's does.

The selection turn's text goes through a parser that knows no call markers,
as an Agent's native-mode reply does (``NativeDecoder``): a ``<think>…</think>``
in it is ``ReasoningDelta`` and only the rest is text (and the answer, if no
tool is selected). ``think_open`` (an ``Agent`` keyword: the chat template
opens ``<think>``) applies to it too, the same model's reply: what comes
before ``</think>`` is reasoning, until the provider sends reasoning in its
own field (``TextReader``); a reply that finishes with no ``</think>`` is read
again as text, as an Agent's is (the answer of a model that skipped its
thinking: it was an empty answer, and the work phase asked again). The
``stop`` strings and ``max_tokens`` apply to it too: the selection request
carries them, and its text ends at a stop string (the request cancelled) when
the provider ignores ``stop``, as an Agent's reply does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, TypedDict, Unpack

import anyio
import msgspec

from streamtools.errors import (
    BudgetExceeded,
    ProviderError,
    RepairExhausted,
    TurnPaused,
    UsageError,
)
from streamtools.events import (
    CallEnd,
    CallError,
    Final,
    ParserEvent,
    ReasoningDelta,
    ReasoningRetracted,
    Retry,
    StreamError,
    TextDelta,
    TurnEnd,
    TurnStart,
    Usage,
)
from streamtools.model import (
    SAMPLING,
    CallChunk,
    ChatMessage,
    FinishChunk,
    Model,
    ModelRequest,
    NativeCall,
    ReasoningChunk,
    ReasoningOrigin,
    TextChunk,
    ToolSpec,
    UsageChunk,
    UseTool,
)
from streamtools.native import NativeCalls
from streamtools.parser import NO_CALLS, Parser
from streamtools.prompts import get_renderer, project
from streamtools.runtime.agent import Agent, check_model
from streamtools.runtime.decoders import TextReader, tool_names
from streamtools.runtime.repair import OUT_OF_TOKENS
from streamtools.runtime.stream import (
    EventStream,
    RunResult,
    as_transcript,
    drain,
    event_stream,
    events_context,
)
from streamtools.runtime.tool_choice import check_choice
from streamtools.runtime.turn import Emit, unfinished_stream
from streamtools.tools import Tool, ToolRegistry
from streamtools.transcript import AssistantMessage, Transcript

__all__ = ["SELECT_TOOLS", "AgentOptions", "HybridAgent"]

SELECT_TOOLS = "select_tools"
_SELECT_INSTRUCTION = (
    "First decide which of these tools the request needs. If it needs any, call the "
    f"`{SELECT_TOOLS}` function with their names; their full definitions will then be "
    "given to you. If it needs none, just answer."
)


class AgentOptions(TypedDict, total=False):
    """The keywords of ``Agent`` that ``HybridAgent`` passes on to its work phase,
    with ``Agent``'s types, so that a type checker checks them there too
    (``**kwargs: Any`` took ``max_trns=3`` or ``max_turns="3"`` without a word)."""

    max_turns: int
    time_budget: float | None
    tool_timeout: float | None
    max_concurrency: int
    stop_at_call: bool
    tool_choice: str | UseTool
    stop: str | Sequence[str]
    max_tokens: int | None
    top_p: float | None
    top_k: int | None
    seed: int | None
    presence_penalty: float | None
    frequency_penalty: float | None
    include_tracebacks: bool
    max_result_chars: int | None
    max_repairs: int
    max_calls_per_reply: int | None
    think_open: bool
    answer_at_max_turns: bool


class HybridAgent:
    """Native tool selection over summaries, then an ``Agent`` in a prompt dialect.

    Every keyword of ``Agent`` except ``native`` and ``offer`` is accepted and
    passed on for the work phase (``AgentOptions``).
    """

    def __init__(
        self,
        model: Model,
        tools: ToolRegistry | Iterable[Tool | Callable[..., Any]] = (),
        *,
        dialect: str = "am_xml",
        system: str | None = None,
        temperature: float | None = None,
        **agent_kwargs: Unpack[AgentOptions],
    ) -> None:
        check_model(model, "HybridAgent")
        for own in ("native", "offer"):
            if own in agent_kwargs:
                raise UsageError(f"HybridAgent chooses {own!r} itself; it cannot be given")
        self.model = model
        self.registry = tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools)
        self.dialect = dialect
        self.renderer = get_renderer(dialect)
        self.system = system
        self.temperature = temperature
        self.agent_kwargs = agent_kwargs
        checked = self._work_agent(offer=[], time_budget=agent_kwargs.get("time_budget"))
        # the selection turn is a reply of the same run: the user's stop strings and
        # max_tokens bound it too (its text is the answer when no tool is selected)
        self._stop = checked.stop
        self._max_tokens = checked.max_tokens
        self._choice = checked.tool_choice

    @property
    def _selects(self) -> bool:
        """Whether the selection turn offers ``select_tools``: not under "none", and
        not without tools (see the module docstring). Read at each run: a registry
        may be filled after the agent is made (tools from an MCP server)."""
        return self._choice != "none" and len(self.registry) > 0

    def selection_request(self, transcript: Transcript) -> ModelRequest:
        """The turn-0 request: summaries in the prompt, ``select_tools`` as the native tool.

        ``tool_choice`` holds here too: ``none`` shows no tool (the request is a
        plain chat, its reply the answer); ``required`` or a named tool makes the
        model select (``select_tools`` is required), as answering here would end
        the run before any tool ran. With no tools it is a plain chat too."""
        # the work phase's sampling options (``top_p``, ``seed``…) apply here too
        sampling: dict[str, Any] = {
            k: v for k, v in self.agent_kwargs.items() if k in SAMPLING
        }
        if not self._selects:
            plain = project(transcript, self.dialect, [], native=False, system=self.system)
            return ModelRequest(
                messages=tuple(plain),
                stop=self._stop,
                temperature=self.temperature,
                max_tokens=self._max_tokens,
                **sampling,
            )
        specs = self.registry.specs()
        guide = self.renderer.tool_summaries(specs) + "\n\n" + _SELECT_INSTRUCTION
        system = "\n\n".join(filter(None, [self.system, guide]))
        messages = project(transcript, self.dialect, [], native=False, system=system)
        select = ToolSpec(
            name=SELECT_TOOLS,
            description="Choose the tools needed for this request; their definitions follow.",
            parameters={
                "type": "object",
                "properties": {
                    "names": {
                        "type": "array",
                        "items": {"type": "string", "enum": [s.name for s in specs]},
                    }
                },
                "required": ["names"],
            },
        )
        return ModelRequest(
            messages=tuple(messages),
            stop=self._stop,
            tools=(select,),
            tool_choice="auto" if self._choice == "auto" else "required",
            temperature=self.temperature,
            max_tokens=self._max_tokens,
            **sampling,
        )

    @events_context
    async def stream(self, prompt: str | Transcript) -> AsyncIterator[EventStream]:
        """Run selection then work for ``prompt``; yield the events. Leaving cancels the run."""
        transcript = as_transcript(prompt)
        async with event_stream(lambda emit: self._run(transcript, emit)) as events:
            yield events

    async def run(self, prompt: str | Transcript) -> RunResult:
        """Run to the final answer and return it with the transcript."""
        return await drain(self.stream(prompt))

    def _work_offer(self, chosen: list[str] | None) -> list[str] | None:
        """The tools the work phase shows in full: those selected; when a tool is
        required and none was (no call, or no known name), all of them (None), as
        a call required of a model shown no tool could only be asked for in vain."""
        if chosen:
            return chosen
        return [] if self._choice == "auto" else None

    def _work_agent(self, *, offer: list[str] | None, time_budget: float | None) -> Agent:
        options: AgentOptions = {**self.agent_kwargs, "time_budget": time_budget}
        return Agent(
            self.model,
            self.registry,
            dialect=self.dialect,
            system=self.system,
            temperature=self.temperature,
            offer=offer,
            **options,
        )

    async def _run(self, transcript: Transcript, emit: Emit) -> RunResult:
        budget: float | None = self.agent_kwargs.get("time_budget")
        deadline = None if budget is None else anyio.current_time() + budget
        check_choice(self._choice, self.registry)  # as the work agent does, before turn 0
        await emit(TurnStart(turn=0))
        selected = False
        with anyio.move_on_after(budget):
            try:
                chosen, said, cut = await self._select(transcript, emit)
            except anyio.get_cancelled_exc_class():
                raise
            except BaseException as exc:  # as an Agent's turn (see ``Agent``)
                if isinstance(exc, ProviderError):
                    exc.transcript = exc.transcript or transcript
                await emit(TurnEnd(turn=0, reason="error"))
                raise
            selected = True
        if not selected:  # the time ran out mid-turn: it ends as a failed turn does
            assert budget is not None
            await emit(TurnEnd(turn=0, reason="error"))
            raise BudgetExceeded(
                f"time budget of {budget:g} s ran out during tool selection",
                turns=1,
                transcript=transcript,
            )
        # A tool is required (``required``, a named tool) and the model answered
        # anyway (a server that does not force ``select_tools``): not the answer; the
        # work phase goes on, whose re-prompt asks for the call (``missing_call``).
        # So does an empty answer (a server that sent it all as reasoning): an
        # Agent's reply asks again and says why if it stays empty; Final("") did not.
        text = said.text
        empty = chosen is None and not text.strip()
        forced = chosen is None and (empty or (self._selects and self._choice != "auto"))
        if chosen is None and not forced:
            transcript.add(said)  # its reasoning too, as an Agent's answer keeps it
            await emit(TurnEnd(turn=0, reason="final"))
            await emit(Final(text=text, turns=1, truncated=cut))
            return RunResult(text=text, transcript=transcript, turns=1, truncated=cut)
        await emit(TurnEnd(turn=0, reason="retry" if forced else "tool_calls"))
        left = None if deadline is None else deadline - anyio.current_time()
        if left is not None and left <= 0:
            raise BudgetExceeded(
                f"time budget of {budget:g} s ran out during tool selection",
                turns=1,
                transcript=transcript,
            )
        agent = self._work_agent(offer=self._work_offer(chosen), time_budget=left)
        try:
            async with agent.stream(transcript) as work:
                async for event in work:
                    if isinstance(event, Final):  # count the selection call too
                        event = msgspec.structs.replace(event, turns=event.turns + 1)
                    await emit(event)
        except BudgetExceeded as exc:
            message = str(exc)
            if deadline is not None and anyio.current_time() >= deadline:
                # the work agent knows only what was left of the budget: name the whole
                message = f"time budget of {budget:g} s ran out during turn {exc.turns}"
            raise BudgetExceeded(message, turns=exc.turns + 1, transcript=transcript) from None
        except RepairExhausted as exc:
            raise RepairExhausted(
                str(exc), reason=exc.reason, turns=exc.turns + 1, transcript=transcript
            ) from None
        assert work.result is not None
        result = work.result
        return replace(result, turns=result.turns + 1)

    async def _select(
        self, transcript: Transcript, emit: Emit
    ) -> tuple[list[str] | None, AssistantMessage, bool]:
        """Stream the selection turn; the chosen names (None: not called), the reply
        (its text and reasoning: the answer when none are), and whether the output
        token limit cut the reply (its text is then the answer's start,
        ``Final.truncated``). A call that selects no tool of the
        registry is answered once with what to fix (see ``_repair``)."""
        request = self.selection_request(transcript)
        repairs = 1 if self.agent_kwargs.get("max_repairs", 2) > 0 else 0
        while True:
            calls, said, cut = await self._selection_reply(request, transcript, emit)
            if calls is None:
                return None, said, cut
            names, problem = self._read_selection(calls)
            if problem is None or not repairs:
                return names, said, False
            repairs -= 1
            await emit(Retry(turn=0, reason="call_error", message=problem))
            request = _repair(request, said.text, calls, problem)

    async def _selection_reply(
        self, request: ModelRequest, transcript: Transcript, emit: Emit
    ) -> tuple[list[CallEnd | CallError] | None, AssistantMessage, bool]:
        """Stream one selection request: its calls (None: it made none), its text
        and reasoning (as the transcript keeps an answer: an Agent's reply keeps
        its reasoning beside its text), and whether the output token limit cut it."""
        calls = NativeCalls([SELECT_TOOLS])
        ended: list[ParserEvent] = []  # calls complete before the end (``done``) too
        text: list[str] = []
        thought: list[str] = []
        origin: ReasoningOrigin | None = None
        finish: FinishChunk | None = None
        stop = self._stop
        reader = TextReader(lambda think: Parser(NO_CALLS, None, stop, think_open=think),
                            self._think_open)
        async with self.model.stream(request) as chunks:
            async for chunk in chunks:
                if isinstance(chunk, TextChunk):
                    await self._split(reader.feed(chunk.text), text, thought, emit)
                    if reader.stopped:
                        break  # the request is cancelled, as an Agent's at a stop string
                elif isinstance(chunk, ReasoningChunk):
                    if chunk.text:  # a chunk that only signs a thinking block has none
                        # it ends the reasoning ``think_open`` began (``decoders``)
                        await self._split(reader.provider_reasoning(), text, thought, emit)
                        thought.append(chunk.text)
                        origin = chunk.origin or origin
                        await emit(ReasoningDelta(text=chunk.text, origin=chunk.origin))
                elif isinstance(chunk, CallChunk):
                    ended += calls.feed(chunk)
                elif isinstance(chunk, UsageChunk):
                    await emit(Usage.of(chunk))
                elif isinstance(chunk, FinishChunk):
                    finish = chunk
        ends = reader.end(finish.reason if finish is not None else None)
        if reader.reread:  # its reasoning was the answer, which follows (``decoders``)
            if thought:  # none when the parser held all of it back
                await emit(ReasoningRetracted(text="".join(thought)))
            thought.clear()
        await self._split(ends, text, thought, emit)
        said = AssistantMessage(
            text="".join(text), reasoning="".join(thought), reasoning_origin=origin
        )
        closed = calls.end(finish.reason if finish is not None else None)
        made = [e for e in ended + closed if isinstance(e, CallEnd | CallError)]
        if not made and not calls.calls:
            unfinished = unfinished_stream(finish)
            if unfinished is not None:
                # Text cut off by an error, or a turn the server paused, is not an
                # answer (as for an Agent's reply).
                kind, message = unfinished
                await emit(StreamError(kind=kind, message=message))
                error = TurnPaused if kind == "pause" else ProviderError
                raise error(message, partial_text=said.text, transcript=transcript)
            cut = finish is not None and finish.reason in OUT_OF_TOKENS
            return None, said, cut
        return made, said, False

    def _read_selection(self, calls: list[CallEnd | CallError]) -> tuple[list[str], str | None]:
        """The registry's tools the calls select, and what to tell the model when
        they select none (None: nothing to fix). Names are read as
        ``am:request_tools`` reads its names (``tool_names``): a list, or one
        string of names separated by commas (``"add, search"``), under
        ``names`` or under the one key the model wrote instead (``tools``), or
        as the whole arguments (a bare list or string). An empty list selects
        no tool on purpose: nothing to fix."""
        names: list[str] = []
        problems: list[str] = []
        blank = False  # ``[]``: no tool is needed
        for call in calls:
            value = _selection_value(call)
            if value is None:
                problems.append(_no_names(call))
                continue
            read = tool_names(value)
            if not read and (isinstance(value, str) or all(isinstance(n, str) for n in value)):
                blank = True
                continue
            known = [n for n in read if n in self.registry]
            names += [n for n in known if n not in names]
            if not read:
                problems.append(_no_names(call))
            elif not known:
                problems.append(f"There is no tool named {', '.join(map(repr, read))}.")
        if names or blank or not problems:
            return names, None
        listed = ", ".join(self.registry)
        return names, (
            f"{problems[0]} Call `{SELECT_TOOLS}` again with the names of the tools "
            f'the request needs, as {{"names": ["name_one", "name_two"]}}, from: {listed}. '
            "If it needs none, answer without calling it."
        )

    @property
    def _think_open(self) -> bool:
        return bool(self.agent_kwargs.get("think_open"))

    @staticmethod
    async def _split(
        events: list[ParserEvent], text: list[str], thought: list[str], emit: Emit
    ) -> None:
        """The selection turn's text events (its ``TextReader``), sent on and kept."""
        for event in events:
            if isinstance(event, TextDelta):
                text.append(event.text)
                await emit(event)
            elif isinstance(event, ReasoningDelta):
                thought.append(event.text)
                await emit(event)


def _selection_value(call: CallEnd | CallError) -> list[Any] | str | None:
    """What a ``select_tools`` call gives as its names (see ``_read_selection``):
    ``names``, else the one argument there is, else the arguments when they are
    a list or a string (``["a"]``, ``"a, b"``, ``a, b``: not an object, which
    ``NativeCalls`` makes a ``CallError``); None when the call gives none."""
    value: Any = None
    if isinstance(call, CallEnd):
        arguments = call.arguments
        if "names" in arguments:
            value = arguments["names"]
        elif len(arguments) == 1:
            (value,) = arguments.values()
    elif call.name == SELECT_TOOLS and call.reason == "invalid_json":
        try:
            value = msgspec.json.decode(call.raw)
        except msgspec.DecodeError:
            value = call.raw  # names without JSON: read as a string of them
    return value if isinstance(value, list | str) else None


def _no_names(call: CallEnd | CallError) -> str:
    """Why a call's arguments select nothing, in its own words when it failed."""
    if isinstance(call, CallError) and call.reason != "invalid_json":
        return call.message
    return f"The arguments {(call.raw or '{}')[:120]} name no tool."


def _repair(
    request: ModelRequest, text: str, calls: list[CallEnd | CallError], message: str
) -> ModelRequest:
    """The selection request again, with the reply whose calls selected nothing and,
    as each call's result, what to fix (an error, as a failed tool's is sent)."""
    past = tuple(
        NativeCall(
            id=call.id,
            name=call.name or SELECT_TOOLS,
            arguments=call.arguments if isinstance(call, CallEnd) else {},
            extra=call.extra if isinstance(call, CallEnd) else None,
            arguments_text=None if isinstance(call, CallEnd) else call.raw or None,
        )
        for call in calls
    )
    results = tuple(
        ChatMessage(
            role="tool", content=message, tool_call_id=call.id, name=call.name, is_error=True
        )
        for call in past
    )
    reply = ChatMessage(role="assistant", content=text, tool_calls=past)
    return msgspec.structs.replace(request, messages=(*request.messages, reply, *results))
