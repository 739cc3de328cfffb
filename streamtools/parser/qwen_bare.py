"""Qwen3-Coder's call form without its ``<tool_call>`` opener: ``<function=NAME>…``.

Theory of operation
-------------------
Qwen3-Coder models, after a sentence of reasoning before a call (which their
system prompt allows), often leave out the ``<tool_call>`` that opens the call
and still write the rest, its closing tag too::

    Let me read it.

    <function=Read>
    <parameter=file_path>
    /path/to/the/file.md
    </parameter>
    </function>
    </tool_call>

(ollama/ollama#18530 and #16686, deterministic for some prompts; vitali87/
code-graph-rag#236). It was text: the call lost without a word. vLLM's
``qwen3_coder`` parser keys on ``<function=`` for this reason. ``<function=`` is
a marker of ``hermes`` and ``am_xml`` (both read this form inside the tags), and
its body (``BareFunctionBody``) is undecided while the tag's name arrives: the
name's characters (no whitespace, quote, ``<``, ``>``, ``=`` or ``/``), at most
``NAME_LIMIT``; with a catalog a prefix of a tool's name at every step and a
tool's name at the ``>``. Anything else makes the text prose, as it was
(``<function=`` in prose or code, a name no tool has). The hold-back is so
bounded by ``len("<function=") + NAME_LIMIT`` (``HOLD_BOUND``).

From the ``>`` on the call is read by the ``hermes_xml`` machine as inside the
tags (parameters, the JSON arguments object, a value left open). After
``</function>`` whitespace is the call's; then ``</tool_call>`` (also ``</tool_call
>``) is its closing tag, a chat template's special token is layout, and
``<function=`` opens the next call; anything else ends the call before it,
complete (it was closed by ``</function>``), the text left to the core; so does
the stream's end, whatever the finish reason. Anything out of place before
``</function>`` (text, invalid JSON arguments) ends the call there as
``CallError(malformed)`` and the rest is text again: with no ``<tool_call>``
there is no closing tag to skip to, and prose that names a tool in this tag
(``the <function=search> tag``) would lose all that follows it.

Core package: standard library only.
"""

from __future__ import annotations

import re

from streamtools.events import ParserEvent
from streamtools.parser.calls import (
    REJECTED,
    RUNNING,
    SPECIAL_TOKEN,
    SPECIAL_TOKEN_START,
    CallContext,
)
from streamtools.parser.catalog import name_prefixes, tool_named
from streamtools.parser.hermes_xml import AFTER, CLOSE, CUT, FBODY, FUNCTION, SKIP, QwenXmlBody

__all__ = ["FUNCTION", "HOLD_BOUND", "NAME_LIMIT", "BareFunctionBody"]

NAME_LIMIT = 64
HOLD_BOUND = len(FUNCTION) + NAME_LIMIT
_BARE = 100  # (a state no other body has) the tag's name arriving, undecided
_NOT_NAME = frozenset(" \t\r\n\"'<>=/")
_CLOSE_START = re.compile(r"</tool_call[ \t\r\n]{0,8}\Z")
_LOOSE = re.compile(r"</tool_call[ \t\r\n]{0,8}>")


class BareFunctionBody(QwenXmlBody):
    """A call in Qwen3-Coder's form opened by ``<function=`` alone (see above)."""

    def __init__(self, ctx: CallContext, marker: str) -> None:
        super().__init__(ctx, marker)
        self.state = _BARE
        self.undecided = True
        self.name_part = ""
        self.ends_here = False  # the call ends complete where the text after it begins
        names = tuple(ctx.catalog)
        self.known = name_prefixes(names) if names else None

    def feed(self, s: str, pos: int, out: list[ParserEvent]) -> int:
        self.out = out
        if self.state == _BARE:
            i = self._name(s, pos)
            if self.status != RUNNING or self.state == _BARE:
                return i
            pos = i
        return QwenXmlBody.feed(self, s, pos, out)

    def _name(self, s: str, pos: int) -> int:
        """The tag's name, decided at its ``>``: the call starts, or the text is prose."""
        i, n = pos, len(s)
        known = self.known
        while i < n:
            c = s[i]
            if c == ">":
                name = self.name_part
                if name and (known is None or tool_named(self.ctx.catalog, name) is not None):
                    self.record(s, pos, i + 1)
                    self.undecided = False
                    self._named(name)
                    return i + 1
                break
            if c in _NOT_NAME or len(self.name_part) >= NAME_LIMIT:
                break
            self.name_part += c
            if known is not None and self.name_part not in known:
                break
            i += 1
        else:
            self.record(s, pos, n)
            return n
        self.record(s, pos, i)
        self.status = REJECTED
        return i

    def _tags(self, s: str, i: int) -> int:
        if self.state != AFTER:
            return QwenXmlBody._tags(self, s, i)
        n = len(s)
        while i < n and s[i] in " \t\r\n":
            i += 1
        if i == n:
            return i
        m = _LOOSE.match(s, i)
        if m is not None:
            return -m.end()  # </tool_call>: the call's closing tag, which it still wrote
        if s.startswith(FUNCTION, i) or SPECIAL_TOKEN.match(s, i) is not None:
            return QwenXmlBody._tags(self, s, i)  # the next call; layout
        rest = s[i:]
        if (
            FUNCTION.startswith(rest) or _CLOSE_START.match(s, i) is not None
            or CLOSE.startswith(rest) or SPECIAL_TOKEN_START.match(s, i) is not None
        ):
            return i  # one of them may be arriving: wait
        self.ends_here = True  # text: the call ended at </function>
        self.state = CUT
        return i

    def _wrong(self, i: int, what: str) -> int:
        QwenXmlBody._wrong(self, i, what)
        self.state = CUT  # no </tool_call> to skip to: the call ends here, the rest is text
        return i

    def _json_args(self, s: str, i: int) -> int:
        j = QwenXmlBody._json_args(self, s, i)
        if self.state == SKIP:
            self.state = CUT  # (as ``_wrong``: the rest is text)
        return j

    def end(self, tail: str, finish_reason: str, out: list[ParserEvent]) -> str | None:
        self.out = out
        if self.state == _BARE:
            return self.raw_text() + tail  # no tag: prose
        if self.state == AFTER:
            self._close_call()  # closed by </function>; the rest (a tag's start) is text
            return tail
        rest = tail.strip()
        if self.state == FBODY and rest and rest[0] != "<":
            self._wrong(0, f"Text {rest!r}")  # as ``_tags`` says once it has seen enough
            self._close_call()
            return tail
        return QwenXmlBody.end(self, tail, finish_reason, out)
