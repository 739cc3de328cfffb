"""gpt-oss's own call form, a harmony ``commentary`` message to a function.

Theory of operation
-------------------
gpt-oss writes a call as a message of its harmony format::

    <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{"q": "x"}<|call|>

and servers that do not parse harmony (or whose parser is off) pass it on as
text: lablup/mlxcel#654 (the markup in ``content``, no ``tool_calls``),
odysseus-dev/odysseus#4522 (the recipient and the arguments in the visible
answer), NousResearch/hermes-agent#84231 (gpt-oss through Ollama and vLLM's
chat endpoints, the tool never run). It was text: the call lost. ``<|channel|>``
is a marker of ``hermes`` (its start character ``<`` is one the dialect has).

The body (``HarmonyCallBody``) is undecided until the channel and its recipient
begin (``commentary to=`` or ``analysis to=``, right after the marker): any
other channel (``analysis`` reasoning, the ``final`` answer, a preamble without
a recipient) is text, as it was, so at most ``HOLD_BOUND`` characters are held.
Then the recipient (``functions.NAME``, or ``NAME``; ``functions.`` dropped when
the tools have no such name), the optional content type (``<|constrain|>json``,
``json``), ``<|message|>``; ``CallStart`` there. The arguments are one JSON
object, streamed as written through the JSON dialects' scanner (``<|call|>`` in
a string is content), and the message ends with ``<|call|>`` (``<|end|>`` too):
``CallEnd`` or the call's error. ``<|call|>`` is a stop token of the model, so
a server may have cut it: a reply that ends right after the object completes
the call when the provider stopped it (``PROVIDER_STOP``); a cut one is
``unterminated``. Text out of place (a recipient that is no name, text after
the object) fails the call (``malformed``) up to ``<|call|>`` or, after the
object, there. Only the call is read: the other channels' markup around it
(``<|start|>assistant``, an ``analysis`` message) stays text, as before.

The harmony format lets the recipient stand in the role's header instead,
before the channel (openai/harmony#40: its README draws it so), and gpt-oss-120b
writes it so (ggml-org/llama.cpp#15181, which reads it)::

    <|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>{…}<|call|>

so ``<|start|>`` is a marker too (``START``): its body is undecided until
``assistant to=`` follows it (anything else, such as ``<|start|>assistant
<|channel|>``, is rejected: text, whose ``<|channel|>`` then opens a body of
its own, as before), then reads the recipient, ``<|channel|>``, the channel
(``commentary`` or ``analysis``) and the optional content type up to
``<|message|>``, and the rest as above. It holds at most ``len(START) +
len("assistant to=") - 1`` characters, within ``HOLD_BOUND``.
"""

from __future__ import annotations

import re

from streamtools.events import CallErrorReason, ParserEvent
from streamtools.parser.calls import (
    DONE,
    PROVIDER_STOP,
    REJECTED,
    Call,
    CallContext,
)
from streamtools.parser.json_args import JsonArgsBody
from streamtools.parser.jsonscan import ValueScanner
from streamtools.parser.kimi_call import held_start

__all__ = ["CHANNEL", "HOLD_BOUND", "START", "HarmonyCallBody"]

CHANNEL, MESSAGE, CALL, END = "<|channel|>", "<|message|>", "<|call|>", "<|end|>"
START = "<|start|>"
_RECIPIENTS = ("commentary to=", "analysis to=")
_ROLE = ("assistant to=",)  # after ``START``: the recipient in the role's header
HOLD_BOUND = len(CHANNEL) + max(map(len, _RECIPIENTS)) - 1
assert len(START) + len(_ROLE[0]) - 1 <= HOLD_BOUND
_HEAD_LIMIT = 160
_TYPE = r"\s*(?:<\|constrain\|>\s*)?(?:json)?\s*"  # the optional content type
_HEAD = re.compile(r"([A-Za-z_][\w.\-]*)" + _TYPE)
_ROLE_HEAD = re.compile(r"([A-Za-z_][\w.\-]*)\s*<\|channel\|>\s*(?:commentary|analysis)" + _TYPE)
_CLOSE = re.compile(r"<\|(?:call|end)\|>")
_NAMESPACE = "functions."
_OPEN, _HEAD_STATE, _ARGS, _AFTER, _SKIP = range(5)
_EXAMPLE = ' Write <tool_call>{"name": "TOOL", "arguments": {"param": "value"}}</tool_call>.'


