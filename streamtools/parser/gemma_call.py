"""Gemma 4's own call form, ``<|tool_call>call:NAME{key:<|"|>text<|"|>,n:5}<tool_call|>``.

Theory of operation
-------------------
Gemma 4 writes its calls in its chat template's tokens whatever the prompt
teaches, and servers that do not parse them (or whose parser misses one) pass
them on as text: omlx#581 (every Gemma 4 model, raw markup shown to the user),
NousResearch/hermes-agent#48412 (vLLM's gemma4 parser missing some, the
markup left in ``content``), FlashML-org/FreeToken#346. It was text: the call
lost without a word. ``<|tool_call>`` is a marker of ``hermes`` (the
``<tool_call>`` family; its start character ``<`` is one the dialect has).

The body (``GemmaCallBody``) is undecided while ``call:NAME{`` arrives right
after the marker (NAME: a letter or ``_``, then letters, digits, ``_ . - :``,
at most ``NAME_LIMIT``); anything else makes the text prose, as it was. The
hold-back is so at most ``len("<|tool_call>call:") + NAME_LIMIT`` characters
(``HOLD_BOUND``). ``CallStart`` comes with the ``{``.

The arguments are Gemma's notation, not JSON: keys bare at every depth,
strings between ``<|"|>`` delimiters (taken as written: no escapes), numbers,
``true``/``false``/``null``, ``{…}`` and ``[…]`` as in JSON. The body follows the
braces outside strings (a ``}`` or ``<tool_call|>`` inside a string is content),
and after the object's last ``}`` expects ``<tool_call|>`` (whitespace before it
is layout). At that marker the notation is turned into JSON (``to_json``: a bare
key quoted, a string encoded, a bare word that is no JSON literal or number a
string, as Gemma writes short values: ``{path:a.txt}``) and streamed as one
``ArgsDelta``, then ``CallEnd`` or the call's error. Not streamed as it grows:
a bare value is only known to be a string or a number at its end, and the
form is a fallback, not the taught one. Other text after the object ends the
call there as ``malformed``, the rest text again; a stream that ends after the
object completes the call only when the provider stopped it (``PROVIDER_STOP``).
Messages point the model back to the dialect's taught form.
"""

from __future__ import annotations

import re

import msgspec

from streamtools.events import CallErrorReason, ParserEvent
from streamtools.parser.calls import DONE, PROVIDER_STOP, REJECTED, Call, CallBody, CallContext

__all__ = ["GEMMA_CLOSE", "GEMMA_OPEN", "HOLD_BOUND", "NAME_LIMIT", "GemmaCallBody", "to_json"]

GEMMA_OPEN, GEMMA_CLOSE, QUOTE = "<|tool_call>", "<tool_call|>", '<|"|>'
NAME_LIMIT = 64
_CALL = "call:"
HOLD_BOUND = len(GEMMA_OPEN) + len(_CALL) + NAME_LIMIT
_HEAD = re.compile(rf"call:([A-Za-z_][\w.\-:]{{0,{NAME_LIMIT - 1}}})\{{")
_HEAD_SO_FAR = re.compile(rf"(?:|c|ca|cal|call|call:|call:[A-Za-z_][\w.\-:]{{0,{NAME_LIMIT - 1}}})")
_OUTSIDE = re.compile(r'<\|"\|>|[{}]')  # what the body follows outside strings
_TOKEN = re.compile(r'<\|"\|>(.*?)<\|"\|>|([{}\[\],:])|\s+|([^{}\[\],:\s<]+)', re.S)
_EXAMPLE = ' Write <tool_call>{"name": "TOOL", "arguments": {"param": "value"}}</tool_call>.'


def to_json(text: str) -> str | None:
    """Gemma's argument notation ``text`` as JSON text, or None where it is none."""
    tokens: list[tuple[str, str]] = []  # (kind, text): "s" string, "p" punctuation, "w" word
    i, n = 0, len(text)
    while i < n:
        m = _TOKEN.match(text, i)
        if m is None:
            return None
        if m.group(1) is not None:
            tokens.append(("s", m.group(1)))
        elif m.group(2) is not None:
            tokens.append(("p", m.group(2)))
        elif m.group(3) is not None:
            tokens.append(("w", m.group(3)))
        i = m.end()
    out: list[str] = []
    for k, (kind, value) in enumerate(tokens):
        if kind == "p":
            out.append(value)
        elif kind == "s" or (k + 1 < len(tokens) and tokens[k + 1] == ("p", ":")):
            out.append(msgspec.json.encode(value).decode())  # a string, or a bare key
        elif value in ("true", "false", "null") or _is_number(value):
            out.append(value)
        else:
            out.append(msgspec.json.encode(value).decode())  # a short string left bare
    return "".join(out)


