"""Decoders: one face for the text parser and for native tool calls.

Theory of operation
-------------------
A turn feeds every chunk of the model's stream to a decoder and forwards the
events it returns (see ``streamtools.runtime.turn``). ``PromptDecoder`` wraps
the sans-IO ``Parser`` (prompt dialects: calls are written in the text);
``NativeDecoder`` wraps ``NativeCalls`` (the provider streams call deltas).
Both end with exactly one ``Finish``.

Native text holds no calls, but it may hold reasoning: a server that does not
split it out (llama-server with ``--reasoning-format none``, vLLM without a
reasoning parser, Ollama's OpenAI endpoint without ``think``) streams a
DeepSeek-R1 distill's or Qwen3's ``<think>…</think>`` as content. So native
text goes through the same ``Parser`` as prompt mode's, over ``NO_CALLS`` (a
syntax with no call markers): ``<think>`` (and ``think_open``) becomes
``ReasoningDelta`` exactly as in a prompt dialect, whatever the chunking, and
the reply ends at a user stop string as a provider would (for one that
ignores ``stop``). The fast path passes a delta without ``<`` through whole.

``think_open`` (the chat template ends the prompt with ``<think>``) is undone
by the provider's own reasoning channel. A server that splits reasoning out
(llama-server's default ``--reasoning-format``, vLLM's and SGLang's reasoning
parsers, Ollama's ``thinking``) has read that ``<think>`` itself: the reasoning
comes as ``ReasoningChunk``s and the text holds the answer only, with no
``</think>`` ever to end the reasoning ``think_open`` began, so the whole
answer was read as reasoning. So the first ``ReasoningChunk`` with text that
comes while the reply is still in that opening reasoning (the parser has
given nothing but ``ReasoningDelta``) ends it (``TextReader.provider_reasoning``):
what the parser holds is flushed as it would be at the end, and the text
after it goes through a new parser that starts in text. The ``Parser`` stays
sans-IO: the decoder, which sees both channels, makes the choice, once per
reply, off the per-delta path; it is the same whatever the chunking, since the
switch happens between chunks of two channels.

A reply that *finishes* (``stop``) still in that opening reasoning, with no
``</think>`` in it, is a model that skipped its thinking and answered: models
trained on these templates close their thinking before they answer, and one
whose template closed the block itself (Qwen3's with ``enable_thinking`` false
ends the prompt with ``<think>\n\n</think>``), run with ``think_open`` all the
same, writes the answer straight away (vLLM's ``qwen3`` parser, which reads the
reply as still in thinking, returns such an answer as all reasoning:
vllm-project/vllm#53284). Read as reasoning, the reply was empty, the agent
asked again, and ended with ``RepairExhausted``. ``TextReader.end`` reads it
again from its start as a reply without ``think_open``: its text comes as
``TextDelta`` after the ``ReasoningDelta`` it streamed as, a call in it is a call (vLLM's ``qwen3``
reasoning parser likewise ends reasoning at a ``<tool_call>`` written with no
``</think>``), and ``reread`` tells the turn the reasoning was that answer. The
choice is made once, at the end, from all the text, so it is the same whatever
the chunking. A reply cut at the token limit there is unfinished thinking (as
vLLM's ``deepseek_r1`` and ``qwen3`` parsers with thinking on, and llama.cpp's
``thinking_forced_open``, read a reply with no ``</think>``): reasoning still.

The prompt parser checks a call's arguments against its tool (a bad call is a
``CallError``, with what to fix, before anything runs). ``PromptDecoder`` gives
it the registry through ``CheckedArguments``, which keeps the keyword arguments
that check gave, for the call the parser then ends with those very arguments
(``validated``): the runtime runs the call with them and validates nothing
again, so a tool's own checks (a Struct's ``__post_init__``, pydantic's
validators) run once per call. A call the parser did not check, or whose
arguments are another object than the ones checked, is validated by the runtime.

In prompt mode a provider's native call deltas are ignored: we asked for no
native tools, so a stray one is not ours to run. ``NativeCalls`` is imported
when first needed, so prompt mode never depends on it.

``requested_tools`` recognises the ``am:request_tools`` call of the
``am_xml`` dialect (the model asking for tools it was only told about in
summary) and returns the names it asks for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from streamtools.events import CallEnd, Finish, ParserEvent, ReasoningDelta, TextDelta
from streamtools.model import CallChunk, FinishChunk
from streamtools.parser import NO_CALLS, Parser
from streamtools.parser.textmode import THINK_CLOSE
from streamtools.tools import ToolArgumentsError, ToolRegistry

__all__ = [
    "REQUEST_TOOLS", "CheckedArguments", "NativeDecoder", "PromptDecoder", "TextReader",
    "requested_tools",
    "tool_names",
]

REQUEST_TOOLS = "am:request_tools"


class TextReader:
    """A reply's text through a ``Parser`` (``make(think_open)`` builds one), and
    the end of ``think_open``'s opening reasoning when the provider sends its
    reasoning in its own channel, or when the reply finishes inside it (see the
    module docstring)."""

    def __init__(self, make: Callable[[bool], Parser], think_open: bool) -> None:
        self._make = make
        self.parser = make(think_open)
        # still in the reasoning ``think_open`` began: no event but reasoning yet
        self.opening = think_open
        self._opening_text: list[str] = []  # the text read in it, as it came
        # the opening reasoning was read again as the reply's answer (``end``)
        self.reread = False

    @property
    def stopped(self) -> bool:
        return self.parser.stopped

    def feed(self, text: str) -> list[ParserEvent]:
        if not text:
            return []
        events = self.parser.feed(text)
        if self.opening:
            self._opening_text.append(text)
            if any(type(e) is not ReasoningDelta for e in events):
                self.opening = False
                self._opening_text = []
        return events

    def provider_reasoning(self) -> list[ParserEvent]:
        """The provider sent reasoning in its own channel: an opening reasoning
        ends here (what the parser held, flushed as ``end`` flushes it), and the
        text after it is read as text. Nothing to do after that, or without
        ``think_open``."""
        if not self.opening:
            return []
        self.opening = False
        self._opening_text = []
        *events, _finish = self.parser.end()
        self.parser = self._make(False)
        return events

    def end(self, finish_reason: str | None) -> list[ParserEvent]:
        """The parser's ``end``; but a reply that finished (``stop``) still in
        the opening reasoning, no ``</think>`` in it, is read again from its
        start as a reply without ``think_open`` (``reread``): the model skipped
        its thinking and answered (see the module docstring). One ended at a
        stop string here is read again too, as it is when the provider stopped it
        there (a finish ``stop``, the text up to the stop string). One cut at the
        token limit, or that failed, stays reasoning, and so does one that is
        reasoning read again too (its own unclosed ``<think>``)."""
        text = "".join(self._opening_text)
        if not (
            self.opening
            and finish_reason in (None, "stop")
            and text.strip()
            and THINK_CLOSE not in text
        ):
            return self.parser.end(finish_reason)
        fresh = self._make(False)
        again = fresh.feed(text) + fresh.end(finish_reason)
        if not any(_answers(event) for event in again):
            # reasoning read again (the model wrote ``<think>`` itself and never
            # closed it): streamed as that already, it is not sent a second time
            return self.parser.end(finish_reason)
        self.opening, self._opening_text, self.reread = False, [], True
        self.parser = fresh
        return again


def _answers(event: ParserEvent) -> bool:
    """Whether ``event`` is some of an answer: more than reasoning or blank text."""
    if isinstance(event, TextDelta):
        return bool(event.text.strip())
    return not isinstance(event, ReasoningDelta | Finish)


class CheckedArguments:
    """A registry as the parser's tool catalog (``parser.catalog.ToolCatalog``),
    keeping what its argument checks gave (see the module docstring). Reads the
    registry as it is at each look, as the parser did: a tool an MCP server adds
    or withdraws mid-run counts at once."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        # id of the arguments dict checked: (that dict, the tool's keyword arguments)
        self._taken: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}

    def __contains__(self, name: object) -> bool:
        return name in self.registry

    def __iter__(self) -> Iterator[str]:
        return iter(self.registry)

    def schema(self, name: str) -> dict[str, Any] | None:
        return self.registry.schema(name)

    def unknown_tool_message(self, name: str) -> str:
        return self.registry.unknown_tool_message(name)

    def check_arguments(self, name: str, arguments: dict[str, Any]) -> str | None:
        """``ToolRegistry.check_arguments``, keeping the keyword arguments."""
        found = self.registry.get(name)
        if found is None:
            return self.registry.unknown_tool_message(name)
        try:
            kwargs = found.validate(arguments)
        except ToolArgumentsError as exc:
            return str(exc)
        self._taken[id(arguments)] = (arguments, kwargs)
        return None

    def taken(self, call: CallEnd) -> dict[str, Any] | None:
        """The keyword arguments the check of ``call``'s arguments gave, once; None
        when they were not checked (as this object)."""
        arguments, kwargs = self._taken.pop(id(call.arguments), (None, None))
        return kwargs if arguments is call.arguments else None


