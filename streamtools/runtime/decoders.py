"""Decoders: one face for the text parser and for native tool calls.

Theory of operation
-------------------
A turn feeds every chunk of the model's stream to a decoder and forwards the
events it returns (see ``streamtools.runtime.turn``). ``PromptDecoder`` wraps
the sans-IO ``Parser`` (prompt dialects: calls are written in the text);
``NativeDecoder`` wraps ``NativeCalls`` (the provider streams call deltas and
text is only text, ended at a user stop string as a provider would). Both end
with exactly one ``Finish``.

In prompt mode a provider's native call deltas are ignored: we asked for no
native tools, so a stray one is not ours to run. ``NativeCalls`` is imported
when first needed, so prompt mode never depends on it.

``requested_tools`` recognises the ``am:request_tools`` call of the
``am_xml`` dialect (the model asking for tools it was only told about in
summary) and returns the names it asks for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from streamtools.events import CallEnd, Finish, ParserEvent, TextDelta
from streamtools.model import CallChunk, FinishChunk
from streamtools.parser import Parser
from streamtools.parser.markers import stop_strings
from streamtools.parser.stopcut import StopCutter
from streamtools.tools import ToolRegistry

__all__ = [
    "REQUEST_TOOLS", "NativeDecoder", "PromptDecoder", "requested_tools", "tool_names",
]

REQUEST_TOOLS = "am:request_tools"


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
        # None: every call name is accepted (the parser checks syntax only).
        self.parser = Parser(dialect, tools, stop, id_prefix=id_prefix, think_open=think_open)

    @property
    def stopped(self) -> bool:
        return self.parser.stopped

    def text(self, text: str) -> list[ParserEvent]:
        return self.parser.feed(text) if text else []

    def call(self, chunk: CallChunk) -> list[ParserEvent]:
        return []

    def end(self, finish: FinishChunk | None) -> list[ParserEvent]:
        events = self.parser.end(finish.reason if finish is not None else None)
        last = events[-1]
        if finish is not None and finish.stop_sequence and isinstance(last, Finish):
            if last.stop_sequence is None:  # the provider cut at a stop string, not the parser
                events[-1] = Finish(reason=last.reason, stop_sequence=finish.stop_sequence)
        return events


class NativeDecoder:
    """Native call deltas through ``NativeCalls``; text passes straight through,
    but for the user's ``stop`` strings: it ends at one, as ``PromptDecoder``'s
    text does, for a provider that ignores ``stop`` (or drops it for a model that
    refuses it): ``StopCutter`` cuts it there."""

    def __init__(
        self, tools: ToolRegistry | None, *, id_prefix: str = "call_", stop: Sequence[str] = ()
    ) -> None:
        from streamtools.native import NativeCalls

        # NativeCalls takes names; the executor validates arguments itself.
        # None: every call name is accepted, as by ``PromptDecoder``.
        self.calls = NativeCalls(None if tools is None else list(tools), id_prefix=id_prefix)
        self.cut = StopCutter(stop_strings(stop)) if stop else None

    @property
    def stopped(self) -> bool:
        return self.cut is not None and self.cut.hit is not None

    def text(self, text: str) -> list[ParserEvent]:
        if self.cut is not None:
            text = self.cut.feed(text)
        return [TextDelta(text=text)] if text else []

    def call(self, chunk: CallChunk) -> list[ParserEvent]:
        return self.calls.feed(chunk)

    def end(self, finish: FinishChunk | None) -> list[ParserEvent]:
        events: list[ParserEvent] = []
        hit = None
        if self.cut is not None:  # text held back as a stop string's start, first
            held = self.cut.flush()
            if held:
                events.append(TextDelta(text=held))
            hit = self.cut.hit
        events += self.calls.end(finish.reason if finish is not None else None)
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
