"""The express reader for ``am_xml``: the canonical call, without a body.

Theory of operation
-------------------
Most ``am_xml`` calls are written one way: ``<am:tool_call name="NAME">``, then
one element per parameter, ``<query>value</query>``, whitespace between them,
then ``</am:tool_call>``. The general machine (``AmXmlBody`` with its fast
paths, ``ParamValues``, the core's ``_feed``/``_run``) reads every spelling at
the price of many Python calls on each delta that holds markup. ``ExpressXml``
reads the canonical spelling alone, as ``express.Express`` does for the JSON
family (its docstring has the rest of the design: the hand-over by replay, the
conditions under which the core takes the express path, ``ENABLED``):

* the opening tag: `` name="`` against its template, the name (letters,
  digits, ``_``, ``.``, ``-``; in the catalog), ``">``; ``CallStart`` at the
  ``>``, as ``AmXmlBody._tag`` emits it;
* between elements: whitespace, a parameter's opening tag (an ASCII
  identifier, not ``parameter`` nor a wrapper's name, not given before) or the
  call's closing tag, each held while it arrives;
* a parameter's content up to its own closing tag, with no ``&``, no other
  ``<`` and no CR: a ``STRING`` streams (the key with its quote, each piece
  escaped, the layout newlines dropped as ``ParamValues._content`` drops them;
  plain deltas take the core's lane, ``_xs == XLANE``); an ``UNTYPED`` value is
  probed as ``ParamValues._probe`` probes it and streams once it is text; a
  ``TYPED`` value, or an ``UNTYPED`` one that is JSON, is held to its close and
  emitted as its stripped text when it decodes;
* ``</am:tool_call>``: ``}`` (``{}`` for no parameter), the arguments decoded
  from the text emitted and checked by the catalog, ``CallEnd``.

Every event is emitted where the general machine emits it, piece for piece (a
piece of content is a run between markup in the buffer, held text included,
as the machine's ``_param`` cuts it). At the first thing it does not follow
(another attribute, CDATA, an entity, a stray ``<``, a kind the schema gives
that is not one of those three, a value the close does not decode, arguments
the catalog refuses, the end of the reply) the call goes to the general
machine by a replay, as ``Express._x_replay`` does: its events from then on are
the machine's. A call's state is an ``XmlCall`` (``_xst``), not the parser's own
attributes, and ``_xs`` takes values of its own (``XLANE`` and up), by which
``Express``'s steps the core calls (``_x_held``, ``_x_off``, ``_x_replay``) tell
this reader's call from a JSON one.
"""

from __future__ import annotations

import re

import msgspec

from streamtools.events import ArgsDelta, CallEnd, CallStart, ParserEvent
from streamtools.parser import express
from streamtools.parser.am_xml import AM_XML
from streamtools.parser.am_xml_fast import CLOSE, OPEN, WRAPPERS
from streamtools.parser.express import _LONGEST, OFF, Express
from streamtools.parser.textmode import CALL, TEXT
from streamtools.parser.xml_values import STRING, TYPED, UNTYPED, kinds_from_schema

__all__ = ["XLANE", "ExpressXml", "XmlCall"]

# ``_xs`` in a call this reader reads (``express``'s are below): in a streaming
# string parameter (the core's lane, with "<" and "&" tested too), elsewhere, and
# right after the marker (undecided: held)
XLANE, XON, XWAIT = 3, 4, 5
# ``_xph``: in the opening tag (``express.HEAD``, what ``_x_off`` resets), between
# elements, in a parameter's content
TAG, BODY, PARAM = 0, 1, 2
_HEAD = ' name="'
_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_NAME_PART = re.compile(r"[A-Za-z0-9_.\-]{0,64}")
_TAG_HOLD = 80  # the longest tag held while it arrives (longer: the general machine)
_SPACE = " \t\r\n"
_NULL_STARTS = frozenset(("n", "nu", "nul", "null"))
_PROBE = 16  # (``xml_values._PROBE``)