class PromptDecoder:
    """Text through the dialect's parser."""

    def __init__(
        self,
        dialect: str,
        tools: ToolRegistry | None,
        stop: Sequence[str],
        *,
        id_prefix: str,
        think_open: bool = False,
    ) -> None:
        self.checked = None if tools is None else CheckedArguments(tools)

        def make(think: bool) -> Parser:
            # None: every call name is accepted (the parser checks syntax only).
            return Parser(dialect, self.checked, stop, id_prefix=id_prefix, think_open=think)

        self.reader = TextReader(make, think_open)

    @property
    def parser(self) -> Parser:
        return self.reader.parser

    @property
    def stopped(self) -> bool:
        return self.reader.parser.stopped

    def text(self, text: str) -> list[ParserEvent]:
        return self.reader.feed(text)

    def reasoning(self) -> list[ParserEvent]:
        return self.reader.provider_reasoning()

    def call(self, chunk: CallChunk) -> list[ParserEvent]:
        return []

    def validated(self, call: CallEnd) -> dict[str, Any] | None:
        return None if self.checked is None else self.checked.taken(call)

    @property
    def reread(self) -> bool:
        return self.reader.reread

    def end(self, finish: FinishChunk | None) -> list[ParserEvent]:
        events = self.reader.end(finish.reason if finish is not None else None)
        last = events[-1]
        if finish is not None and finish.stop_sequence and isinstance(last, Finish):
            if last.stop_sequence is None:  # the provider cut at a stop string, not the parser
                events[-1] = Finish(reason=last.reason, stop_sequence=finish.stop_sequence)
        return events


