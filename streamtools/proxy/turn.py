"""One proxied request: one upstream model turn, parsed as it streams.

Theory of operation
-------------------
The client runs the tools, not the proxy, so a request is one model turn (plus
at most ``max_repairs`` bounded re-prompts) and needs no agent loop:

1. The request's transcript is projected for the dialect (``prompts.project``):
   the tools become the dialect's system prompt, past calls and results become
   text. For a ``required``, named or ``allowed_tools`` ``tool_choice`` an
   instruction is added, and the parser knows only the tools the choice lets
   the model call (``proxy.upstream.upstream_request``, which the proxy's
   token count uses too; it keeps each turn's prompt a prefix of the next
   turn's, for an upstream's prompt cache).
2. The upstream streams text; the ``Parser`` turns it into events as it
   arrives; ``run_turn`` hands each to ``emit`` renumbered for the wire (call
   ``index`` counts the calls of the response from 0, across re-prompts), and
   awaits ``flush`` after each upstream chunk, so argument fragments reach the
   client as the upstream produces them.
3. The turn ends with one ``Usage`` and one ``Finish`` whose ``reason`` is
   ``tool_calls`` when any call was emitted. A broken upstream ends it with a
   ``StreamError`` instead (never a hang: providers end a cut stream with an
   error finish). After a re-prompt the ``Usage`` says the output tokens of
   every attempt, but the input tokens (and prompt-cache counts: see
   ``proxy.usage``) of the largest prompt (the last, which holds the others),
   not their sum: clients read a reply's input tokens as
   the size of their context (Claude Code compacts by it, IDE agents show it),
   and a sum told them the conversation was twice its size. An upstream that
   gives no input count gets the estimate of the last request
   (``tokens.estimate_tokens``, erring high) in its place: a count of 0 told
   clients that track their context by it that the conversation was empty.
   A request the proxy closes before its end (a broken call it repairs, a stop
   string) never gets the upstream's counts, which come last: its output is
   then the guess of the text the model wrote (``tokens.text_tokens``), where
   it was counted nowhere, and of the reasoning it sent in its own field, which
   is its reasoning count too.

Decisions, each bounded:

* **Parallel calls.** By default the dialect's stop marker is *not* sent
  upstream, so one reply may hold several calls. When the client allows one
  call per reply (OpenAI ``parallel_tool_calls: false``, Anthropic
  ``disable_parallel_tool_use``) the marker is sent as a stop sequence and the
  upstream is closed at the first finished call.
* **Text after a call** is not forwarded: the model would otherwise go on to
  imagine the tool's result. Later calls in the same reply still are.
* **Required / named calls.** Text is held back until a call starts (then
  released in order; left out on Anthropic's wire, whose API writes no text
  before the ``tool_use`` of such a choice: ``ProxyCall.preamble``). If the
  reply ends without a call, the held text is discarded and the model is
  re-prompted once with a stronger instruction; if it still makes no call, its
  text is passed through with ``finish: stop``.
* **Malformed calls** (``CallError``). The parser is given the tools' names
  and schemas but checks no arguments against them (``_Shown``): as with a
  native API the client validates them. The schemas only type what the dialect
  writes as text: am_xml's ``<command>true</command>`` is the string ``"true"``
  for a parameter of type string, where the JSON-literal guess made it ``true``
  and the client refused a call the model wrote correctly. A broken call that
  was never announced on the wire (unknown tool, markup broken before the name)
  is repaired: while no call has been emitted and a repair remains, the
  upstream is closed and re-prompted with the parser's message; otherwise its
  raw text is passed through as text (dropped after a call, as all post-call
  text). The text before the broken call has reached the client already; what
  the re-prompted model writes again of it is not sent twice (``_Repeat``). A
  call whose ``CallStart`` and fragments were already sent cannot be retracted:
  the response ends with an error in the client's format
  (``kind="malformed_call"``).
* **A call cut by the token limit.** When the upstream's finish is a length cut
  (``end("length")`` leaves the announced call ``unterminated``) the model did
  nothing wrong that a re-prompt would fix: the real APIs end such a response
  with their length finish, the call's partial arguments as streamed (OpenAI
  ``finish_reason: "length"``, Anthropic ``stop_reason: "max_tokens"`` after the
  ``tool_use`` block is closed, Responses ``response.incomplete`` with
  ``max_output_tokens``), and clients know to report it or raise their limit,
  where an error makes an agent retry the same request into the same limit. So
  the turn ends with ``Finish(reason="length")`` and no ``CallEnd`` for that
  call; the wire encoders let a length finish win over the calls' reason. So
  does a call the limit cut before it was announced (before its name; in
  ``json_object`` an answer cut in its text, which went out as text): it was
  repaired as a broken call, re-prompted into the same limit, and its markup
  (the answer's whole object) then passed on as text after the new reply's.
* **``<am:request_tools>``** (am_xml's request for more tool definitions, a
  call named ``am:request_tools`` to the parser) is not a tool the client has:
  every tool is already in the prompt. It never reaches the wire; when it
  closes it is handled as a call to an unknown tool (a repair that says to call
  the tool directly, or its raw text as text).
* **Stop strings.** The client's stop strings are not sent upstream: the
  parser ends the visible text at one, as an API would, while a call's
  arguments may hold one (a blank line, a fence) without being cut off. The
  upstream stream is closed as soon as one is seen, and the finish names it
  (``stop_sequence``), whatever the upstream reports. So too with no tool to
  call (the parser then knows no call, ``NO_CALLS``): an OpenAI-compatible
  upstream (Ollama, llama.cpp, OpenAI; vLLM aside) that applied them itself
  would not say that it stopped at one, or at which, and an Anthropic client
  is told both (``stop_reason: stop_sequence``).
* **Reasoning** from the upstream, whether it comes in its own channel or as
  ``<think>…</think>`` in the text the parser reads, is never the answer's
  text, in a request with tools or without (``NO_CALLS`` reads ``<think>``
  too), as the agent reads it as reasoning in both its modes: the same model's
  reply gives the same answer either way. It is forwarded as ``ReasoningDelta``
  where it comes, before the answer (whitespace before it left out) or between
  its text and calls (a model that thinks between calls: interleaved thinking),
  which each wire writes in its API's reasoning field (``reasoning_content``
  deltas, a thinking block between Anthropic's blocks when the request enabled
  thinking, a Responses ``reasoning`` item between the others) or leaves out;
  reasoning that comes while a call is being written waits for its end, since
  the call's block is open (``_Attempt.reasoning_out``). It was left out after
  the answer's first text or call, which lost the thinking of every call after
  the first. With
  ``think_open`` (an upstream whose chat template ends the prompt with
  ``<think>``) the parser starts inside reasoning, so a call written there is
  not made, and a reply that finishes there without ``</think>`` is read
  again as the answer (``proxy.opening``: a whole body holds it as text only,
  a stream gets it after the reasoning it has seen). An upstream that splits
  reasoning into its own field (vLLM's or SGLang's reasoning parser,
  llama-server's default ``--reasoning-format``, Ollama's ``thinking``) has read
  that ``<think>`` itself and sends no ``</think>``: its first reasoning chunk
  ends the opening reasoning, and the text after it is read as text.
* ``tool_choice: none`` makes no call: the model is shown the tools (for the
  upstream's prompt cache, ``proxy.upstream``) and told to call none, and the
  text is the answer, its reasoning aside. A call it writes anyway is refused
  by the parser (it may call no tool) and re-prompted like a broken call; with
  no re-prompt left, the answer ends where the call began and its markup is
  left out: passed on as text, it read to the user as a leaked call
  (https://github.com/ai-dynamo/dynamo/pull/7391), and vLLM's maintainers keep
  only the text around such a call too
  (https://github.com/vllm-project/vllm/pull/49409). A dialect whose calls are
  known only by a tool's name (``inline_json``, ``command``) cannot tell such a
  call from text: it stays text.
* **Structured output** (``response_format``) goes to the upstream when no tool
  may be called (``request.forwarded_format``). When one may, no schema can
  constrain the reply (the dialect writes calls as text), so the model is told
  instead, with the instructions above: an answer without a call is only JSON,
  matching the schema if one was given. Best effort, as any instruction is.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import msgspec

from streamtools.errors import ProviderError
from streamtools.events import (
    ArgsDelta,
    CallEnd,
    CallError,
    CallStart,
    Event,
    Finish,
    ParserEvent,
    ReasoningDelta,
    StreamError,
    StreamErrorKind,
    TextDelta,
    Usage,
)
from streamtools.model import (
    FinishChunk,
    Model,
    ModelRequest,
    ReasoningChunk,
    TextChunk,
    ToolSpec,
    UsageChunk,
)
from streamtools.parser import NO_CALLS, Parser
from streamtools.parser.catalog import NamedTools
from streamtools.parser.request_tools import REQUEST_NAME
from streamtools.prompts import get_renderer
from streamtools.proxy.opening import Opening
from streamtools.proxy.overflow import CONTEXT_LENGTH, overflow_message
from streamtools.proxy.request import (
    ProxyCall,
    kind_for_error,
    refusal_kind,
    refusal_message,
)
from streamtools.proxy.tokens import estimate_tokens, text_tokens
from streamtools.proxy.upstream import callable_tools, choice_words, upstream_request
from streamtools.proxy.usage import reported
from streamtools.transcript import AssistantMessage, Transcript, UserMessage

__all__ = ["Emit", "Flush", "run_turn"]

Emit = Callable[[Event], Awaitable[None]]
Flush = Callable[[], Awaitable[None]]


async def _no_flush() -> None:
    pass


_encode = msgspec.json.Encoder().encode


class _Shown(NamedTools):
    """The parser's catalog: the tools the model may call in this reply
    (``callable_tools``: a named or ``allowed_tools`` choice shows more than
    it lets the model call), by name, with their parameter schemas (to type
    values written as text, see the module docstring), and no argument checks."""

    def __init__(self, tools: Sequence[ToolSpec]) -> None:
        super().__init__(t.name for t in tools)
        self._schemas = {t.name: t.parameters for t in tools}

    def schema(self, name: str) -> dict[str, Any] | None:
        return self._schemas.get(name)


_LENGTH = frozenset({"length", "max_tokens"})  # finishes that are a token-limit cut


class _Stop(Exception):
    """Internal: leave the upstream stream early."""


class _Turn:
    def __init__(
        self,
        model: Model,
        call: ProxyCall,
        emit: Emit,
        dialect: str,
        repairs: int,
        prefix: str,
        flush: Flush,
        ready: Flush | None,
        think_open: bool = False,
    ) -> None:
        self.model, self.call, self.emit, self.dialect = model, call, emit, dialect
        self.think_open = think_open
        self.flush = flush
        self.ready = ready
        self.repairs = repairs
        self.emitted = False  # the client has seen the response begin
        self.answered = False  # the model wrote text or a call: its reasoning is over
        self.calls = 0  # calls announced on the wire
        self.usage = Usage()  # the upstream's counts so far (``proxy.usage.reported``)
        # Random per request: the client keeps every call id of the conversation
        # in its history, so ids must not repeat across requests. A new parser per
        # attempt restarts its count, but a repair only follows an attempt whose
        # calls never reached the wire.
        self.prefix = prefix + secrets.token_hex(6) + "_"
        self.tools = callable_tools(call)  # the parser's: the choice's (``proxy.upstream``)
        self.catalog = _Shown(self.tools)

    async def out(self, event: Event) -> None:
        self.emitted = True
        await self.emit(event)

    async def accepted(self) -> None:
        """The upstream has answered a request with success: a streaming
        response may begin (``ready``); from then on a refusal of a later
        attempt can only be reported in the stream."""
        if self.ready is not None and not self.emitted:
            self.emitted = True
            await self.ready()

    # -- the turn -------------------------------------------------------------------

    async def run(self, first: ModelRequest | None) -> None:
        transcript = self.call.transcript
        request = upstream_request(self.call, self.dialect) if first is None else first
        seen: str | None = None  # text of a repaired attempt the client has seen
        while True:
            attempt = _Attempt(self) if seen is None else _Repeat(self, seen)
            try:
                finish = await attempt.play(request)
            except ProviderError as exc:
                if not self.emitted or not self.call.stream:  # the client has seen nothing
                    raise
                # the refusal's kind, as a stream begun by a slow upstream writes it
                # (response.TurnResponse): clients retry an overload or a rate limit,
                # and not a key refused or credit used up, which read api_error
                kind: StreamErrorKind = (
                    "upstream" if exc.status is None else refusal_kind(exc, exc.status, True)
                )
                message = refusal_message(exc)
                overflow = overflow_message(message, exc.body, exc.status)
                if overflow is not None:  # a re-prompt that no longer fits
                    kind, message = CONTEXT_LENGTH, overflow
                await self.out(StreamError(kind=kind, message=message))
                return
            if finish is None:  # the attempt already reported an error
                return
            repair = attempt.repair_message()
            if repair is not None and self.repairs > 0:
                self.repairs -= 1
                transcript = Transcript(messages=[*transcript.messages])
                said = AssistantMessage(text=attempt.written(), unparsed=attempt.broken is not None)
                transcript.add(said)
                transcript.add(UserMessage(content=repair))
                request = upstream_request(self.call, self.dialect, transcript)
                seen = attempt.shown()
                continue
            await attempt.give_up()
            # no count from the upstream: the estimate of what it was sent, not 0
            # (as LiteLLM fills in usage), which clients took for an empty context
            usage = self.usage
            if usage.input_tokens is None:
                usage = msgspec.structs.replace(usage, input_tokens=estimate_tokens(request))
            await self.out(usage)
            stop_sequence = finish.stop_sequence if finish.stop_sequence in self.call.stop else None
            if attempt.cut:  # a call cut by the token limit (see the module docstring)
                reason, stop_sequence = "length", None
            else:
                reason = "tool_calls" if self.calls else finish.reason
            await self.out(Finish(reason=reason, stop_sequence=stop_sequence))
            return


class _Attempt:
    """One upstream stream of the turn."""

    def __init__(self, turn: _Turn) -> None:
        self.turn = turn
        call = turn.call
        # think_open: the upstream's reasoning field ends the opening reasoning,
        # and a reply that never ends it is the answer (``Opening``), whose feed
        # then reads the text, else the parser's
        self.reader: Opening | None = None
        if turn.think_open:
            self.reader = Opening(self._parser, hold=not call.stream)
            self.parser = self.reader.parser
        else:
            self.parser = self._parser(False)
        self.feed = self.parser.feed if self.reader is None else self.reader.feed
        self.hold = call.tool_choice not in ("auto", "none") and not turn.calls
        self.held: list[str] = []
        self.text: list[str] = []  # everything the model wrote, for a re-prompt
        self.thought: list[str] = []  # the reasoning it sent in its own field
        self.wire: dict[int, int] = {}  # parser index -> wire index
        self.args_sent: set[int] = set()
        self.requests: set[int] = set()  # parser indexes of am:request_tools calls
        self.broken: CallError | None = None
        self.failed = False  # an error was already emitted
        self.ending: str | None = None  # the upstream's finish reason, once at end()
        self.cut = False  # a call was cut off by the token limit
        self.counted = False  # the upstream gave this request's counts (a UsageChunk)
        # the text's way out: first ``_leading`` (whitespace before reasoning), then
        # ``text_out`` itself, so that the text chunks after the first pay nothing
        self.say: Callable[[str], Awaitable[None]] = self._leading
        self.blank = ""  # whitespace the model wrote first, waiting to see what follows
        self.calling = False  # a call's block is open on the wire
        self.later: list[str] = []  # reasoning that came while it was

    def _parser(self, think_open: bool) -> Parser:
        turn = self.turn
        if not turn.call.tools:  # no call to find, but reasoning to leave out
            return Parser(NO_CALLS, stop=turn.call.stop, think_open=think_open)
        return Parser(turn.dialect, tools=turn.catalog, stop=turn.call.stop,
                      id_prefix=turn.prefix, think_open=think_open)

    def written(self) -> str:
        return "".join(self.text)

    def shown(self) -> str | None:
        """The text the client has seen of this attempt, when a broken call is
        repaired after it (the text the model wrote before that call, which was
        sent as it came); None when there is none or it is not known."""
        if self.broken is None or self.hold:
            return None
        written = self.written()
        at = written.rfind(self.broken.raw) if self.broken.raw else -1
        return written[:at] if at > 0 else None

    def abandoned(self) -> None:
        """The proxy closed this request's stream before its end (a broken call to
        repair, one call allowed, a stop string), before an upstream sends its
        counts: the output is the guess of what the model wrote, so that the
        tokens it cost reach the client's usage. Its input is left to the
        request after it, which holds it, or to the turn's estimate (``run``)."""
        if not self.counted:
            # and the reasoning the upstream sent in its own field, often most of it
            thought = text_tokens("".join(self.thought)) if self.thought else None
            output = text_tokens(self.written()) + (thought or 0)
            guess = UsageChunk(output_tokens=output, reasoning_tokens=thought)
            self.turn.usage = reported(self.turn.usage, guess)

    async def play(self, request: ModelRequest) -> FinishChunk | None:
        turn = self.turn
        finish: FinishChunk | None = None
        stopped = False
        try:
            async with turn.model.stream(request) as chunks:
                await turn.accepted()
                async for chunk in chunks:
                    if isinstance(chunk, TextChunk):
                        self.text.append(chunk.text)
                        await self.handle(self.feed(chunk.text))
                        await turn.flush()
                        if self.parser.stopped:
                            # a client stop sequence the upstream did not honour
                            finish = FinishChunk(reason="stop")
                            self.abandoned()
                            break
                    elif isinstance(chunk, UsageChunk):
                        turn.usage = reported(turn.usage, chunk)
                        self.counted = True
                    elif isinstance(chunk, FinishChunk):
                        finish = chunk
                        break
                    elif isinstance(chunk, ReasoningChunk) and chunk.text:
                        self.thought.append(chunk.text)  # counted (``abandoned``)
                        if self.reader is not None:
                            await self.handle(self.reader.provider_reasoning())
                            self.parser = self.reader.parser
                        await self.reasoning_out(chunk.text)
                        await turn.flush()
        except _Stop:
            finish, stopped = FinishChunk(reason="stop"), True
            self.abandoned()
        if self.failed:
            return None
        if finish is None:
            finish = FinishChunk(
                reason="error", message="the upstream stream ended without a finish"
            )
        if finish.reason == "error":
            said = finish.message or "the upstream stream failed"
            message = f"upstream failed: {said}"
            overflow = overflow_message(message)  # an error event that says so
            if overflow is not None:
                await turn.out(StreamError(kind=CONTEXT_LENGTH, message=overflow))
            else:
                await turn.out(StreamError(kind=kind_for_error(said), message=message))
            return None
        if not stopped:
            # end() completes a call the upstream cut at its stop marker
            ending = (self.reader or self.parser).end(finish.reason)
            last = ending[-1]
            if isinstance(last, Finish) and last.stop_sequence and not finish.stop_sequence:
                finish = FinishChunk(reason=finish.reason, stop_sequence=last.stop_sequence)
            self.ending = finish.reason
            try:
                await self.handle([e for e in ending if not isinstance(e, Finish)])
                await self.settle()  # a reply of whitespace alone
            except _Stop:
                pass
        return None if self.failed else finish

    async def handle(self, events: Sequence[ParserEvent]) -> None:
        turn = self.turn
        for event in events:
            match event:
                case TextDelta(text=text):
                    await self.say(text)
                case CallStart(index=index, name=name) if name == REQUEST_NAME:
                    self.requests.add(index)  # not the client's tool: never on the wire
                case ArgsDelta(index=index) | CallEnd(index=index) if index in self.requests:
                    if isinstance(event, CallEnd):
                        await self.call_error(_no_request_tools(event))
                case CallStart(index=index, id=call_id, name=name):
                    await self.settle()
                    turn.answered = True
                    await self.release()
                    self.wire[index] = turn.calls
                    turn.calls += 1
                    self.calling = True
                    await turn.out(CallStart(index=self.wire[index], id=call_id, name=name))
                case ArgsDelta(index=index, id=call_id, delta=delta):
                    self.args_sent.add(index)
                    await turn.out(ArgsDelta(index=self.wire[index], id=call_id, delta=delta))
                case CallEnd(index=index, id=call_id, name=name, arguments=args, raw=text):
                    wire = self.wire[index]
                    if index not in self.args_sent:
                        delta = _encode(args).decode()
                        await turn.out(ArgsDelta(index=wire, id=call_id, delta=delta))
                    await turn.out(
                        CallEnd(index=wire, id=call_id, name=name, arguments=args, raw=text)
                    )
                    self.calling = False
                    if self.later:
                        await turn.out(ReasoningDelta(text="".join(self.later)))
                        self.later.clear()
                    if not turn.call.parallel:
                        raise _Stop
                case CallError():
                    await self.call_error(event)
                case ReasoningDelta(text=text):  # <think>…</think> in the text
                    await self.reasoning_out(text)
                case _:
                    pass

    async def reasoning_out(self, text: str) -> None:
        """The model's reasoning, where it comes (never held: it is not the
        answer): before the answer, the whitespace it wrote first left out;
        inside a call, whose block is open on the wire, after that call."""
        if not self.turn.answered:
            self.blank = ""
        elif self.calling:
            self.later.append(text)
            return
        await self.turn.out(ReasoningDelta(text=text))

    async def _leading(self, text: str) -> None:
        """``say`` until the model writes more than whitespace: whitespace alone
        waits (``blank``), in case reasoning follows it."""
        if not self.turn.answered and text.isspace():
            self.blank += text
            return
        self.turn.answered = True
        await self.settle()
        await self.text_out(text)

    async def settle(self) -> None:
        """The answer begins (or the reply ends): the whitespace that waited goes
        out, and the text after it takes the plain way (``text_out``)."""
        self.say = self.text_out
        if self.blank:
            blank, self.blank = self.blank, ""
            await self.text_out(blank)

    async def text_out(self, text: str) -> None:
        if self.turn.calls:
            return  # post-call text: see the module docstring
        if self.hold:
            self.held.append(text)
        else:
            await self.turn.out(TextDelta(text=text))

    async def release(self) -> None:
        if self.hold:
            self.hold = False
            if not self.turn.calls and self.held and self.turn.call.preamble:
                await self.turn.out(TextDelta(text="".join(self.held)))
            self.held.clear()

    async def call_error(self, error: CallError) -> None:
        turn = self.turn
        if error.reason == "unterminated" and self.ending in _LENGTH:
            # Cut by the token limit: announced, its partial arguments stand; not
            # announced (cut before its name, or json_object's answer cut in its
            # text, which went out), neither re-prompted into the same limit nor
            # its markup passed on as text. The finish says why, but for one not
            # announced after calls that were: what follows a call is never
            # forwarded (the module docstring), so the reply is those calls, whole,
            # and says ``tool_calls``, not a cut the client cannot see.
            self.cut = error.index in self.wire or not self.turn.calls
            raise _Stop  # nothing after it is forwarded
        if error.index in self.wire:
            message = f"the model wrote a malformed call to {error.name!r}: {error.message}"
            await turn.out(StreamError(kind="malformed_call", message=message))
            self.failed = True
            raise _Stop  # reported; play() sees the error already sent
        if not turn.calls and turn.repairs > 0:
            self.broken = error
            raise _Stop
        if turn.call.tool_choice == "none":
            raise _Stop  # the answer ends where the call began (module docstring)
        await self.say(error.raw)

    def repair_message(self) -> str | None:
        """What to tell the model when this attempt must be redone, else None."""
        renderer = get_renderer(self.turn.dialect)
        broken, call = self.broken, self.turn.call
        if broken is not None and broken.reason == "unknown_tool" and any(
            t.name == broken.name for t in call.tools
        ):  # a tool of the request that the tool_choice leaves out: not "no tool named"
            said = f"`{broken.name}` may not be called in this reply. {choice_words(call)}"
            return f"{said}\n{renderer.format_reminder()}"
        if broken is not None:
            return f"{broken.message}\n{renderer.format_reminder()}"
        if self.hold and not self.turn.calls:
            instruction = choice_words(self.turn.call) or ""
            return (
                f"You answered without calling a tool. {instruction} "
                f"Write the call now.\n{renderer.format_reminder()}"
            )
        return None

    async def give_up(self) -> None:
        """No repair left: pass what was held through as text."""
        if self.broken is not None and self.turn.call.tool_choice != "none":
            await self.say(self.broken.raw)
        self.hold = False
        if self.held and not self.turn.calls:
            await self.turn.out(TextDelta(text="".join(self.held)))
        self.held.clear()