class XmlCall:
    """The reader's state for one call (one object per parser, renewed per call:
    kept off the parser, whose attributes CPython shares between instances only
    up to 30 names; past them every attribute access in ``feed`` is slower)."""

    __slots__ = (
        "args", "close", "done", "fresh", "given", "held", "hold", "i", "id", "kind", "kinds",
        "name", "nl", "ph", "probe", "raw",
    )

    def __init__(self) -> None:
        self.kinds: dict[str, dict[str, int]] = {}  # per tool name, its parameters' kinds
        self.raw: list[str] = []  # the marker, its delta's rest, every delta since
        self.args: list[str] = []  # the argument text emitted so far
        self.hold = ""  # text held (a tag arriving) from the phase's start
        self.ph = TAG
        self.i = -1  # the call's index once CallStart is out
        self.id = ""
        self.name = ""
        self.given: set[str] = set()
        self.close = ""  # the open parameter's closing tag, its kind and value state
        self.kind = STRING
        self.held: list[str] = []
        self.probe = ""
        self.done = False  # the probe decided: an UNTYPED value held whole (JSON)
        self.fresh = True
        self.nl = ""  # a trailing newline held back


class ExpressXml(Express):
    """The ``am_xml`` express reader's steps, a base of ``core.Parser``."""

    _xst: XmlCall | None = None

    def _x_setup(self, max_buffer: int | None) -> None:
        super()._x_setup(max_buffer)
        self._xs = OFF  # (every parser's, early: see ``XmlCall``)
        self._xst = None
        if self.syntax is not AM_XML or not express.ENABLED or self._stops:
            return
        if max_buffer is not None:
            return
        self._xmarker = OPEN
        self._xst = XmlCall()

    # -- Express's steps, for a call this reader reads (``_xs`` XLANE and up) ------

    def _x_held(self) -> int:
        """``Parser.held``: the marker alone is an undecided body's text."""
        if self._xs < XLANE:
            return Express._x_held(self)
        return len(OPEN) if self._xs == XWAIT else 0

    def _x_open(self, s: str, pos: int, i: int, tok: str, out: list[ParserEvent]) -> bool:
        if tok != OPEN:
            return Express._x_open(self, s, pos, i, tok, out)
        return self._xm_open(s, pos, i, tok, out)

    def _x_off(self) -> None:
        if self._xs < XLANE:
            Express._x_off(self)  # (not ``super()``: one call less per JSON call)
            return
        self._xs = OFF
        st = self._xst
        assert st is not None
        st.raw = []
        st.hold = ""
        st.ph = TAG
        st.i = -1

    def _x_replay(self) -> list[ParserEvent]:
        """Hand the call to the general machine (``Express._x_replay``)."""
        if self._xs < XLANE:
            return Express._x_replay(self)
        st = self._xst
        assert st is not None
        raw = st.raw
        if st.i >= 0:
            self._ctx.count -= 1  # the general machine allocates it again
        self._x_off()
        tok, first = raw[0], raw[1]
        self._mode = CALL
        body = self.syntax.open(tok, self._ctx)
        assert body is not None
        self._body = body
        self._prev = tok[-1]
        if first:
            self._feed(first, body)
        events: list[ParserEvent] = []
        for d in raw[2:]:
            events = self.feed(d)  # type: ignore[attr-defined]
        return events

    # -- the reader ------------------------------------------------------------------

    def _xm_open(self, s: str, pos: int, i: int, tok: str, out: list[ParserEvent]) -> bool:
        """``_scan`` found ``<am:tool_call`` at ``s[i]``: read the call, or return
        False (nothing done) for the general machine."""
        if len(s) - i > _LONGEST:
            return False
        st = self._xst
        assert st is not None
        n0 = len(out)
        count = self._ctx.count
        self._emit(s[pos:i], False, out)
        first = s[i + len(tok) :]
        st.raw = [tok, first]
        st.ph, st.hold, st.i = TAG, "", -1
        self._opened = True
        self._mode = CALL
        if not first:
            self._xs = XWAIT
            if len(tok) > self.max_held:
                self.max_held = len(tok)  # (undecided: held, ``_x_held``)
            return True
        self._xs = XON
        if self._xm_tag(st, first, out):
            return True
        del out[n0:]
        self._ctx.count = count
        self._x_off()
        self._mode = TEXT
        return False

    def _xm_express(self, delta: str) -> list[ParserEvent]:
        """A delta of a call the reader reads (the core's entry points, past the
        lane). A tag still arriving is held here, without a call."""
        if not delta:
            return []
        st: XmlCall = self._xst  # type: ignore[assignment]
        st.raw.append(delta)
        hold = st.hold
        s = hold + delta if hold else delta
        ph = st.ph
        if ">" not in delta and len(s) < _TAG_HOLD:
            # a tag still arriving: the general machine makes no event before its
            # ">" either, but for a new call's marker (``_xm_read`` reads the tag whole)
            if ph == BODY:
                if s[0] == "<" and not s.startswith("<am:"):
                    st.hold = s
                    return []
            elif ph == PARAM:
                close = st.close
                if s[0] == "<" and len(s) < len(close) and close.startswith(s):
                    st.hold = s
                    self._xs = XON
                    return []
            elif hold and "<" not in delta:  # TAG: its first character decides
                st.hold = s
                self._xs = XON
                return []
        if not ph:
            self._xs = XON
        out: list[ParserEvent] = []
        if self._xm_read(st, s, 0, ph, out) if ph else self._xm_tag(st, s, out):
            return out
        return self._x_replay()

    def _xm_tag(self, st: XmlCall, s: str, out: list[ParserEvent]) -> bool:
        """The opening tag after the marker: `` name="NAME">``."""
        if not s.startswith(_HEAD):
            if _HEAD.startswith(s):
                st.hold = s
                return True
            return False
        j = s.find('"', len(_HEAD))
        if j < 0 or j + 1 == len(s):  # the name or the ">" still to come
            if _NAME_PART.fullmatch(s, len(_HEAD), len(s) if j < 0 else j) is None:
                return False
            st.hold = s
            return True
        if s[j + 1] != ">":
            return False
        name = s[len(_HEAD) : j]
        ctx = self._ctx
        kinds = st.kinds.get(name)
        if kinds is None:
            if _NAME.fullmatch(name) is None or name not in ctx.catalog:
                return False
            kinds = st.kinds[name] = kinds_from_schema(ctx.catalog.schema(name))
        n = ctx.count  # ``CallContext.allocate``, inline
        ctx.count = n + 1
        st.i, st.id = n, f"{ctx.id_prefix}{n}"
        st.name = name
        st.args = []
        st.given = set()
        out.append(CallStart(index=n, id=st.id, name=name))
        return self._xm_read(st, s, j + 2, BODY, out)

    def _xm_read(self, st: XmlCall, s: str, i: int, ph: int, out: list[ParserEvent]) -> bool:
        """``s[i:]`` between elements (``ph`` BODY) or in a parameter's content
        (PARAM); False: derail."""
        n = len(s)
        while i < n:
            if ph == PARAM:
                k = s.find("<", i)
                if k != i:
                    piece = s[i:] if k < 0 else s[i:k]
                    if "&" in piece or "\r" in piece:
                        return False
                    if (
                        st.kind == STRING and not st.fresh and not st.nl
                        and piece.isprintable() and '"' not in piece and "\\" not in piece
                    ):  # (``_xm_content``'s common case, inline)
                        st.args.append(piece)
                        out.append(ArgsDelta(index=st.i, id=st.id, delta=piece))
                    elif not self._xm_content(st, piece, out):
                        return False
                    if k < 0:
                        break
                close = st.close
                if not s.startswith(close, k):
                    rest = s[k:]
                    if not close.startswith(rest):
                        return False
                    st.hold = rest
                    st.ph = PARAM
                    self._xs = XON
                    return True
                if st.kind == STRING:
                    st.args.append('"')
                    out.append(ArgsDelta(index=st.i, id=st.id, delta='"'))
                elif not self._xm_close(st, out):
                    return False
                i, ph = k + len(close), BODY
                continue
            c = s[i]
            if c in _SPACE:
                i += 1
                continue
            if c != "<":
                return False
            e = s.find(">", i, i + _TAG_HOLD)
            if e < 0:
                rest = s[i:]
                if len(rest) < _TAG_HOLD and (
                    (rest[1:].isidentifier() and rest.isascii()) or CLOSE.startswith(rest)
                    or rest == "<"
                ):
                    st.hold = rest
                    st.ph = BODY
                    self._xs = XON
                    return True
                return False
            if e == i + len(CLOSE) - 1 and s.startswith(CLOSE, i):
                return self._xm_end(st, s, e + 1, out)
            name = s[i + 1 : e]
            if (
                not (name.isascii() and name.isidentifier())
                or name == "parameter"
                or name in WRAPPERS
                or name in st.given
            ):
                return False
            kind = st.kinds[st.name].get(name, UNTYPED)
            if kind != STRING and kind != UNTYPED and kind != TYPED:
                return False
            # the parameter opens (``ParamValues._open_param``)
            st.given.add(name)
            st.close = f"</{name}>"
            st.kind = kind
            st.held = []
            st.probe = ""
            st.done = False
            st.fresh = True
            st.nl = ""
            key = f'{", " if st.args else "{"}"{name}": '
            if kind == STRING:
                key += '"'
            st.args.append(key)
            out.append(ArgsDelta(index=st.i, id=st.id, delta=key))
            i, ph = e + 1, PARAM
        st.hold = ""
        st.ph = ph
        lane = ph == PARAM and st.kind == STRING and not st.nl and not st.fresh
        self._xs = XLANE if lane else XON
        return True

    def _xm_content(self, st: XmlCall, text: str, out: list[ParserEvent]) -> bool:
        """A piece of a value's content (``ParamValues._content``); False: derail."""
        if st.kind != STRING:
            st.held.append(text)
            if st.kind == UNTYPED and _probe(st, text):
                held = "".join(st.held)
                st.held = []
                st.kind = STRING
                st.args.append('"')
                out.append(ArgsDelta(index=st.i, id=st.id, delta='"'))
                return self._xm_content(st, held, out)
            return True
        if st.nl:
            text = st.nl + text
            st.nl = ""
        if st.fresh:
            st.fresh = False
            if text[0] == "\n":
                text = text[1:]
        if text and text[-1] == "\n":
            st.nl = "\n"
            text = text[:-1]
        if text:
            if '"' in text or "\\" in text or not text.isprintable():
                try:
                    text = msgspec.json.encode(text).decode()[1:-1]
                except UnicodeEncodeError:
                    return False  # (a lone surrogate half: the machine's to mend)
            st.args.append(text)
            out.append(ArgsDelta(index=st.i, id=st.id, delta=text))
        return True

    def _xm_close(self, st: XmlCall, out: list[ParserEvent]) -> bool:
        """A held value's closing tag (``ParamValues._close_param``; a ``STRING``'s
        quote is ``_xm_read``'s)."""
        value = "".join(st.held).strip()
        try:
            decoded = msgspec.json.decode(value)
        except (msgspec.DecodeError, RecursionError, UnicodeEncodeError):
            return False
        if st.kind == UNTYPED and isinstance(decoded, str):
            return False  # (not reached: a held UNTYPED value starts with "[", "{" or "n")
        st.args.append(value)
        out.append(ArgsDelta(index=st.i, id=st.id, delta=value))
        return True

    def _xm_end(self, st: XmlCall, s: str, end: int, out: list[ParserEvent]) -> bool:
        """``</am:tool_call>`` ends at ``s[end]``: the call's end, or False."""
        args = st.args
        try:
            arguments = msgspec.json.decode("".join(args) + "}") if args else {}
        except (msgspec.DecodeError, RecursionError, UnicodeEncodeError):
            return False
        name = st.name
        ctx = self._ctx
        if ctx.checks and ctx.catalog.check_arguments(name, arguments) is not None:
            return False
        last = "}" if args else "{}"
        args.append(last)
        out.append(ArgsDelta(index=st.i, id=st.id, delta=last))
        raw = st.raw
        text = "".join(raw)
        cut = len(text) - len(s) + end  # the call's end in ``text``
        call_raw = text[:cut] if cut < len(text) else text
        out.append(CallEnd(index=st.i, id=st.id, name=name, arguments=arguments, raw=call_raw))
        self._prev = ">"
        self._x_text(s[end:], out)
        return True


def _probe(st: XmlCall, text: str) -> bool:
    """``ParamValues._probe`` for an ``UNTYPED`` value: True once it is text."""
    if st.done:
        return False
    st.probe += text[: _PROBE + 1]
    p = st.probe.lstrip()
    if not p:
        st.probe = ""
        return False
    if p[0] == "[" or p[0] == "{":
        st.done = True
        return False
    core = p.rstrip()
    if len(p) > _PROBE:
        return True
    if core != p:
        return core != "null"
    return core not in _NULL_STARTS
