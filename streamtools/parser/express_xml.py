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
machine by ``Express._x_replay``: its events from then on are the machine's.
"""

from __future__ import annotations

import re

import msgspec

from streamtools.events import ArgsDelta, CallEnd, CallStart, ParserEvent
from streamtools.parser import express
from streamtools.parser.am_xml import AM_XML
from streamtools.parser.am_xml_fast import CLOSE, OPEN, WRAPPERS
from streamtools.parser.express import _LONGEST, ON, Express
from streamtools.parser.textmode import CALL, TEXT
from streamtools.parser.xml_values import STRING, TYPED, UNTYPED, kinds_from_schema

__all__ = ["XLANE", "ExpressXml"]

XLANE = 3  # ``_xs``: in a streaming string parameter (the core's lane, with "<", "&" tested)
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


class ExpressXml(Express):
    """The ``am_xml`` express reader's state and steps, a base of ``core.Parser``
    (installed per instance over ``Express``'s by ``_x_setup``)."""

    _xkinds: dict[str, dict[str, int]]  # per tool name, its parameters' kinds
    _xargs: list[str]  # the argument text emitted so far
    _xgiven: set[str]
    _xpname = ""  # the open parameter, its closing tag, its kind and value state
    _xclose = ""
    _xkind = STRING
    _xheld: list[str]
    _xprobe = ""
    _xdone = False  # the probe decided: an UNTYPED value held whole (JSON)
    _xfresh = True
    _xnl = ""  # a trailing newline held back

    def _x_setup(self, max_buffer: int | None) -> None:
        super()._x_setup(max_buffer)
        if self.syntax is not AM_XML or not express.ENABLED or self._stops:
            return
        if max_buffer is not None:
            return
        self._xmarker = OPEN
        self._xkinds = {}
        # (instance attributes: the core's entry points and ``held`` call these)
        self._x_open = self._xm_open  # type: ignore[method-assign]
        self._express = self._xm_express  # type: ignore[method-assign]
        self._x_held = self._xm_held  # type: ignore[method-assign]

    def _xm_held(self) -> int:
        """``Parser.held``: the marker alone is an undecided body's text."""
        return len(OPEN) if self._xph == TAG and not self._xhold else 0

    def _xm_open(self, s: str, pos: int, i: int, tok: str, out: list[ParserEvent]) -> bool:
        """``_scan`` found ``<am:tool_call`` at ``s[i]``: read the call, or return
        False (nothing done) for the general machine."""
        if len(s) - i > _LONGEST:
            return False
        n0 = len(out)
        count = self._ctx.count
        self._emit(s[pos:i], False, out)
        first = s[i + len(tok) :]
        self._xraw = [tok, first]
        self._xph, self._xhold, self._xi = TAG, "", -1
        self._opened = True
        self._mode = CALL
        self._xs = ON
        if not first:
            if len(tok) > self.max_held:
                self.max_held = len(tok)  # (undecided: held, ``_xm_held``)
            return True
        if self._xm_tag(first, out):
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
        self._xraw.append(delta)
        hold = self._xhold
        s = hold + delta if hold else delta
        ph = self._xph
        if not ph:  # TAG: nothing happens before its ">" (or a "<": a new call)
            if ">" not in delta and "<" not in delta and len(s) < _TAG_HOLD and hold:
                self._xhold = s  # (read whole at the ">": ``_xm_tag``)
                return []
        elif s[0] == "<" and ">" not in delta:
            if ph == PARAM:
                close = self._xclose
                if len(s) < len(close) and close.startswith(s):
                    self._xhold = s
                    self._xs = ON
                    return []
            elif ph == BODY and len(s) < _TAG_HOLD and (
                (s[1:].isidentifier() and s.isascii()) or CLOSE.startswith(s) or s == "<"
            ):
                self._xhold = s
                return []
        out: list[ParserEvent] = []
        if self._xm_read(s, 0, ph, out) if ph else self._xm_tag(s, out):
            return out
        return self._x_replay()

    def _xm_tag(self, s: str, out: list[ParserEvent]) -> bool:
        """The opening tag after the marker: `` name="NAME">``."""
        if not s.startswith(_HEAD):
            return _HEAD.startswith(s) and self._xm_held_tag(s)
        j = s.find('"', len(_HEAD))
        if j < 0:
            return _NAME_PART.fullmatch(s, len(_HEAD)) is not None and self._xm_held_tag(s)
        if j + 1 == len(s):
            return self._xm_held_tag(s)  # the ">" still to come
        if s[j + 1] != ">":
            return False
        name = s[len(_HEAD) : j]
        ctx = self._ctx
        kinds = self._xkinds.get(name)
        if kinds is None:
            if _NAME.fullmatch(name) is None or name not in ctx.catalog:
                return False
            kinds = self._xkinds[name] = kinds_from_schema(ctx.catalog.schema(name))
        n = ctx.count  # ``CallContext.allocate``, inline
        ctx.count = n + 1
        self._xi, self._xid = n, f"{ctx.id_prefix}{n}"
        self._xname = name
        self._xargs = []
        self._xgiven = set()
        out.append(CallStart(index=n, id=self._xid, name=name))
        return self._xm_read(s, j + 2, BODY, out)

    def _xm_held_tag(self, s: str) -> bool:
        self._xhold = s
        return True

    def _xm_read(self, s: str, i: int, ph: int, out: list[ParserEvent]) -> bool:
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
                        self._xkind == STRING and not self._xfresh and not self._xnl
                        and piece.isprintable() and '"' not in piece and "\\" not in piece
                    ):  # (``_xm_content``'s common case, inline)
                        self._xargs.append(piece)
                        out.append(ArgsDelta(index=self._xi, id=self._xid, delta=piece))
                    elif not self._xm_content(piece, out):
                        return False
                    if k < 0:
                        break
                close = self._xclose
                if not s.startswith(close, k):
                    rest = s[k:]
                    if not close.startswith(rest):
                        return False
                    self._xhold = rest
                    self._xph = PARAM
                    self._xs = ON
                    return True
                if self._xkind == STRING:
                    self._xargs.append('"')
                    out.append(ArgsDelta(index=self._xi, id=self._xid, delta='"'))
                elif not self._xm_close(out):
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
                    self._xhold = rest
                    self._xph = BODY
                    self._xs = ON
                    return True
                return False
            if e == i + len(CLOSE) - 1 and s.startswith(CLOSE, i):
                return self._xm_end(s, e + 1, out)
            name = s[i + 1 : e]
            if (
                not (name.isascii() and name.isidentifier())
                or name == "parameter"
                or name in WRAPPERS
                or name in self._xgiven
                or not self._xm_param(name, out)
            ):
                return False
            i, ph = e + 1, PARAM
        self._xhold = ""
        self._xph = ph
        self._xs = (
            XLANE if ph == PARAM and self._xkind == STRING and not self._xnl and not self._xfresh
            else ON
        )
        return True

    def _xm_param(self, name: str, out: list[ParserEvent]) -> bool:
        """A parameter element opens (``ParamValues._open_param``)."""
        kind = self._xkinds[self._xname].get(name, UNTYPED)
        if kind != STRING and kind != UNTYPED and kind != TYPED:
            return False
        self._xgiven.add(name)
        self._xpname = name
        self._xclose = f"</{name}>"
        self._xkind = kind
        self._xheld = []
        self._xprobe = ""
        self._xdone = False
        self._xfresh = True
        self._xnl = ""
        key = f'{", " if self._xargs else "{"}"{name}": '
        if kind == STRING:
            key += '"'
        self._xm_emit(key, out)
        return True

    def _xm_emit(self, text: str, out: list[ParserEvent]) -> None:
        self._xargs.append(text)
        out.append(ArgsDelta(index=self._xi, id=self._xid, delta=text))

    def _xm_content(self, text: str, out: list[ParserEvent]) -> bool:
        """A piece of a value's content (``ParamValues._content``); False: derail."""
        if self._xkind != STRING:
            self._xheld.append(text)
            if self._xkind == UNTYPED and self._xm_probe(text):
                held = "".join(self._xheld)
                self._xheld = []
                self._xkind = STRING
                self._xm_emit('"', out)
                return self._xm_content(held, out)
            return True
        if self._xnl:
            text = self._xnl + text
            self._xnl = ""
        if self._xfresh:
            self._xfresh = False
            if text[0] == "\n":
                text = text[1:]
        if text and text[-1] == "\n":
            self._xnl = "\n"
            text = text[:-1]
        if text:
            if '"' in text or "\\" in text or not text.isprintable():
                try:
                    text = msgspec.json.encode(text).decode()[1:-1]
                except UnicodeEncodeError:
                    return False  # (a lone surrogate half: the machine's to mend)
            self._xm_emit(text, out)
        return True

    def _xm_probe(self, text: str) -> bool:
        """``ParamValues._probe`` for an ``UNTYPED`` value: True once it is text."""
        if self._xdone:
            return False
        self._xprobe += text[: _PROBE + 1]
        p = self._xprobe.lstrip()
        if not p:
            self._xprobe = ""
            return False
        if p[0] == "[" or p[0] == "{":
            self._xdone = True
            return False
        core = p.rstrip()
        if len(p) > _PROBE:
            return True
        if core != p:
            return core != "null"
        return core not in _NULL_STARTS

    def _xm_close(self, out: list[ParserEvent]) -> bool:
        """A held value's closing tag (``ParamValues._close_param``; a ``STRING``'s
        quote is ``_xm_read``'s)."""
        value = "".join(self._xheld).strip()
        try:
            decoded = msgspec.json.decode(value)
        except (msgspec.DecodeError, RecursionError, UnicodeEncodeError):
            return False
        if self._xkind == UNTYPED and isinstance(decoded, str):
            return False  # (not reached: a held UNTYPED value starts with "[", "{" or "n")
        self._xm_emit(value, out)
        return True

    def _xm_end(self, s: str, end: int, out: list[ParserEvent]) -> bool:
        """``</am:tool_call>`` ends at ``s[end]``: the call's end, or False."""
        args = self._xargs
        try:
            arguments = msgspec.json.decode("".join(args) + "}") if args else {}
        except (msgspec.DecodeError, RecursionError, UnicodeEncodeError):
            return False
        name = self._xname
        ctx = self._ctx
        if ctx.checks and ctx.catalog.check_arguments(name, arguments) is not None:
            return False
        self._xm_emit("}" if args else "{}", out)
        raw = self._xraw
        text = "".join(raw)
        cut = len(text) - len(s) + end  # the call's end in ``text``
        call_raw = text[:cut] if cut < len(text) else text
        out.append(CallEnd(index=self._xi, id=self._xid, name=name, arguments=arguments,
                           raw=call_raw))
        self._prev = ">"
        self._x_text(s[end:], out)
        return True
