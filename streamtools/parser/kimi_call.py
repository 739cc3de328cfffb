"""Kimi K2's own call form, in its chat template's tokens.

Theory of operation
-------------------
Kimi K2 (Instruct, Thinking) writes its calls as::

    <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0
    <|tool_call_argument_begin|>{"q": "x"}<|tool_call_end|>
    <|tool_call_begin|>…<|tool_call_end|><|tool_calls_section_end|>

whatever the prompt teaches, and servers whose parser is off or misses a call
pass the tokens on as text: BerriAI/litellm#12679 ("it just spits out raw tools
as text"), NousResearch/hermes-agent#29735 (via OpenRouter, the section in
``content``), MoonshotAI/Kimi-K2#26 (SGLang's kimi_k2 parser leaving it in
``content``), vybestack/llxprt-code#749 (spaces between the tokens). It was
text: the calls lost, the tokens shown to the user. The section's opener is a
marker of ``hermes`` (the ``<tool_call>`` family), spelled
``<|tool_calls_section_begin|>`` or, as vLLM and llama.cpp also read it,
``<|tool_call_section_begin|>`` (ggml-org/llama.cpp#17376).

The body (``KimiCallBody``) is undecided until ``<|tool_call_begin|>`` follows
the opener (whitespace between them, at most ``_SPACE_LIMIT`` characters):
anything else makes the text prose, as it was. The hold-back is so at most
``HOLD_BOUND`` characters. From there each call is read in turn:

=======  =============================================  ===============================
state    looks for                                      then
=======  =============================================  ===============================
HEAD     ``functions.NAME:IDX`` (or ``NAME:IDX``, or    ARGS, ``CallStart`` (the index
         ``NAME``), then ``<|tool_call_argument_begin|>``  dropped); a call without
                                                         arguments at ``<|tool_call_end|>``
ARGS     one JSON value: an object, streamed as         AFTER
         written; or a JSON string holding one (a
         double-encoded object, as in Kimi-K2#26), sent
         decoded when it closes
AFTER    whitespace, ``<|tool_call_end|>``              BETWEEN
BETWEEN  whitespace, then ``<|tool_call_begin|>``       the call ends; HEAD for the
         (the next call) or the section's closer        next; or the section ends
=======  =============================================  ===============================

A call ends (``CallEnd`` or its error) where what follows its
``<|tool_call_end|>`` is known: the next call's ``<|tool_call_begin|>``, the
section's closer (part of the last call's raw text), or anything else (text
again: a section the model did not close). So every character of the section
is some call's raw text. Text out of place (a head that is no name, a value
that is not an object, text before ``<|tool_call_end|>``) fails the call
(``malformed``, or ``invalid_json`` from the scanner) up to its
``<|tool_call_end|>``; the section goes on. A reply that ends inside a call is
``unterminated`` (the stop marker is ``hermes``' ``</tool_call>``, never one of
these); one that ends after a call's ``<|tool_call_end|>`` completes it.
Messages point the model back to the dialect's taught form.
"""

from __future__ import annotations

import re

import msgspec

from streamtools.events import CallErrorReason, ParserEvent
from streamtools.parser.calls import DONE, REJECTED, Call, CallBody, CallContext
from streamtools.parser.jsonscan import CONTROL, ValueScanner

__all__ = ["HOLD_BOUND", "KIMI_OPENERS", "KimiCallBody"]

KIMI_OPENERS = ("<|tool_calls_section_begin|>", "<|tool_call_section_begin|>")
_CLOSERS = ("<|tool_calls_section_end|>", "<|tool_call_section_end|>")
CALL_BEGIN, ARG_BEGIN, CALL_END = (
    "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"
)
_SPACE_LIMIT = 16
HOLD_BOUND = len(KIMI_OPENERS[0]) + _SPACE_LIMIT + len(CALL_BEGIN) - 1
_HEAD_LIMIT = 160
_HEAD = re.compile(r"\s*([A-Za-z_][\w.\-]*?)(?::\d+)?\s*")
_HEAD_END = re.compile(r"<\|tool_call_(?:argument_begin|end)\|>")
_CALL_END_OR_CLOSER = re.compile(r"<\|tool_call_end\|>|<\|tool_calls?_section_end\|>")
_SPACE = " \t\r\n"
_NAMESPACE = "functions."
HEAD, ARGS, AFTER, SKIP, BETWEEN, OPEN = range(6)
_EXAMPLE = ' Write <tool_call>{"name": "TOOL", "arguments": {"param": "value"}}</tool_call>.'


