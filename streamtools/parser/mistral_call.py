"""Mistral's own call form, ``[TOOL_CALLS]NAME[ARGS]{…}``, read in ``hermes``.

Theory of operation
-------------------
Mistral's models (Mistral Small 3.2, Ministral 3, Devstral, Magistral) write a
call as their chat template does, ``[TOOL_CALLS]get_weather[ARGS]{"city":
"Paris"}`` (waybarrios/vllm-mlx#631 quotes the template), one ``[TOOL_CALLS]``
per call and no closing token; older ones ``[TOOL_CALLS]add{"a": 1}`` without
``[ARGS]`` (vllm-project/vllm#48318). A server that does not parse them passes
them on as text, and a Mistral model given ``hermes``' prompt writes them out of
habit: the call was lost as text.

``[TOOL_CALLS]`` is a *quiet marker* of ``hermes`` (``DialectSyntax.
quiet_markers``): the text scan looks for it only where ``<think>`` may open
reasoning, where nothing but whitespace has been shown since the reply began, a
call opened or reasoning closed (``TextModes._quiet``), because those are the
places where the fast path is off already. Its start character ``[`` is not one
of the dialect's, so no delta of prose pays a test for it (a second start
character cost ``hermes`` 3.2% of its instructions per delta). So a call written
after the answer's text began (``I will help.[TOOL_CALLS]add{…}``) stays text,
as it was; one at the reply's start, or after another call, is read.

The body (``MistralCallBody``) is undecided until the character after the
marker: a name's first character (a letter or ``_``) makes it a call, anything
else (``[TOOL_CALLS][{"name": …}]``, the JSON-array form of older templates,
not read here) text, as it was. The name runs to ``[ARGS]`` or the arguments'
``{`` (``CallStart`` there); the arguments are one JSON object, streamed through
the JSON dialects' scanner, and the call ends complete at its closing ``}``, in
the feed that brings it (there is no closing token). Anything else where the
arguments are due, or a scanner error, fails the call (``malformed`` or
``invalid_json``): its raw text runs to the next ``[TOOL_CALLS]`` or the reply's
end. A reply that ends inside the call is ``unterminated``.
"""

from __future__ import annotations

import re

from streamtools.events import CallErrorReason, ParserEvent
from streamtools.parser.calls import DONE, REJECTED, Call, CallContext
from streamtools.parser.json_args import JsonArgsBody
from streamtools.parser.jsonscan import ValueScanner

__all__ = ["TOOL_CALLS", "MistralCallBody"]

TOOL_CALLS, ARGS = "[TOOL_CALLS]", "[ARGS]"
_NAME = re.compile(r"[A-Za-z0-9_.\-]*")
_NAME_START = re.compile(r"[A-Za-z_]")
_NAME_LIMIT = 128
_HEAD, _ARGS, _AFTER, _SKIP = range(4)
_EXAMPLE = ' Write <tool_call>{"name": "TOOL", "arguments": {"param": "value"}}</tool_call>.'


class MistralCallBody(JsonArgsBody):
    """One call in Mistral's form (see the module docstring)."""

    AFTER = _AFTER
    SKIP = _SKIP

    def __init__(self, ctx: CallContext, marker: str) -> None:
        super().__init__(ctx, marker)
        self.call = Call(ctx)
        self.undecided = True
        self.state = _HEAD
        self.name = ""
        self.fresh = True  # no character of the arguments yet
        self.scanner = ValueScanner()
        self.failure: tuple[CallErrorReason, str] | None = None

    def feed(self, s: str, pos: int, out: list[ParserEvent]) -> int:
        i, n = pos, len(s)
        while i < n:
            state = self.state
            if state == _HEAD:
                j = self._head(s, i, out)
                if self.status == REJECTED:
                    return j
            elif state == _ARGS:
                j = self._args(s, i, out)
                if self.state == _AFTER:  # the object is whole: the call ends here
                    self._close(out)
                    return j
            else:  # _SKIP: a failed call's text, up to the next call
                k = s.find(TOOL_CALLS, i)
                if k < 0:
                    j = s.find("[", max(i, n - len(TOOL_CALLS) + 1))
                    while j >= 0 and not TOOL_CALLS.startswith(s[j:]):
                        j = s.find("[", j + 1)
                    j = n if j < 0 else j  # (a marker's start at the end: held)
                    self.record(s, i, j)
                    return j
                self.record(s, i, k)
                self._close(out)
                return k  # the next call's marker is the core's
            if j == i and self.state == state:
                break
            i = j
        return i

    def _head(self, s: str, i: int, out: list[ParserEvent]) -> int:
        """The name, then ``[ARGS]`` or the arguments' ``{``."""
        if self.undecided:
            if _NAME_START.match(s, i) is None:
                self.status = REJECTED  # not a name: text, as it was
                return i
            self.undecided = False
        k = _NAME.match(s, i).end()  # type: ignore[union-attr]
        self.name += s[i:k]
        self.record(s, i, k)
        if len(self.name) > _NAME_LIMIT:
            self._fail("malformed", f"The tool name after {TOOL_CALLS} is too long.")
            return k
        if k == len(s):
            return k
        if s.startswith(ARGS, k) or s[k] == "{":
            self.call.named(self.name, out)
            self.state = _ARGS
            if s[k] == "{":
                return k
            self.record(s, k, k + len(ARGS))
            return k + len(ARGS)
        if ARGS.startswith(s[k:]):
            return k  # the token still arriving
        self._fail("malformed", f"Expected {ARGS} and a JSON object after the tool name.")
        return k

    def _close(self, out: list[ParserEvent]) -> None:
        self.status = DONE
        raw = self.raw_text()
        if self.failure is not None:
            self.call.fail(raw, *self.failure, out)
        else:
            self.call.complete(raw, out, example=_EXAMPLE)

    def _fail(self, reason: CallErrorReason, message: str) -> None:
        super()._fail(reason, message + _EXAMPLE)

    def end(self, tail: str, finish_reason: str, out: list[ParserEvent]) -> str | None:
        if self.undecided:
            return self.raw_text() + tail  # no call: prose
        self.record(tail, 0, len(tail))
        if self.failure is None:
            name = self.call.name or self.name or "the tool"
            self.failure = ("unterminated", f"The call to {name} was cut off.{_EXAMPLE}")
        self._close(out)
        return None
