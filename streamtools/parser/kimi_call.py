"""Kimi K2's and DeepSeek V3.1's own call forms, in their chat templates' tokens.

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

DeepSeek V3.1 and later write the same structure in other tokens
(vllm-project/vllm#23454 states the form)::

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{"q": "x"}
    <｜tool▁call▁end｜><｜tool▁calls▁end｜>

which reaches the text where a server's parser does not match the template
(sgl-project/sglang#17320: DeepSeek-V3.2 served with V3.1's tokens, every call
in ``content``) or none runs (tenstorrent/tt-inference-server#3683, the tokens
decoded in ASCII: ``<|tool_calls_begin|>``, read too). ``Tokens`` holds each
family's spelling; the body is the same.

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
from dataclasses import dataclass, field

import msgspec

from streamtools.events import CallErrorReason, ParserEvent
from streamtools.parser.calls import DONE, REJECTED, Call, CallContext
from streamtools.parser.json_args import JsonArgsBody
from streamtools.parser.jsonscan import ValueScanner

__all__ = [
    "DEEPSEEK_OPENERS", "HOLD_BOUND", "KIMI_OPENERS", "OPENERS", "KimiCallBody", "held_start",
]


@dataclass(frozen=True)
class Tokens:
    """One model family's spelling of the section: its openers, closers and the
    tokens around each call (a call's begin, the one before its arguments, its end)."""

    openers: tuple[str, ...]
    closers: tuple[str, ...]
    begin: str
    arguments: str
    end: str

    def __post_init__(self) -> None:
        head_end = "|".join(map(re.escape, (self.arguments, self.end)))
        after = "|".join(map(re.escape, (self.end, *self.closers)))
        object.__setattr__(self, "head_end", re.compile(head_end))
        object.__setattr__(self, "end_or_closer", re.compile(after))

    head_end: re.Pattern[str] = field(init=False, repr=False, compare=False)
    end_or_closer: re.Pattern[str] = field(init=False, repr=False, compare=False)


KIMI = Tokens(
    ("<|tool_calls_section_begin|>", "<|tool_call_section_begin|>"),
    ("<|tool_calls_section_end|>", "<|tool_call_section_end|>"),
    "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>",
)
# DeepSeek V3.1 and later (V3.2's template too), in its full-width tokens, and
# spelled in ASCII as some servers decode them
DEEPSEEK = Tokens(
    ("<\uff5ctool\u2581calls\u2581begin\uff5c>",), ("<\uff5ctool\u2581calls\u2581end\uff5c>",),
    "<\uff5ctool\u2581call\u2581begin\uff5c>", "<\uff5ctool\u2581sep\uff5c>",
    "<\uff5ctool\u2581call\u2581end\uff5c>",
)
DEEPSEEK_ASCII = Tokens(
    ("<|tool_calls_begin|>",), ("<|tool_calls_end|>",),
    "<|tool_call_begin|>", "<|tool_sep|>", "<|tool_call_end|>",
)
KIMI_OPENERS = KIMI.openers
DEEPSEEK_OPENERS = DEEPSEEK.openers + DEEPSEEK_ASCII.openers
OPENERS = KIMI_OPENERS + DEEPSEEK_OPENERS
_FAMILY = {opener: t for t in (KIMI, DEEPSEEK, DEEPSEEK_ASCII) for opener in t.openers}
_SPACE_LIMIT = 16
HOLD_BOUND = max(len(o) + _SPACE_LIMIT + len(_FAMILY[o].begin) - 1 for o in OPENERS)
_HEAD_LIMIT = 160
_HEAD = re.compile(r"\s*([A-Za-z_][\w.\-]*?)(?::\d+)?\s*")
_SPACE = " \t\r\n"
_NAMESPACE = "functions."
HEAD, ARGS, AFTER, SKIP, BETWEEN, OPEN = range(6)
_EXAMPLE = ' Write <tool_call>{"name": "TOOL", "arguments": {"param": "value"}}</tool_call>.'


class KimiCallBody(JsonArgsBody):
    """The calls of one Kimi K2 section (see the module docstring)."""

    AFTER = AFTER
    SKIP = SKIP
    ENCODED = True  # a JSON string holding the object (DeepSeek)

    def __init__(self, ctx: CallContext, marker: str) -> None:
        super().__init__(ctx, marker)
        self.tokens = _FAMILY[marker]
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
        t = self.tokens
        while i < n:
            state = self.state
            if state == OPEN:
                j = i
                while j < n and s[j] in _SPACE:
                    j += 1
                if self.spaces + j - i > _SPACE_LIMIT:
                    self.status = REJECTED  # no call: prose (the marker and all)
                    return i
                if s.startswith(t.begin, j):
                    self.record(s, i, j + len(t.begin))
                    self.undecided = False
                    self.state = HEAD
                    i = j + len(t.begin)
                    continue
                if j < n and not t.begin.startswith(s[j:]):
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
                m = t.end_or_closer.search(s, i)
                if m is None:
                    j = held_start(s, i, (t.end, *t.closers))
                    self.record(s, i, j)
                    return j
                self.record(s, i, m.end())
                if m.group() != t.end:  # the section closed: this call with it
                    self._conclude(out)
                    self.status = DONE
                    return m.end()
                self.state = BETWEEN
                j = m.end()
            else:  # AFTER, BETWEEN
                j = self.layout(s, i)
                if j == n:
                    return n
                if state == AFTER:
                    if s.startswith(t.end, j):
                        self.record(s, j, j + len(t.end))
                        self.state = BETWEEN
                        j += len(t.end)
                    elif not t.end.startswith(s[j:]):
                        self._fail("malformed", f"Expected {t.end} after the arguments.")
                    elif j == i:
                        return j  # the token still arriving
                elif s.startswith(t.begin, j):
                    self._conclude(out)
                    self.raw, self.size = [t.begin], len(t.begin)
                    self.state = HEAD
                    j += len(t.begin)
                else:
                    closer = next((c for c in t.closers if s.startswith(c, j)), None)
                    if closer is not None:
                        self.record(s, j, j + len(closer))
                        self._conclude(out)
                        self.status = DONE
                        return j + len(closer)
                    if any(tok.startswith(s[j:]) for tok in (t.begin, *t.closers)):
                        return j  # a token still arriving
                    self._conclude(out)  # a section the model did not close: text again
                    self.status = DONE
                    return j
            if j == i and self.state == state:
                break
            i = j
        return i

    def _head(self, s: str, i: int, out: list[ParserEvent]) -> int:
        t = self.tokens
        m = t.head_end.search(s, i)
        if m is None:
            j = held_start(s, i, (t.arguments, t.end))
            self.head += s[i:j]
            self.record(s, i, j)
            if len(self.head) > _HEAD_LIMIT:
                self._fail("malformed", "The call must begin with the tool's name.")
            return j
        self.head += s[i : m.start()]
        self.record(s, i, m.end())
        named = _HEAD.fullmatch(self.head)
        if named is None:
            self._fail("malformed", "The call must begin with the tool's name.")
            if m.group() == t.end:
                self.state = BETWEEN
            return m.end()
        name = named.group(1)
        if name.startswith(_NAMESPACE) and name not in self.ctx.catalog:
            name = name[len(_NAMESPACE) :]  # Kimi's ids are functions.NAME:IDX
        self.call.named(name, out)
        self.state = ARGS if m.group() == t.arguments else BETWEEN  # (no arguments: {})
        return m.end()

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
        t = self.tokens
        if self.state == BETWEEN and (
            not rest or any(tok.startswith(rest) for tok in (t.begin, *t.closers))
        ):
            self._conclude(out)  # the call was closed; the section was not
        else:
            name = self.call.name or "the tool"
            self.failure = ("unterminated", f"The call to {name} was cut off.")
            self._conclude(out)
        return None


def held_start(s: str, i: int, tokens: tuple[str, ...]) -> int:
    """Where the text ``s[i:]`` stops being certain: before the start of one of
    ``tokens`` at its end (held by the core until the next delta)."""
    n = len(s)
    for j in range(max(i, n - max(map(len, tokens)) + 1), n):
        if s[j] == "<" and any(t.startswith(s[j:]) for t in tokens):
            return j
    return n