class _Repeat(_Attempt):
    """The re-prompt after a broken call was repaired, once the client has seen
    ``seen``, the text the model wrote before that call: the model often writes
    it again, and the client got it twice ("I'll check. I'll check."). While this
    attempt's text repeats ``seen`` it is held; the repeat is not sent again, and
    from where the text differs all of it is (nothing the client has not seen is
    left out). A class of its own: the first attempt of every request pays
    nothing for it."""

    def __init__(self, turn: _Turn, seen: str) -> None:
        super().__init__(turn)
        self.seen: str | None = seen
        self.pending = ""  # text that repeats the start of ``seen`` so far

    async def text_out(self, text: str) -> None:
        seen = self.seen
        if seen is None or self.turn.calls or self.hold:
            await super().text_out(text)
            return
        pending = self.pending + text
        if seen.startswith(pending):
            self.pending = pending
            return
        self.seen, self.pending = None, ""
        if pending.startswith(seen):
            pending = pending[len(seen) :]  # the whole repeat, then new text
        if pending:
            await super().text_out(pending)


def _no_request_tools(request: CallEnd) -> CallError:
    """An ``am:request_tools`` call, as the error the model is told about."""
    message = (
        f"{REQUEST_NAME} is not available here: every tool you can call is defined in "
        "the system prompt. Call the tool you need directly."
    )
    return CallError(
        index=request.index, id=request.id, name=request.name, raw=request.raw,
        reason="unknown_tool", message=message,
    )


