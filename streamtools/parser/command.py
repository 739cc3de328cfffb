"""The ``command`` dialect: one line ``@tool NAME {json-args}``.

Theory of operation
-------------------
Text mode looks for ``@tool `` at the start of a line (the start of the reply or
just after a newline; ``line_start`` in the syntax table). The body reads the
tool name (any run of non-space characters other than ``{``, at most 256), then
spaces, then either a JSON object (the arguments, which may span lines) or the
end of the line/reply (no arguments: ``{}``). The call ends with the object's
closing brace, or just before the newline; the rest of the line is text again.
Anything else after the name (``@tool is what I use``) means the line was prose:
it is given back as text. A JSON error ends the call at the offending character
(``CallError(reason="invalid_json")``) and the rest is text again.
"""

from __future__ import annotations

import re

from streamtools.events import ParserEvent
from streamtools.parser.calls import DONE, REJECTED, CallBody, CallContext, DialectSyntax
from streamtools.parser.jsoncall import CUT, ENVELOPE, JsonCallBody
from streamtools.parser.jsonscan import ARGS

__all__ = ["COMMAND", "CommandBody"]

OPEN = "@tool "
_NAME = re.compile(r"[^\s{]*")
_NAME_LIMIT = 256


class CommandBody(JsonCallBody):
    roles = {(): ARGS}
    close = None
    on_error = CUT
    example = 'Write one line: @tool TOOL {"param": "value"}.'

    def __init__(self, ctx: CallContext, marker: str) -> None:
        super().__init__(ctx, marker)
        self.name_parts: list[str] = []
        self.name_len = 0
        self.named = False

    def prefix(self, s: str, i: int) -> int:
        n = len(s)
        if not self.named:
            j = _NAME.match(s, i).end()  # type: ignore[union-attr]
            self.name_parts.append(s[i:j])
            self.name_len += j - i
            if self.name_len > _NAME_LIMIT:
                self.status = REJECTED
                return j
            if j == n:
                return j
            if self.name_len == 0:
                if s[j] == " ":  # more spaces before the name
                    return j + 1
                self.status = REJECTED
                return j
            self.named = True
            i = j
        while i < n and s[i] in " \t":
            i += 1
        if i == n:
            return i
        c = s[i]
        if c == "{":
            self._decide()
            self.phase = ENVELOPE
        elif c in "\r\n":
            self._decide()
            self.status = DONE
            self.call.complete(self.raw_text() + s[self._mark : i], self.out)  # no arguments
            self.raw = []
            self._mark = i
        else:
            self.status = REJECTED
        return i

    _mark = 0

    def feed(self, s: str, pos: int, out: list[ParserEvent]) -> int:
        self._mark = pos
        return super().feed(s, pos, out)

    def _decide(self) -> None:
        self.undecided = False
        self.call.named("".join(self.name_parts), self.out)

    def prefix_end(self, finish_reason: str) -> bool:
        if self.name_len == 0 or finish_reason != "stop":
            return False  # a name cut off by a length limit is not a call
        self._decide()
        return True


def _open(marker: str, ctx: CallContext) -> CallBody | None:
    return CommandBody(ctx, marker)


COMMAND = DialectSyntax(
    name="command", stop_marker=None, markers=(OPEN,), open=_open, line_start=True
)
