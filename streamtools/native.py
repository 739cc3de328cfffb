"""Native tool calls: provider call deltas mapped onto the parser's events.

Theory of operation
-------------------
In native mode the provider does the parsing and streams ``CallChunk`` deltas
(``streamtools.model``); ``NativeCalls`` turns them into the same events the
text parser emits, so consumers handle one stream whatever the mode:

    calls = NativeCalls(registry)
    for chunk in call_chunks:
        events += calls.feed(chunk)       # CallStart, ArgsDelta
    events += calls.end()                 # CallEnd or CallError for the calls still open

Identity. A chunk belongs to the call its provider ``index`` points at, with
one exception: a chunk whose ``id`` differs from that call's id starts a new
call, because some servers put every parallel call on index 0 and tell them
apart only by id. A chunk with no id continues the latest call on its index.
Our event ``index`` counts calls from 0 in the order they started; a call
with no provider id (Ollama) gets ``<id_prefix><n>``, and so does a call whose
provider id an earlier call of the same reply already has (a server bug, but
two calls with one id cannot both be answered), so event ids are unique.

Events. ``CallStart`` is emitted as soon as a call's name is known (arguments
that arrive before the name are held, then released with it). Each argument
fragment becomes one ``ArgsDelta`` unchanged, so the fragments concatenate to
the provider's argument text. A call whose arguments are empty gets one
``ArgsDelta("{}")`` when it completes so that the append-only invariant holds: the
deltas always decode to ``CallEnd.arguments``. Ollama's whole calls are one
chunk with the full JSON text and need nothing special.

Completion. A call is complete when its chunk says ``done`` (the provider saw
the wire mark it complete: Anthropic's ``content_block_stop``, the next call
starting on OpenAI, every Ollama call) or, for the calls still open, at
``end``, unless the finish reason says the stream was cut: after ``"error"``
(a broken stream, an in-band error) or ``"content_filter"`` every open call is a
``CallError(reason="unterminated")``, and after ``"length"`` / ``"max_tokens"``
each open call whose arguments are not a whole JSON object is. A call cut
short never runs with the arguments it happened to have (``{}`` for none).
After ``"malformed_call"`` (the API refused the call the model wrote, and
says no more: Gemini's ``MALFORMED_FUNCTION_CALL``) every open call, or one
call with no name when none was open, is a ``CallError(reason="malformed")``
that tells the model to write it again, which the repair ladder sends it.
After ``"unexpected_call"`` (the API refused a call to a tool that was not
offered for this answer: Gemini's ``UNEXPECTED_TOOL_CALL``, when a request
offers no tools or says to call none, tensorzero/tensorzero#2329, or when the
model calls a function it was not given, epam/ai-dial-adapter-vertexai#325)
every open call, whatever its name, or one call with no name when none was
open, is a ``CallError(reason="unknown_tool")``: it does not run, and the
model is told which tools it may call, or to answer in text when none.
A ``done`` call is validated and ended by that very ``feed``, so the runtime
can run it while the model is still writing the next one (eager dispatch).
A call once ended takes nothing more: a later chunk on its index
(no id, or its own id) that carries a name or arguments becomes a
``CallError(reason="malformed")`` of its own right away, with a fresh event
index and id, and the ended call stays as it was (it may be running); a
repeated bare ``done`` is ignored. A chunk with a new id on that index starts
a new call as usual.

Validation happens when a call completes (its arguments are whole only
then): arguments that are not a JSON object give
``CallError(reason="invalid_json")``, but for ``null``, which some servers
stream for a tool without parameters: it is no arguments, as an empty text
is, so ``CallEnd.arguments`` is ``{}`` (and the schema decides: a tool whose
parameters are all optional runs, one with a required parameter is told it
is missing). Its ``ArgsDelta("null")`` has gone out already and events are
never taken back, so ``raw`` and the deltas stay ``"null"``: they do not
decode to the arguments themselves there. Nor for arguments encoded twice, a
JSON string whose text is a JSON object (vLLM's hermes parser for Granite 4,
which writes its arguments as a string, vllm-project/vllm#54964; gpt-5.5's
MCP calls through the Responses API, justrach/codegraff2#141): they are that
object, since the model wrote them right (a ``CallError`` asked it to fix
them, again and again). Arguments that are several JSON objects one after
another (``{"q": "a"}{"q": "b"}``: a model that meant one call per object,
Gemini 3 in NousResearch/hermes-agent#72488, others in BerriAI/litellm#40582)
are ``invalid_json`` with a message that says so and asks for one call per
object: "trailing characters" told the model nothing it could act on, and
nothing runs, since which of them was meant (often the same call repeated)
is not known. With a catalog, an unknown name gives
``unknown_tool`` and arguments that fail the schema ``invalid_arguments``; a
call that never got a name is ``malformed``.
``raw`` is the argument text as the provider sent it. ``extra`` (data the API
attached to the call, such as Gemini's thought signature) is merged over the
call's chunks and carried on its ``CallEnd``. ``end`` returns no
``Finish``: the provider's finish reason belongs to the caller.

Core module: standard library and msgspec only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from streamtools.errors import ParserStateError, describe_json_error
from streamtools.events import (
    ArgsDelta,
    CallEnd,
    CallError,
    CallErrorReason,
    CallStart,
    ParserEvent,
)
from streamtools.model import CallChunk
from streamtools.parser.jsonscan import ValueScanner

__all__ = ["NativeCalls"]

_JSON_BLANKS = " \t\r\n"
_BROKEN = frozenset({"error", "content_filter"})  # the stream did not end as the model chose
_SHORT = frozenset({"length", "max_tokens"})  # out of tokens: what is whole may run
# the API could not read the call the model wrote (Gemini's MALFORMED_FUNCTION_CALL,
# as ``streamtools.providers.openai_finish`` names it)
MALFORMED_CALL = "malformed_call"
_UNREAD = (
    "The API could not read the tool call you wrote (a malformed function call), so "
    "nothing ran. Call the tool again by its exact name, with its arguments as one JSON "
    "object and nothing else."
)
# the API refused a call to a tool not offered for this answer (Gemini's
# UNEXPECTED_TOOL_CALL, as ``streamtools.providers.openai_finish`` names it)
UNEXPECTED_CALL = "unexpected_call"


def _object_in(text: str) -> dict[str, Any] | None:
    """The JSON object ``text`` holds, if it is one (arguments encoded twice)."""
    try:
        inner = msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError):
        return None
    return inner if isinstance(inner, dict) else None


def _objects_in_a_row(raw: str) -> int:
    """How many JSON objects ``raw`` is, one after another (blanks between),
    when it is two or more of them and nothing else; else 0."""
    scan, count, i = ValueScanner(), 0, 0
    while rest := raw[i:].lstrip(_JSON_BLANKS):
        if not rest.startswith("{"):
            return 0
        scan.restart()
        i = scan.feed(raw, len(raw) - len(rest), final=True)
        if not scan.done:
            return 0
        count += 1
    return count if count > 1 else 0


def _whole_object(raw: str) -> bool:
    try:
        return isinstance(msgspec.json.decode(raw), dict)
    except (msgspec.DecodeError, RecursionError, UnicodeEncodeError):
        return False


class _Call:
    __slots__ = ("index", "provider_id", "id", "name", "parts", "started", "ended", "extra")

    def __init__(self, index: int, provider_id: str | None, call_id: str) -> None:
        self.index = index
        self.provider_id = provider_id
        self.id = call_id
        self.name: str | None = None
        self.parts: list[str] = []
        self.started = False
        self.ended = False
        self.extra: dict[str, Any] | None = None


class NativeCalls:
    """Sans-IO mapper of native call deltas to ``CallStart``/``ArgsDelta``/``CallEnd``.

    ``tools`` is a ``ToolCatalog`` (names + ``check_arguments``), plain names,
    or None to accept every name. Calls without a provider id are named
    ``f"{id_prefix}{n}"``.
    """

    def __init__(self, tools: Iterable[str] | None = None, *, id_prefix: str = "call_") -> None:
        # A ToolCatalog iterates over its names too; it is told apart by check_arguments.
        self._catalog: Any | None = None
        self._id_prefix = id_prefix
        self._names: frozenset[str] | None = None
        if tools is not None:
            if callable(getattr(tools, "check_arguments", None)):
                self._catalog = tools
            else:
                self._names = frozenset(tools)
        self._calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}
        self._ids: set[str] = set()  # the event ids given out
        self._ended = False

    @property
    def calls(self) -> int:
        """How many calls have been seen so far."""
        return len(self._calls)

    def feed(self, chunk: CallChunk) -> list[ParserEvent]:
        if self._ended:
            raise ParserStateError("can't feed NativeCalls after end()")
        call = self._by_index.get(chunk.index)
        if call is not None:
            new_id = bool(chunk.id) and chunk.id != call.provider_id
            if call.ended and not new_id:
                return self._late(call, chunk)
            if call.ended or (new_id and call.provider_id):
                call = None  # a new call on an index used before
        if call is None:
            call = self._new(chunk.id or None)
            self._by_index[chunk.index] = call
        elif chunk.id and call.provider_id is None:
            call.provider_id = chunk.id
            if not call.started and chunk.id not in self._ids:
                self._ids.discard(call.id)
                call.id = chunk.id
                self._ids.add(call.id)
        out: list[ParserEvent] = []
        if chunk.name and call.name is None:
            call.name = chunk.name
        if chunk.arguments:
            call.parts.append(chunk.arguments)
        if chunk.extra is not None:
            call.extra = {**(call.extra or {}), **chunk.extra}
        if call.started:
            if chunk.arguments:
                out.append(ArgsDelta(index=call.index, id=call.id, delta=chunk.arguments))
        elif call.name is not None:
            call.started = True
            out.append(CallStart(index=call.index, id=call.id, name=call.name))
            out.extend(ArgsDelta(index=call.index, id=call.id, delta=p) for p in call.parts)
        if chunk.done:
            call.ended = True
            out.extend(self._finish(call))
        return out

    def end(self, finish_reason: str | None = None) -> list[ParserEvent]:
        """End the calls still open, as the provider's ``finish_reason`` allows
        (see the module docstring)."""
        if self._ended:
            raise ParserStateError("can't end NativeCalls twice")
        self._ended = True
        broken = finish_reason in _BROKEN
        short = finish_reason in _SHORT
        out: list[ParserEvent] = []
        if finish_reason == MALFORMED_CALL:
            return self._unread()
        if finish_reason == UNEXPECTED_CALL:
            return self._refused()
        for call in self._calls:
            if call.ended:
                continue
            raw = "".join(call.parts)
            if broken or (short and not _whole_object(raw)):
                message = (
                    f"The call to {call.name or 'a tool'} was cut off before it was complete "
                    "and did not run. Make the whole call again."
                )
                out.append(self._error(call, raw, "unterminated", message))
            else:
                out.extend(self._finish(call))
        return out

    def _unread(self) -> list[ParserEvent]:
        """The calls still open, and the call the API could not read, as
        ``CallError(malformed)`` (see the module docstring): one with no name
        when the stream held none of it."""
        out: list[ParserEvent] = []
        for call in [c for c in self._calls if not c.ended] or [self._new(None)]:
            call.ended = True
            out.append(self._error(call, "".join(call.parts), "malformed", _UNREAD))
        return out

    def _refused(self) -> list[ParserEvent]:
        """The calls still open, or the call the API refused when the stream held
        none of it, as ``CallError(unknown_tool)`` (see the module docstring)."""
        if self._catalog is not None:
            allowed: list[str] | None = list(self._catalog)
        else:
            allowed = None if self._names is None else sorted(self._names)
        none = "No tool can be called now: answer in text, without calling a tool."
        if allowed is None:
            told = "Call only a tool you were given, or answer in text."
        elif allowed:
            listed = ", ".join(f"`{n}`" for n in allowed)
            told = f"The only tools you may call are: {listed}; or answer in text."
        else:
            told = none
        out: list[ParserEvent] = []
        for call in [c for c in self._calls if not c.ended] or [self._new(None)]:
            call.ended = True
            what = f"your call to {call.name}" if call.name else "the tool call you wrote"
            # a tool it was given, refused all the same: the request said to call none
            said = none if allowed and call.name in allowed else told
            message = (
                f"The API refused {what}: it was to a tool that could not be called for "
                f"this answer, so nothing ran. {said}"
            )
            out.append(self._error(call, "".join(call.parts), "unknown_tool", message))
        return out

    def _new(self, provider_id: str | None) -> _Call:
        """A new call: the provider's id for its events unless this reply already
        gave that id out, else ``<id_prefix><n>`` (made unique if need be)."""
        index = len(self._calls)
        call_id = provider_id
        if not call_id or call_id in self._ids:
            call_id = f"{self._id_prefix}{index}"
            extra = 0
            while call_id in self._ids:  # a provider id spelled like ours
                extra += 1
                call_id = f"{self._id_prefix}{index}_{extra}"
        self._ids.add(call_id)
        call = _Call(index, provider_id, call_id)
        self._calls.append(call)
        return call

    def _late(self, ended: _Call, chunk: CallChunk) -> list[ParserEvent]:
        """A chunk for a call already ended: it may have run, so nothing is added to it."""
        if not chunk.arguments and not chunk.name:
            return []  # a repeated completion mark carries nothing
        late = self._new(None)
        late.name, late.ended = chunk.name or ended.name, True
        late.provider_id = ended.provider_id  # more chunks with that id are late too
        self._by_index[chunk.index] = late
        message = (
            f"Part of a call to {late.name or 'a tool'} arrived after that call was complete "
            "and was not used. Make each call complete, in one piece."
        )
        return [self._error(late, chunk.arguments, "malformed", message)]

    def _finish(self, call: _Call) -> list[ParserEvent]:
        raw = "".join(call.parts)
        if call.name is None:
            message = "The tool call has no tool name. Call a tool by its exact name."
            return [self._error(call, raw, "malformed", message)]
        out: list[ParserEvent] = []
        if not raw.strip():
            out.append(ArgsDelta(index=call.index, id=call.id, delta="{}"))
            raw = "{}"
        try:
            arguments = msgspec.json.decode(raw)
        # also: a model stuck on ``[[[``, and a lone surrogate half (a model of the
        # user's own, a scripted chunk), which msgspec cannot encode to read
        except (msgspec.DecodeError, RecursionError, UnicodeEncodeError) as exc:
            message = (
                f"The arguments of {call.name} are not valid JSON ({describe_json_error(exc)}). "
                "Send the arguments as one JSON object."
            )
            if several := _objects_in_a_row(raw):  # see the module docstring
                message = (
                    f"The arguments of {call.name} are {several} JSON objects one after "
                    "another, and a call takes one, so nothing ran. To call "
                    f"{call.name} more than once, make one call for each object."
                )
            return [*out, self._error(call, raw, "invalid_json", message)]
        if arguments is None:  # ``null``: no arguments (see the module docstring)
            arguments = {}
        elif isinstance(arguments, str):  # encoded twice (see the module docstring)
            inner = _object_in(arguments)
            arguments = arguments if inner is None else inner
        if not isinstance(arguments, dict):
            message = f"The arguments of {call.name} must be a JSON object, not {raw[:80]}."
            return [*out, self._error(call, raw, "invalid_json", message)]
        problem = self._check(call.name, arguments)
        if problem is not None:
            return [*out, self._error(call, raw, *problem)]
        end = CallEnd(
            index=call.index,
            id=call.id,
            name=call.name,
            arguments=arguments,
            raw=raw,
            extra=call.extra,
        )
        return [*out, end]

    def _check(
        self, name: str, arguments: dict[str, Any]
    ) -> tuple[CallErrorReason, str] | None:
        if self._catalog is not None:
            if name not in self._catalog:
                return "unknown_tool", self._unknown(name, list(self._catalog))
            message = self._catalog.check_arguments(name, arguments)
            return None if message is None else ("invalid_arguments", str(message))
        if self._names is not None and name not in self._names:
            return "unknown_tool", self._unknown(name, sorted(self._names))
        return None

    def _unknown(self, name: str, allowed: list[str]) -> str:
        unknown = getattr(self._catalog, "unknown_tool_message", None)
        if callable(unknown):
            return str(unknown(name))
        listed = ", ".join(allowed) if allowed else "(none)"
        return f"There is no tool named {name!r}. The tools you can call are: {listed}."

    def _error(self, call: _Call, raw: str, reason: CallErrorReason, message: str) -> CallError:
        return CallError(
            index=call.index, id=call.id, name=call.name, raw=raw, reason=reason, message=message
        )