async def run_turn(
    model: Model,
    call: ProxyCall,
    emit: Emit,
    *,
    dialect: str = "am_xml",
    max_repairs: int = 1,
    id_prefix: str = "call_",
    flush: Flush | None = None,
    ready: Flush | None = None,
    think_open: bool = False,
    request: ModelRequest | None = None,
) -> None:
    """Drive one request's upstream turn, handing each output event to ``emit``.

    ``request`` (optional) is ``upstream_request(call, dialect)``, built
    already by a caller that needed it too (the proxy's Anthropic stream says
    its estimated input tokens before the upstream answers): built once.

    ``flush`` (optional) is awaited after the events of each upstream chunk, so
    that a writer may buffer ``emit`` output and send it once per chunk.
    ``ready`` (optional, for a stream) is awaited once, when the upstream has
    first accepted a request, before any event: the writer may then send its
    status line and keep the client's connection alive while nothing is emitted
    (a model that reasons, text held for a required call).

    Raises ``ProviderError`` when the upstream refuses a request before the client
    has seen anything (so the caller can still answer with the upstream's HTTP
    status): always for a non-streaming call, and for a stream before its first
    event or ``ready``. Later failures are emitted as ``StreamError``.
    """
    turn = _Turn(
        model, call, emit, dialect, max_repairs, id_prefix, flush or _no_flush, ready, think_open
    )
    await turn.run(request)
