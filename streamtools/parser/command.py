"""The ``command`` dialect: one line ``@tool NAME {json-args}``.

Theory of operation
-------------------
Text mode looks for ``@tool `` at the start of a line (the start of the reply or
just after a newline; ``line_start`` in the syntax table); from there on it is a
call, so nothing beyond the marker is ever held back. The body reads the tool
name (a run of characters other than whitespace and ``{``; a quoted one,
``"search"`` or ``'search'``, is the name inside the quotes, unless a tool is
named with them), then spaces or tabs,
then either a JSON object (the arguments; it may span lines) or the end of the
line or reply (no arguments: ``{}``). The call ends with the object's closing
brace, or just before the newline; the rest of the line is text again.

Failures: no name, or something other than ``{`` after the name, is
``CallError(reason="malformed")`` whose raw reaches to the end of the line (a
parenthesis in or after the name, a function call's ``search({…})``, says to
write the object after the name without parentheses; an unbalanced quote, to
write the name without quotes: neither is an unknown tool ``search(``); a
JSON error ends the call at the offending character
(``CallError(reason="invalid_json")``) and the rest is text again. The dialect
has no stop marker; ``end("stop")`` right after the name completes a call
without arguments (a length limit or a broken stream may have cut the name).
"""

from __future__ import annotations

import re

from streamtools.events import CallErrorReason, ParserEvent
from streamtools.parser.calls import DONE, PROVIDER_STOP, CallBody, CallContext, DialectSyntax
from streamtools.parser.catalog import AnyTool
from streamtools.parser.envelope import ARGS
from streamtools.parser.jsoncall import CUT, ENVELOPE, PREFIX, JsonCallBody

__all__ = ["COMMAND", "CommandBody"]

OPEN = "@tool "
_NAME = re.compile(r"[^\s{]*")
_NAME_STATE, _SPACES, _BAD_LINE = range(3)
_QUOTES = "\"'"
_MALFORMED = "A command is one line: @tool TOOL {\"param\": \"value\"}."