def _is_number(word: str) -> bool:
    try:
        return isinstance(msgspec.json.decode(word), int | float)
    except msgspec.DecodeError:
        return False


class GemmaCallBody(CallBody):
    """One call in Gemma 4's form (see the module docstring)."""

    def __init__(self, ctx: CallContext, marker: str) -> None:
        super().__init__(ctx, marker)
        self.call = Call(ctx)
        self.undecided = True
        self.head = ""  # ``call:NAME`` so far
        self.args: list[str] = []  # the notation, from the ``{``
        self.depth = 0
        self.in_string = False

    def feed(self, s: str, pos: int, out: list[ParserEvent]) -> int:
        i, n = pos, len(s)
        if self.undecided:
            stop = min(n, i + len(_CALL) + NAME_LIMIT - len(self.head) + 1)
            k = s.find("{", i, stop)
            end = stop if k < 0 else k + 1
            text = self.head + s[i:end]
            m = _HEAD.fullmatch(text) if k >= 0 else None
            if m is None and (k >= 0 or _HEAD_SO_FAR.fullmatch(text) is None):
                self.status = REJECTED  # no call: prose (the marker and all)
                return i
            self.record(s, i, end)
            if m is None:
                self.head = text  # (all of ``s``: a longer head failed above)
                return end
            self.undecided = False
            self.call.named(m.group(1), out)
            self.args.append("{")
            self.depth = 1
            i = end
        while i < n:
            if self.in_string:
                k = s.find(QUOTE, i)
                if k < 0:
                    j = _held(s, i, QUOTE)
                    self._take(s, i, j)
                    return j
                self._take(s, i, k + len(QUOTE))
                self.in_string = False
                i = k + len(QUOTE)
            elif self.depth == 0:
                j = self.layout(s, i)
                if j == n:
                    return n
                if s.startswith(GEMMA_CLOSE, j):
                    self.record(s, j, j + len(GEMMA_CLOSE))
                    self._close(out)
                    return j + len(GEMMA_CLOSE)
                if n - j < len(GEMMA_CLOSE) and GEMMA_CLOSE.startswith(s[j:]):
                    return j  # the closing marker still arriving
                self._fail(out, "malformed", f"Expected {GEMMA_CLOSE} right after the arguments.")
                return j  # the rest is text again
            else:
                m = _OUTSIDE.search(s, i)
                if m is None:
                    j = _held(s, i, QUOTE)
                    self._take(s, i, j)
                    return j
                self._take(s, i, m.end())
                i = m.end()
                if m.group() == QUOTE:
                    self.in_string = True
                else:
                    self.depth += 1 if m.group() == "{" else -1
        return i

    def _take(self, s: str, i: int, j: int) -> None:
        if j > i:
            self.args.append(s[i:j])
            self.record(s, i, j)

    def _close(self, out: list[ParserEvent]) -> None:
        self.status = DONE
        text = to_json("".join(self.args))
        if text is None:
            self.call.fail(
                self.raw_text(), "invalid_json",
                f"The arguments of {self.call.name} could not be read.{_EXAMPLE}", out,
            )
            return
        self.call.add_args(text, out)
        self.call.complete(self.raw_text(), out, example=_EXAMPLE)

    def _fail(self, out: list[ParserEvent], reason: CallErrorReason, message: str) -> None:
        self.status = DONE
        self.call.fail(self.raw_text(), reason, message + _EXAMPLE, out)

    def end(self, tail: str, finish_reason: str, out: list[ParserEvent]) -> str | None:
        if self.undecided:
            return self.raw_text() + tail  # no call: prose
        self.record(tail, 0, len(tail))
        rest = tail.strip()
        if (
            self.depth == 0 and finish_reason in PROVIDER_STOP
            and (not rest or GEMMA_CLOSE.startswith(rest))
        ):
            self._close(out)  # the provider stopped at the closing marker
        else:
            self._fail(out, "unterminated", f"The call to {self.call.name} was cut off.")
        return None


def _held(s: str, i: int, marker: str) -> int:
    """Where the text ``s[i:]`` stops being certain: before a start of ``marker``
    at its end (held by the core until the next delta)."""
    n = len(s)
    for j in range(max(i, n - len(marker) + 1), n):
        if marker.startswith(s[j:]):
            return j
    return n
