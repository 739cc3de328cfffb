"""The fast paths of the ``am_xml`` call body: what it takes without its machine.

Theory of operation
-------------------
Most deltas of an ``am_xml`` call need none of the element machine
(``AmXmlBody.feed`` with its per-state loop). ``fast(delta)`` tries, in order:

* **content without markup** in a parameter (``_fast_content``), taken as the
  machine's ``_param`` takes it: typed values held, layout newlines, escaping;
* **the parameter closing** (``_fast_close``): content up to a ``<`` that begins
  the parameter's closing tag (or a CDATA opener), the tag held while it arrives
  or closed when whole;
* **tags still arriving** (in ``fast`` itself): the call's opening tag or a child
  or closing tag between parameters, held;
* **a parameter opening** (``_fast_child``): its tag completing in the delta
  (``<query`` + ``>fi``) with only plain content after it.

Shorter than all of these is the core's lane (``Parser.feed``): plain text in
a started call's string parameter, while ``streaming`` (kept by ``ParamValues``)
says so, is taken there with five ``in``-class tests and no call to the body;
the delta is its own JSON string text.

Each either takes the delta exactly as the machine would (the same state after
it, the same events), with at most a tail left in ``rest`` for the core to hold,
or returns None having changed nothing, and the machine runs. None of them ends
a call or opens a new one.

The element machine's states and markers live here, where both halves of the
body read them.
"""

from __future__ import annotations

import re

from streamtools.events import ParserEvent
from streamtools.parser.xml_values import ParamValues

__all__ = [
    "BODY", "CDATA", "CDATA_CLOSE", "CDATA_OPEN", "CLOSE", "OPEN", "OPEN_TAG", "PARAM", "TAG",
    "TAG_LIMIT", "WRAPPERS", "AmXmlFastPaths",
]

OPEN, CLOSE = "<am:tool_call", "</am:tool_call>"
CDATA_OPEN, CDATA_CLOSE = "<![CDATA[", "]]>"
TAG_LIMIT = 512  # a partial child tag longer than this is stray text
# an XML name: a letter (any script) or underscore, then letters, digits, ``.-:_``
OPEN_TAG = re.compile(r"""<([^\W\d][\w.\-:]*)((?:\s[^>]*?)?)(/?)>\Z""", re.S)
TAG, BODY, PARAM, CDATA = range(4)  # the element machine's states (see ``am_xml``)
# elements models wrap the parameter elements in (Anthropic's old format): markup
# where the tool's schema has no parameter of that name (see ``am_xml``)
WRAPPERS = frozenset({"parameters", "arguments", "args"})


class AmXmlFastPaths(ParamValues):
    """The fast paths of ``AmXmlBody`` (its first base)."""

    # the body's state, kept by ``CallBody`` and ``AmXmlBody``
    raw: list[str]
    size: int
    rest: str
    undecided: bool
    tag: list[str]
    stray: list[str]
    gap: int

    def fast(self, delta: str) -> list[ParserEvent] | None:
        # (plain text in a started call's string parameter never gets here: the
        # core's lane takes it, see ``streaming``)
        state = self.state
        if state == PARAM:
            if "<" in delta:
                return self._fast_close(delta)
            if "&" in delta:
                return None  # an entity, maybe cut: the machine decodes or waits
            self.rest = ""
            return self._fast_content(delta, [])
        # tags still arriving, taken as ``_tag``/``_body`` would, without the loop
        # (here, not in a method of their own: most of a call's markup deltas)
        if ">" in delta:
            return self._fast_child(delta) if state == BODY else None
        if state == TAG:
            if "<" in delta:
                return None  # maybe a new call: see ``_tag``
            if self.undecided:
                if delta[0] not in " \t\r\n/":
                    return None  # the machine rejects it (a different word: text)
                self.undecided = False  # a call: see ``_tag``
            self.rest = ""
            self.tag.append(delta)
            self.raw.append(delta)
            self.size += len(delta)
            return []
        if (
            state == BODY
            and delta[0] == "<"
            and len(delta) <= TAG_LIMIT
            and not (delta.startswith(OPEN) and len(delta) > len(OPEN))  # maybe a new call
        ):
            self.rest = delta  # a child or closing tag still arriving: hold it
            return []
        return None

    def _fast_content(self, text: str, out: list[ParserEvent]) -> list[ParserEvent]:
        """Content with no markup or entity, taken as ``_param`` takes it (typed
        values held, layout newlines, escaping)."""
        self.raw.append(text)
        self.size += len(text)
        self.out = out
        self._content(text)
        return out

    def _fast_close(self, delta: str) -> list[ParserEvent] | None:
        """Content up to a ``<`` that begins this parameter's closing tag (or a CDATA
        opener): the content taken, the closing tag still arriving held, or a whole
        closing tag closed, as ``_param`` would, without the machine.

        What follows a whole closing tag is held for the machine when it can make
        no event yet (no ``>``, no new call marker): in BODY only a completed tag
        or a new call acts."""
        k = delta.index("<")
        tail = delta[k:] if k else delta
        close = self.pclose
        if tail.startswith(close):
            after = tail[len(close) :]
            if after and (">" in after or OPEN in after or len(after) > TAG_LIMIT):
                return None
        elif (len(tail) < len(close) and close.startswith(tail)) or (
            len(tail) < len(CDATA_OPEN) and CDATA_OPEN.startswith(tail)
        ):
            after = None
        else:
            return None
        out: list[ParserEvent] = []
        if k:
            head = delta[:k]
            if "&" in head:
                return None
            self._fast_content(head, out)
        if after is None:
            self.rest = tail  # a closing tag or CDATA opener still arriving: hold
            return out
        self.raw.append(close)
        self.size += len(close)
        self.out = out
        self._close_param()
        self.rest = after
        return out

    def _fast_child(self, delta: str) -> list[ParserEvent] | None:
        """A parameter's opening tag completing in ``delta`` (``<query>``), nothing
        but plain content after it: the parameter opened and its content taken,
        as ``_body`` and ``_param`` would, without the loop. None, with nothing
        taken, for anything else (a new call, a stray tag, text before the tag,
        ``<parameter name=…>``, ``<a/>``, markup or an entity after it)."""
        if (
            delta[0] != "<"
            or delta[1] == "/"  # a closing tag (the call's, most often)
            or self.gap != len(self.stray)
            or delta.startswith(OPEN)
        ):
            return None
        e = delta.find(">")
        if e > TAG_LIMIT:
            return None  # too long for a tag: stray text (``_body``)
        content = delta[e + 1 :]
        if "<" in content or "&" in content:
            return None
        name = delta[1:e]
        if not (name.isascii() and name.isidentifier()):  # (the test is cheaper)
            m = OPEN_TAG.match(delta[: e + 1])
            if m is None or m.group(3):
                return None
            name = m.group(1)
        if name == "parameter" or (name in WRAPPERS and not self.params):
            return None  # (maybe a wrapper around the parameters: ``am_xml``'s ``_body``)
        out: list[ParserEvent] = []
        self.out = out
        self.rest = ""
        self.raw.append(delta[: e + 1])
        self.size += e + 1
        self._open_param(name, name)
        return self._fast_content(content, out) if content else out
