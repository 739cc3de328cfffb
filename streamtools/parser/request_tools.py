"""``<am:request_tools>a, b</am:request_tools>``: the model asks for more tools.

Theory of operation
-------------------
Part of the ``am_xml`` dialect (hybrid mode: the model first sees short tool
summaries and asks for the full definitions it needs). The request is reported
as a call so that the runtime sees it in the same event stream: ``CallStart``
with name ``"am:request_tools"`` as soon as the tag opens, and at the closing tag
``ArgsDelta``/``CallEnd`` with ``arguments={"tools": ["a", "b"]}`` (names split
on commas or newlines, or read as a JSON list of strings, as models write it
too; trimmed, entities decoded). It is a dialect-level request, not a tool: the
catalog does not check it. The closing tag may have whitespace
before its ``>`` (at most 8 characters), as in ``am_xml``'s other tags. Cut off
by the end of the stream it is ``CallError(reason="unterminated")``.
"""

from __future__ import annotations

import html
import re

import msgspec

from streamtools.events import ParserEvent
from streamtools.parser.calls import DONE, Call, CallBody, CallContext
from streamtools.results import valid_text

__all__ = ["REQUEST_CLOSE", "REQUEST_NAME", "REQUEST_OPEN", "RequestToolsBody"]

REQUEST_OPEN, REQUEST_CLOSE = "<am:request_tools>", "</am:request_tools>"
REQUEST_NAME = "am:request_tools"
# the closing tag, ``</am:request_tools >`` too (XML allows whitespace before ">"),
# and its start at the end of the text, held
_CLOSE = re.compile(r"</am:request_tools[ \t\r\n]{0,8}>")
_CLOSE_START = re.compile(r"</am:request_tools[ \t\r\n]{0,8}\Z")


class RequestToolsBody(CallBody):
    """``<am:request_tools>a, b</am:request_tools>``: the model asks for more tools."""

    def __init__(self, ctx: CallContext, marker: str) -> None:
        super().__init__(ctx, marker)
        self.call = Call(ctx, meta=True)
        self.content: list[str] = []
        self.started = False

    def feed(self, s: str, pos: int, out: list[ParserEvent]) -> int:
        if not self.started:
            self.started = True
            self.call.named(REQUEST_NAME, out)
        m = _CLOSE.search(s, pos)
        if m is not None:
            self.content.append(s[pos : m.start()])
            end = m.end()
            self.record(s, pos, end)
            self._done(out)
            return end
        n = len(s)
        j = s.rfind("<", max(pos, n - len(REQUEST_CLOSE) - 8), n)
        if j < 0 or not (REQUEST_CLOSE.startswith(s[j:]) or _CLOSE_START.match(s, j)):
            j = n
        self.content.append(s[pos:j])
        self.record(s, pos, j)
        return j

    def _done(self, out: list[ParserEvent]) -> None:
        self.status = DONE
        text = valid_text(html.unescape("".join(self.content)))  # a lone surrogate: U+FFFD
        self.call.add_args(msgspec.json.encode({"tools": _names(text)}).decode(), out)
        self.call.complete(self.raw_text(), out)

    def end(self, tail: str, finish_reason: str, out: list[ParserEvent]) -> str | None:
        if not self.started:
            self.started = True
            self.call.named(REQUEST_NAME, out)
        self.record(tail, 0, len(tail))
        self.status = DONE
        self.call.fail(
            self.raw_text(), "unterminated",
            f"The tool request was cut off. Write {REQUEST_OPEN}name, other{REQUEST_CLOSE}.", out,
        )
        return None


def _names(text: str) -> list[str]:
    """The names asked for: a JSON list of strings (``["a", "b"]``, as models
    write it too), else the text split on commas and newlines; each trimmed."""
    stripped = text.strip()
    if stripped.startswith("[") and stripped.endswith("]"):
        try:
            value = msgspec.json.decode(stripped)
        except (msgspec.DecodeError, RecursionError):
            value = None
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return [v.strip() for v in value if v.strip()]
    return [t.strip() for t in re.split(r"[,\n]", text) if t.strip()]