class NativeDecoder:
    """Native call deltas through ``NativeCalls``; text through a ``Parser`` that
    knows no call markers (see the module docstring): ``<think>`` in it is
    reasoning, ``think_open`` starts the reply inside reasoning, and it ends at
    one of the user's ``stop`` strings, as ``PromptDecoder``'s text does."""

    def __init__(
        self,
        tools: ToolRegistry | None,
        *,
        id_prefix: str = "call_",
        stop: Sequence[str] = (),
        think_open: bool = False,
    ) -> None:
        from streamtools.native import NativeCalls

        # NativeCalls takes names; the executor validates arguments itself.
        # None: every call name is accepted, as by ``PromptDecoder``.
        self.calls = NativeCalls(None if tools is None else list(tools), id_prefix=id_prefix)
        self.reader = TextReader(lambda think: Parser(NO_CALLS, None, stop, think_open=think),
                                 think_open)

    @property
    def stopped(self) -> bool:
        return self.reader.parser.stopped

    def text(self, text: str) -> list[ParserEvent]:
        return self.reader.feed(text)

    def reasoning(self) -> list[ParserEvent]:
        return self.reader.provider_reasoning()

    def call(self, chunk: CallChunk) -> list[ParserEvent]:
        return self.calls.feed(chunk)

    def validated(self, call: CallEnd) -> dict[str, Any] | None:
        return None  # NativeCalls checks names only: the runtime validates

    @property
    def reread(self) -> bool:
        return self.reader.reread

    def end(self, finish: FinishChunk | None) -> list[ParserEvent]:
        reason = finish.reason if finish is not None else None
        # text and reasoning held back as a marker's or stop string's start, first
        *events, last = self.reader.end(reason)
        hit = last.stop_sequence if isinstance(last, Finish) else None
        events += self.calls.end(reason)
        if finish is None:
            events.append(Finish(reason="stop", stop_sequence=hit))
        else:
            stop_sequence = finish.stop_sequence or hit
            events.append(Finish(reason=finish.reason, stop_sequence=stop_sequence))
        return events


def requested_tools(call: CallEnd) -> list[str] | None:
    """The tool names an ``am:request_tools`` call asks for; None for any other call."""
    if call.name != REQUEST_TOOLS:
        return None
    names: list[str] = []
    for value in call.arguments.values():
        names.extend(tool_names(value))
    return names


def tool_names(value: Any) -> list[str]:
    """Tool names from an argument: a list of them, or one string of names separated
    by commas (``"a, b"``). Models write that string in more ways: a JSON list
    (``'["a", "b"]'``), brackets without JSON (``[a, b]``), each name quoted
    (``"a", 'b'``). Brackets, quotes and backticks around a name are dropped
    (no tool name holds one), so each is read as the list it means; so are the
    pieces a JSON list in ``<am:request_tools>`` is split into (``'["a"'``).
    Blanks and anything that is not a string are dropped."""
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list):
        return []
    names = (n.strip(_AROUND_NAMES) for n in value if isinstance(n, str))
    return [n for n in names if n]


# what models put around tool names in a list they write as text
_AROUND_NAMES = " \t\r\n\"'`[]"