class CommandBody(JsonCallBody):
    roles = {(): ARGS}
    close = None
    on_error = CUT
    example = 'Write one line: @tool TOOL {"param": "value"}.'

    def __init__(self, ctx: CallContext, marker: str) -> None:
        super().__init__(ctx, marker)
        self.undecided = False
        self.name_parts: list[str] = []
        self.step = _NAME_STATE
        self.mark = 0

    def renew(self, marker: str, *, prefix: bool = True) -> None:
        JsonCallBody.renew(self, marker)  # (super(): a lookup more)
        self.undecided = False
        self.name_parts = []
        self.step = _NAME_STATE
        self.mark = 0

    def feed(self, s: str, pos: int, out: list[ParserEvent]) -> int:
        self.mark = pos
        return super().feed(s, pos, out)

    def fast_prefix(self, delta: str) -> list[ParserEvent] | None:
        if (
            self.step == _NAME_STATE
            and " " not in delta
            and "{" not in delta
            and delta.isprintable()  # with the two tests above: no whitespace at all
        ):
            # a piece of the name, the name still arriving (what ``prefix`` does with
            # it when no space, brace or line end follows)
            self.rest = ""
            self.name_parts.append(delta)
            self.raw.append(delta)
            self.size += len(delta)
            return []
        return None

    def _stop_here(self, s: str, i: int, failure: tuple[CallErrorReason, str] | None) -> int:
        """End the call just before ``s[i]`` (the newline stays text)."""
        self.record(s, self.mark, i)
        self.mark = i
        self.status = DONE
        raw = self.raw_text()
        if failure is not None:
            self.call.fail(raw, *failure, self.out)
        else:
            self.call.complete(raw, self.out, example=" " + self.example)
        self.env.detach()
        return i

    def prefix(self, s: str, i: int) -> int:
        n = len(s)
        if self.step == _NAME_STATE:
            if not any(self.name_parts):
                while i < n and s[i] in " \t":  # more spaces before the name
                    i += 1
            j = _NAME.match(s, i).end()  # type: ignore[union-attr]
            self.name_parts.append(s[i:j])
            if j == n:
                return j
            self.step = _SPACES
            name = "".join(self.name_parts)
            if ("(" in name or name[:1] in _QUOTES) and not _named_so(self.ctx, name):
                # ("" is in any str: no name, and no call, as before)
                name, self.failure = _tool_name(name)
                if self.failure is not None:
                    self.call.name = name  # for the error only: the call never starts
                    self.step = _BAD_LINE
            if name and self.failure is None:
                self.call.named(name, self.out)
            i = j
        if self.step == _SPACES:
            while i < n and s[i] in " \t":
                i += 1
            if i == n:
                return i
            c = s[i]
            if self.call.name is None:
                self.step = _BAD_LINE
                self.failure = ("malformed", "The command has no tool name. " + _MALFORMED)
            elif c == "{":
                self.phase = ENVELOPE
                return i
            elif c in "\r\n":
                return self._stop_here(s, i, None)
            else:
                self.step = _BAD_LINE
                if c == "(":  # search ({…}): a function call's syntax
                    self.failure = _tool_name(self.call.name + "(")[1]
                else:
                    message = f"Only a JSON object may follow the name. {_MALFORMED}"
                    self.failure = ("malformed", message)
        k = s.find("\n", i)
        if k < 0:
            return n
        return self._stop_here(s, k, self.failure)

    def end(self, tail: str, finish_reason: str, out: list[ParserEvent]) -> str | None:
        if self.phase == PREFIX:
            self.out = out
            name = "".join(self.name_parts)
            name, failure = (name, None) if _named_so(self.ctx, name) else _tool_name(name)
            if self.step == _NAME_STATE and failure is not None:
                self.call.name = name
                self.failure = failure
            elif self.step == _NAME_STATE and name:
                if finish_reason in PROVIDER_STOP:
                    self.call.named(name, out)
                else:
                    self.call.name = name  # for the error only: the call never started
            self.record(tail, 0, len(tail))
            self.status = DONE
            raw = self.raw_text()
            if self.failure is not None:
                self.call.fail(raw, *self.failure, out)
            elif self.call.name is not None and finish_reason in PROVIDER_STOP:
                self.call.complete(raw, out, example=" " + self.example)
            else:
                self.call.fail(
                    raw, "unterminated", f"The command was cut off. {_MALFORMED}", out
                )
            return None
        return super().end(tail, finish_reason, out)


def _named_so(ctx: CallContext, name: str) -> bool:
    """A tool of the catalog has this very name (no catalog names none)."""
    return not isinstance(ctx.catalog, AnyTool) and name in ctx.catalog


def _tool_name(text: str) -> tuple[str, tuple[CallErrorReason, str] | None]:
    """The tool name a command's name text, not a tool's name as it stands, gives,
    and why it is malformed if it is.
    A quoted name (``"search"``, ``'search'``) is the name; a parenthesis, a
    function call's syntax (``search({…})``), is an error that says where the
    arguments go (its name is the text before it, for the message)."""
    if "(" in text:
        name = text.partition("(")[0].strip("\"'")
        message = (
            f"Write the arguments as a JSON object after the name, without parentheses: "
            f'@tool {name or "TOOL"} {{"param": "value"}}.'
        )
        return name, ("malformed", message)
    if text and text[0] in _QUOTES:
        q = text[0]
        if len(text) > 2 and text[-1] == q and q not in text[1:-1]:
            return text[1:-1], None
        return text.strip(q), ("malformed", f"Write the tool name without quotes. {_MALFORMED}")
    return text, None


def _open(marker: str, ctx: CallContext) -> CallBody | None:
    body = CommandBody.spare(ctx)
    if body is None:
        return CommandBody(ctx, marker)
    body.renew(marker)
    return body


COMMAND = DialectSyntax(
    name="command", stop_marker=None, markers=(OPEN,), open=_open, line_start=True
)
