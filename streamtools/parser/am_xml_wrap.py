"""``<tool_call>`` in the ``am_xml`` dialect: the tags Qwen models' chat templates put
around a call.

Theory of operation
-------------------
Qwen3-Coder models write their native form, ``<tool_call><function=NAME>
<parameter=P>value</parameter></function></tool_call>``, out of habit whatever
the prompt teaches, and other Qwen models may wrap ``am_xml``'s own call in
their template's tags (``<tool_call>\n<am:tool_call name="…">…</am:tool_call>
\n</tool_call>``). ``<tool_call>`` is an ``am_xml`` marker, and its body
(``QwenTagBody``) decides at the first tag: ``<am:tool_call`` (then whitespace,
``>`` or ``/``) makes it that call's body (``WrappedAmXmlBody``, the ``am_xml``
machine), the tags its markup: the call ends at the ``</tool_call>`` after
``</am:tool_call>`` (the whitespace between is its raw text too), or, anything
else following, at ``</am:tool_call>``, the rest left to the core. Anything
else is Qwen3-Coder's form, read by ``hermes_xml``'s machine (its broken forms
``CallError`` with the raw text), but for a ``{``, ``[`` or backtick: the ``hermes`` JSON
form, ``<tool_call>{"name": …, "arguments": {…}}</tool_call>`` (a Markdown fence
around the object too, as ``hermes`` takes it), which every Qwen model's chat template
teaches (Qwen3-Coder's too, which writes it as often:
gpustack/gpustack#2660), read by the ``hermes`` body (``WrappedJsonBody``) as
``hermes`` reads it, its errors naming ``am_xml``'s form. It was
``CallError(malformed)`` telling the model to write Qwen3-Coder's form.
"""

from __future__ import annotations

import re

from streamtools.events import ParserEvent
from streamtools.parser.am_xml import AmXmlBody
from streamtools.parser.am_xml_fast import OPEN
from streamtools.parser.calls import RUNNING, CallBody, CallContext
from streamtools.parser.hermes import HermesBody
from streamtools.parser.hermes_xml import FUNC, QwenXmlBody
from streamtools.parser.hermes_xml import OPEN as QWEN_OPEN
from streamtools.parser.jsoncall import JsonCallBody
from streamtools.parser.qwen_bare import BareFunctionBody


def qwen_body(marker: str, ctx: CallContext) -> CallBody:
    """The body of ``am_xml``'s Qwen3-Coder markers: ``<tool_call>`` (``QwenTagBody``)
    and ``<function=`` with its opener left out (``qwen_bare``)."""
    return QwenTagBody(ctx, marker) if marker == QWEN_OPEN else BareFunctionBody(ctx, marker)

__all__ = ["QwenTagBody", "WrappedAmXmlBody", "WrappedJsonBody", "qwen_body"]

_WRAP_END = 9  # (a state no other body has) the call closed, </tool_call> is due
_WRAP_CLOSE = re.compile(r"</tool_call[ \t\r\n]{0,8}(>)?")


class QwenTagBody(QwenXmlBody):
    """``<tool_call>``: Qwen3-Coder's form or, first of all, an ``am_xml`` call
    inside those tags (a Qwen model wrapping every call in its template's tags;
    it ran when ``<tool_call>`` was text): the body becomes that call's, the
    tags its markup (``WrappedAmXmlBody``)."""

    def feed(self, s: str, pos: int, out: list[ParserEvent]) -> int:
        i, n = pos, len(s)
        if self.state == FUNC:  # (only before the first tag)
            while True:
                while i < n and s[i] in " \t\r\n":
                    i += 1
                if not s.startswith(QWEN_OPEN, i):
                    break
                i += len(QWEN_OPEN)  # a stutter: markup (``hermes_xml`` takes it too)
            if i < n and (s[i] == "{" or s[i] == "[" or s[i] == "`"):  # (`: a ```json fence)
                self.record(s, pos, i)
                return WrappedJsonBody.take_over(self, s, i, out)
            if i < n and s[i] == "<":
                after = i + len(OPEN)
                if after >= n and OPEN.startswith(s[i:]):
                    self.record(s, pos, i)
                    return i  # maybe <am:tool_call: wait
                if s.startswith(OPEN, i) and s[after] in " \t\r\n>/":
                    self.record(s, pos, i)
                    body: CallBody = self
                    body.__class__ = WrappedAmXmlBody  # (the body's state is all renewed)
                    assert isinstance(body, WrappedAmXmlBody)
                    body.renew(self.raw_text() + OPEN)
                    body.tag = [OPEN]  # (``_tag`` reads the tag from ``OPEN`` on)
                    body.undecided = False
                    return body.feed(s, after, out)
        return QwenXmlBody.feed(self, s, pos, out)


class WrappedAmXmlBody(AmXmlBody):
    """An ``am_xml`` call inside ``<tool_call>`` tags (see ``QwenTagBody``): it
    ends at the ``</tool_call>`` after its own closing tag (the whitespace
    between is its too), or where anything else follows (left to the core)."""

    renews = False
    ending = False  # ``end``: the call closes without the tag

    def _close(self) -> None:
        if self.ending or self.state == _WRAP_END:
            AmXmlBody._close(self)
        else:
            self.state = _WRAP_END  # ``feed`` looks for </tool_call>

    def feed(self, s: str, pos: int, out: list[ParserEvent]) -> int:
        if self.state != _WRAP_END:
            pos = AmXmlBody.feed(self, s, pos, out)
            if self.state != _WRAP_END or self.status != RUNNING:
                return pos
        self.out = out
        i, n = pos, len(s)
        while i < n and s[i] in " \t\r\n":
            i += 1
        m = _WRAP_CLOSE.match(s, i)
        if m is not None and m.group(1) is not None:
            i = m.end()
        elif i == n or (m.end() == n if m is not None else "</tool_call".startswith(s[i:])):
            self.record(s, pos, i)
            return i  # </tool_call> may be arriving: wait
        self.record(s, pos, i)
        AmXmlBody._close(self)
        return i

    def end(self, tail: str, finish_reason: str, out: list[ParserEvent]) -> str | None:
        if self.state != _WRAP_END:
            self.ending = True
            return AmXmlBody.end(self, tail, finish_reason, out)
        self.out = out
        self.record(tail, 0, len(tail))
        AmXmlBody._close(self)
        return None


class WrappedJsonBody(HermesBody):
    """``hermes``' JSON form inside ``<tool_call>`` in ``am_xml`` (see the module
    docstring): the ``hermes`` body, its errors' example ``am_xml``'s form."""

    renews = False
    example = (
        'Write <am:tool_call name="TOOL"><param>value</param></am:tool_call>, one element '
        "per parameter."
    )

    @staticmethod
    def take_over(body: CallBody, s: str, i: int, out: list[ParserEvent]) -> int:
        """``body`` (a ``QwenTagBody`` that recorded its text up to ``s[i]``, the
        object's first character) becomes this body and reads on from there."""
        raw = body.raw_text()
        body.__class__ = WrappedJsonBody  # (re-initialised below: the state is all new)
        assert isinstance(body, WrappedJsonBody)
        JsonCallBody.__init__(body, body.ctx, raw)
        body.undecided = False  # (<tool_call> is a call from the marker on, as in hermes)
        return body.feed(s, i, out)
