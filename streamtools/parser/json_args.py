"""A call's arguments written as one JSON object after a model's own token.

Kimi K2's and DeepSeek V3.1's sections (``kimi_call``) and gpt-oss's harmony
message (``harmony_call``) put a call's arguments as a bare JSON object after a
token of their own. ``JsonArgsBody`` reads them the same way for both: the
whitespace before the object is layout; anything but ``{`` there is a
``malformed`` call (or, where ``ENCODED`` allows it, a JSON string that holds the
object, decoded when the call concludes); the object is streamed through the
JSON scanner, each piece an ``ArgsDelta``, a raw newline inside a string
escaped; a scanner error makes the call ``invalid_json``. A failed call keeps
its raw text up to its closing token (the subclass's ``SKIP`` state); a whole
object moves the body to its ``AFTER`` state.
"""

from __future__ import annotations

from streamtools.events import CallErrorReason, ParserEvent
from streamtools.parser.calls import Call, CallBody
from streamtools.parser.jsonscan import CONTROL, ValueScanner

__all__ = ["JsonArgsBody"]


class JsonArgsBody(CallBody):
    """Base of the bodies whose arguments are one JSON object (see the module docstring)."""

    AFTER: int  # the subclass's state once the object is whole
    SKIP: int  # the subclass's state of a failed call, up to its closing token
    ENCODED = False  # a JSON string holding the object is read too (Kimi, DeepSeek)

    call: Call
    scanner: ValueScanner
    fresh: bool  # no character of the arguments yet
    state: int
    failure: tuple[CallErrorReason, str] | None
    encoded: list[str] | None = None  # a JSON string holding the object, so far

    def _args(self, s: str, i: int, out: list[ParserEvent]) -> int:
        n = len(s)
        if self.fresh:
            j = self.layout(s, i)
            if j == n:
                return n
            if s[j] == '"' and self.ENCODED:
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
            self.state = self.AFTER
        return j

    def _take(self, s: str, i: int, j: int, out: list[ParserEvent]) -> None:
        if j > i:
            self.record(s, i, j)
            if self.encoded is not None:
                self.encoded.append(s[i:j])
            else:
                self.call.add_args(s[i:j], out)

    def _fail(self, reason: CallErrorReason, message: str) -> None:
        """The call fails: the rest up to its closing token is its raw text."""
        if self.failure is None:
            self.failure = (reason, message)
        self.state = self.SKIP