class KimiCallBody(CallBody):
    """The calls of one Kimi K2 section (see the module docstring)."""

    def __init__(self, ctx: CallContext, marker: str) -> None:
        super().__init__(ctx, marker)
        self.undecided = True
        self.state = OPEN
        self.spaces = 0  # whitespace after the opener so far
        self.scanner = ValueScanner()
        self._next_call()

    def _next_call(self) -> None:
        self.call = Call(self.ctx)
        self.head = ""  # the call's head so far
        self.fresh = True  # no character of the arguments yet
        self.encoded: list[str] | None = None  # a JSON string holding the object, so far
        self.failure: tuple[CallErrorReason, str] | None = None

    def feed(self, s: str, pos: int, out: list[ParserEvent]) -> int:
        i, n = pos, len(s)
        while i < n:
            state = self.state
            if state == OPEN:
                j = i
                while j < n and s[j] in _SPACE:
                    j += 1
                if self.spaces + j - i > _SPACE_LIMIT:
                    self.status = REJECTED  # no call: prose (the marker and all)
                    return i
                if s.startswith(CALL_BEGIN, j):
                    self.record(s, i, j + len(CALL_BEGIN))
                    self.undecided = False
                    self.state = HEAD
                    i = j + len(CALL_BEGIN)
                    continue
                if j < n and not CALL_BEGIN.startswith(s[j:]):
                    self.status = REJECTED
                    return i
                self.record(s, i, j)
                self.spaces += j - i
                return j  # (the token's start, if any, held by the core)
            if state == HEAD:
                j = self._head(s, i, out)
            elif state == ARGS:
                j = self._args(s, i, out)
            elif state == SKIP:
                m = _CALL_END_OR_CLOSER.search(s, i)
                if m is None:
                    j = _held(s, i, (CALL_END, *_CLOSERS))
                    self.record(s, i, j)
                    return j
                self.record(s, i, m.end())
                if m.group() != CALL_END:  # the section closed: this call with it
                    self._conclude(out)
                    self.status = DONE
                    return m.end()
                self.state = BETWEEN
                j = m.end()
            else:  # AFTER, BETWEEN
                j = i
                while j < n and s[j] in _SPACE:
                    j += 1
                self.record(s, i, j)
                if j == n:
                    return n
                if state == AFTER:
                    if s.startswith(CALL_END, j):
                        self.record(s, j, j + len(CALL_END))
                        self.state = BETWEEN
                        j += len(CALL_END)
                    elif not CALL_END.startswith(s[j:]):
                        self._fail("malformed", f"Expected {CALL_END} after the arguments.")
                    elif j == i:
                        return j  # the token still arriving
                elif s.startswith(CALL_BEGIN, j):
                    self._conclude(out)
                    self.raw, self.size = [CALL_BEGIN], len(CALL_BEGIN)
                    self.state = HEAD
                    j += len(CALL_BEGIN)
                else:
                    closer = next((c for c in _CLOSERS if s.startswith(c, j)), None)
                    if closer is not None:
                        self.record(s, j, j + len(closer))
                        self._conclude(out)
                        self.status = DONE
                        return j + len(closer)
                    if any(t.startswith(s[j:]) for t in (CALL_BEGIN, *_CLOSERS)):
                        return j  # a token still arriving
                    self._conclude(out)  # a section the model did not close: text again
                    self.status = DONE
                    return j
            if j == i and self.state == state:
                break
            i = j
        return i

    def _head(self, s: str, i: int, out: list[ParserEvent]) -> int:
        m = _HEAD_END.search(s, i)
        if m is None:
            j = _held(s, i, (ARG_BEGIN, CALL_END))
            self.head += s[i:j]
            self.record(s, i, j)
            if len(self.head) > _HEAD_LIMIT:
                self._fail("malformed", "The call's head is not functions.NAME:INDEX.")
            return j
        self.head += s[i : m.start()]
        self.record(s, i, m.end())
        named = _HEAD.fullmatch(self.head)
        if named is None:
            self._fail("malformed", "The call's head is not functions.NAME:INDEX.")
            if m.group() == CALL_END:
                self.state = BETWEEN
            return m.end()
        name = named.group(1)
        if name.startswith(_NAMESPACE) and name not in self.ctx.catalog:
            name = name[len(_NAMESPACE) :]  # Kimi's ids are functions.NAME:IDX
        self.call.named(name, out)
        self.state = ARGS if m.group() == ARG_BEGIN else BETWEEN  # (no arguments: {})
        return m.end()

    def _args(self, s: str, i: int, out: list[ParserEvent]) -> int:
        n = len(s)
        if self.fresh:
            j = i
            while j < n and s[j] in _SPACE:
                j += 1
            self.record(s, i, j)
            if j == n:
                return n
            if s[j] == '"':
                self.encoded = []
            elif s[j] != "{":
                self._fail("malformed", f"The arguments of {self.call.name} must be a JSON object.")
                return j
            self.fresh = False
            self.scanner.restart()
            i = j
        scanner = self.scanner
        j = scanner.feed(s, i)
        self._take(s, i, j, out)
        while scanner.error is CONTROL:  # a raw newline in a string: escaped
            self.record(s, j, j + 1)
            escape = scanner.take_control(s[j])
            if self.encoded is not None:
                self.encoded.append(escape)
            else:
                self.call.add_args(escape, out)
            i = j + 1
            j = scanner.feed(s, i)
            self._take(s, i, j, out)
        if scanner.error is not None:
            self._fail(
                "invalid_json",
                f"The arguments of {self.call.name} are not valid JSON ({scanner.error}).",
            )
        elif scanner.done:
            self.state = AFTER
        return j

    def _take(self, s: str, i: int, j: int, out: list[ParserEvent]) -> None:
        if j > i:
            self.record(s, i, j)
            if self.encoded is not None:
                self.encoded.append(s[i:j])
            else:
                self.call.add_args(s[i:j], out)

    def _fail(self, reason: CallErrorReason, message: str) -> None:
        """The call fails: the rest up to its ``<|tool_call_end|>`` is its raw text."""
        if self.failure is None:
            self.failure = (reason, message)
        self.state = SKIP

    def _conclude(self, out: list[ParserEvent]) -> None:
        """The call's text is all read: ``CallEnd`` or its error; the next call is new."""
        raw = self.raw_text()
        call = self.call
        if self.failure is None and self.encoded is not None:
            text = msgspec.json.decode("".join(self.encoded))
            assert isinstance(text, str)  # (the scanner read one JSON string)
            call.add_args(text, out)
        if self.failure is not None:
            reason, message = self.failure
            call.fail(raw, reason, message + _EXAMPLE, out)
        else:
            call.complete(raw, out, example=_EXAMPLE)
        self._next_call()

    def end(self, tail: str, finish_reason: str, out: list[ParserEvent]) -> str | None:
        if self.undecided:
            return self.raw_text() + tail  # no call: prose
        self.record(tail, 0, len(tail))
        rest = tail.strip()
        if self.state == BETWEEN and (
            not rest or any(t.startswith(rest) for t in (CALL_BEGIN, *_CLOSERS))
        ):
            self._conclude(out)  # the call was closed; the section was not
        else:
            name = self.call.name or "the tool"
            self.failure = ("unterminated", f"The call to {name} was cut off.")
            self._conclude(out)
        return None


def _held(s: str, i: int, tokens: tuple[str, ...]) -> int:
    """Where the text ``s[i:]`` stops being certain: before the start of one of
    ``tokens`` at its end (held by the core until the next delta)."""
    n = len(s)
    for j in range(max(i, n - max(map(len, tokens)) + 1), n):
        if s[j] == "<" and any(t.startswith(s[j:]) for t in tokens):
            return j
    return n