class HarmonyCallBody(JsonArgsBody):
    """One call in gpt-oss's harmony form (see the module docstring)."""

    AFTER = _AFTER
    SKIP = _SKIP

    def __init__(self, ctx: CallContext, marker: str) -> None:
        super().__init__(ctx, marker)
        self.call = Call(ctx)
        self.undecided = True
        self.state = _OPEN
        # what must follow the marker, and the header up to ``<|message|>``
        role = marker == START
        self.openers: tuple[str, ...] = _ROLE if role else _RECIPIENTS
        self.header = _ROLE_HEAD if role else _HEAD
        self.head = ""  # the channel and recipient so far
        self.fresh = True  # no character of the arguments yet
        self.scanner = ValueScanner()
        self.failure: tuple[CallErrorReason, str] | None = None

    def feed(self, s: str, pos: int, out: list[ParserEvent]) -> int:
        i, n = pos, len(s)
        while i < n:
            state = self.state
            if state == _OPEN:
                openers = self.openers
                want = max(map(len, openers)) - len(self.head)
                text = self.head + s[i : i + want]
                start = next((r for r in openers if text.startswith(r)), None)
                if start is None:
                    if not any(r.startswith(text) for r in openers):
                        self.status = REJECTED  # another channel: text, as it was
                        return i
                    self.record(s, i, n)
                    self.head = text
                    return n
                j = i + len(start) - len(self.head)
                self.record(s, i, j)
                self.head = ""
                self.undecided = False
                self.state = _HEAD_STATE
            elif state == _HEAD_STATE:
                j = self._head(s, i, out)
            elif state == _ARGS:
                j = self._args(s, i, out)
            elif state == _SKIP:
                m = _CLOSE.search(s, i)
                if m is None:
                    j = held_start(s, i, (CALL, END))
                    self.record(s, i, j)
                    return j
                self.record(s, i, m.end())
                self._close(out)
                return m.end()
            else:  # _AFTER
                j = self.layout(s, i)
                if j == n:
                    return n
                m = _CLOSE.match(s, j)
                if m is not None:
                    self.record(s, j, m.end())
                    self._close(out)
                    return m.end()
                if any(t.startswith(s[j:]) for t in (CALL, END)):
                    return j  # the token still arriving
                self.failure = ("malformed", f"Expected {CALL} right after the arguments.")
                self._close(out)
                return j  # the rest is text again
            if j == i and self.state == state:
                break
            i = j
        return i

    def _head(self, s: str, i: int, out: list[ParserEvent]) -> int:
        k = s.find(MESSAGE, i)
        if k < 0:
            j = held_start(s, i, (MESSAGE,))
            self.head += s[i:j]
            self.record(s, i, j)
            if len(self.head) > _HEAD_LIMIT:
                self._fail("malformed", self._wrong_head())
            return j
        self.head += s[i:k]
        self.record(s, i, k + len(MESSAGE))
        named = self.header.fullmatch(self.head)
        if named is None:
            self._fail("malformed", self._wrong_head())
            return k + len(MESSAGE)
        name = named.group(1)
        if name.startswith(_NAMESPACE) and name not in self.ctx.catalog:
            name = name[len(_NAMESPACE) :]
        self.call.named(name, out)
        self.state = _ARGS
        return k + len(MESSAGE)

    def _wrong_head(self) -> str:
        if self.header is _ROLE_HEAD:
            return (f"The header is not assistant to=functions.NAME{CHANNEL}commentary json "
                    f"before {MESSAGE}.")
        return "The recipient is not functions.NAME."

    def _close(self, out: list[ParserEvent]) -> None:
        self.status = DONE
        raw = self.raw_text()
        if self.failure is not None:
            reason, message = self.failure
            self.call.fail(raw, reason, message + _EXAMPLE, out)
        else:
            self.call.complete(raw, out, example=_EXAMPLE)

    def end(self, tail: str, finish_reason: str, out: list[ParserEvent]) -> str | None:
        if self.undecided:
            return self.raw_text() + tail  # no call: prose
        self.record(tail, 0, len(tail))
        rest = tail.strip()
        if not (
            self.state == _AFTER and finish_reason in PROVIDER_STOP
            and (not rest or any(t.startswith(rest) for t in (CALL, END)))
        ) and self.failure is None:
            name = self.call.name or "the tool"
            self.failure = ("unterminated", f"The call to {name} was cut off.")
        self._close(out)
        return None
