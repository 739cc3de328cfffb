"""The express reader: a JSON-family call written the canonical way, without a body.

Theory of operation
-------------------
Most calls a model writes in ``hermes``, ``json_action``, ``command`` and
``inline_json`` are spelled one way: ``<tool_call>{"name": "NAME", "arguments":
{…}}</tool_call>`` and its kin. The general machine (a ``CallBody`` with its
envelope and value scanner, driven by the core's ``_feed``/``_run``/``_scan``)
reads every spelling, at the price of 20 to 30 Python calls on each structural
delta of a call. ``Express`` (a base of ``core.Parser``) reads the canonical
spelling alone, in one method per delta:

* the marker, taken by ``_scan`` (``_x_open``), or by the core's ``_feed``
  without the scan where a buffer's text begins with it or it is a text
  delta's first marker-start character (``_x_at``: the same test of the
  character before it);
* the dialect's head up to the tool name (``{"name": "``), compared with a
  template and held while it is a prefix of one; the name (a run of letters,
  digits, ``_``, ``.`` and ``-``, known to the catalog), ``CallStart`` at its
  end, as the general machine emits it;
* the text between the name and the arguments' ``{`` against templates;
* the arguments: JSON objects, arrays, strings without escapes or unprintable
  characters, numbers and ``true``/``false``/``null`` (held until the character
  after them, as the value scanner holds them), separated by single spaces; the
  argument text of a delta goes out as one ``ArgsDelta`` (a string's plain
  deltas take the core's inline lane, ``_xs == LANE``);
* the tail up to the call's end (``}</tool_call>``…) against templates, then
  ``CallEnd`` with the arguments decoded once, and the rest of the delta is
  text for the core again.

At the first thing it does not follow (another spelling, an escape, a newline
between values, a name the catalog lacks, arguments the catalog refuses, the end
of the reply inside the call) the call goes to the general machine: the body
the dialect would have opened is made, and the call's raw text is fed to it again
with the same cuts (the marker's delta, then every delta since): the machine is
in the state it would have been in, and the events of the last delta are its
own. The replay's other events are those the express reader already emitted
(``tests/test_parser_s19_express.py`` holds it to that, feed for feed). Only
text the express reader read is replayed, once per call: linear.

The core takes the express path only where it holds everything a call can meet:
no stop strings (they do not apply inside calls, but their bookkeeping around an
undecided body is the general machine's), no ``max_buffer``, a marker in a buffer
of at most ``_LONGEST`` characters (a whole reply in one delta is scanned in place
by the general machine). In ``inline_json`` a name no tool's begins with is handed
over at once (the window rejects it there).
``ENABLED`` is for tests that compare the two paths.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from streamtools.events import ArgsDelta, CallEnd, CallStart, ParserEvent, TextDelta
from streamtools.parser.catalog import AnyTool, name_prefixes
from streamtools.parser.command import COMMAND
from streamtools.parser.hermes import HERMES
from streamtools.parser.inline_json import INLINE_JSON
from streamtools.parser.json_action import (
    _HEADS,
    _HEADS_LONGEST,
    _NEXT,
    _NEXT_LONGEST,
    _NEXT_START,
    _VARIANT_FIRST,
    JSON_ACTION,
    _info,
)
from streamtools.parser.textmode import CALL, CALL_END, TEXT, TextModes

__all__ = ["ENABLED", "Express"]

ENABLED = True  # read by ``Parser()``: tests compare parsers made with and without it

# ``_xs``: off, in a string of the arguments (the core's lane), elsewhere in a call
OFF, LANE, ON = 0, 1, 2
# ``_xph``, the part of the call being read
HEAD, NAME, MID, ARGS, TAIL, AFTER = range(6)
# ``_xj``, the JSON state in the arguments
STR, KEY, KEY_OR_END, COLON, VALUE, VALUE_OR_END, NEXT = range(7)
_NAME = re.compile(r"[A-Za-z0-9_.\-]{0,64}")
_NUMBER_RUN = re.compile(r"[-+0-9.eE]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_LITERALS = ("true", "false", "null")
_AFTER_VALUE = " ,}]"
_MAX_DEPTH = 32
_LONGEST = 256  # the longest buffer a call may open in (longer ones: a whole reply)
_SHORT_REST = 64  # (``core._SHORT_REST``: text after a call tested for marker starts)
_TOKEN = 32  # the longest number or literal held (longer: the scanner's bound applies)
_decode = msgspec.json.Decoder().decode  # (the arguments at a call's end; one lookup)


class _Spec:
    """One dialect's canonical call: marker, head templates (up to the name), the
    character that ends the name, templates from there to the arguments' ``{``,
    tail templates (after the arguments' ``}``, to the call's end), and the
    characters that, right after the end, keep the general body reading
    (``json_action``'s next fence line)."""

    __slots__ = ("after", "heads", "holds", "marker", "mids", "name_end", "tails", "undecided")

    def __init__(
        self, marker: str, heads: tuple[str, ...], name_end: str, mids: tuple[str, ...],
        tails: tuple[str, ...], *, after: bool = False, undecided: bool = False,
    ) -> None:
        self.marker, self.heads, self.name_end = marker, heads, name_end
        self.mids, self.tails, self.after, self.undecided = mids, tails, after, undecided
        # per part, the buffers it holds whole (proper prefixes of its templates, ""
        # aside): one lookup instead of the step (not while an undecided head's
        # text counts as held, ``_x_hold``)
        def starts(templates: tuple[str, ...]) -> frozenset[str]:
            return frozenset(m[:k] for m in templates for k in range(1, len(m)))

        none: frozenset[str] = frozenset()
        self.holds = (
            none if undecided else starts(heads), none, starts(mids), none, starts(tails),
        )


SPECS = {
    HERMES: _Spec(
        "<tool_call>", ('{"name": "', '\n{"name": "'), '"',
        ('", "arguments": {', '", "arguments":{'), ("}</tool_call>", "}\n</tool_call>"),
    ),
    JSON_ACTION: _Spec(
        "```json action\n", ('{"tool": "',), '"', ('", "parameters": {',), ("}\n```",),
        after=True,
    ),
    COMMAND: _Spec("@tool ", ("",), " ", (" {",), ("",)),
    INLINE_JSON: _Spec(
        "{", ('"tool": "',), '"', ('", "arguments": {', '", "parameters": {'),
        ("}",), undecided=True,
    ),
}


class Express(TextModes):
    """The express reader's state and steps, a base of ``core.Parser``."""

    _xs = OFF  # read by the core's entry points on every delta that is not plain text
    _xspec: _Spec
    _xraw: list[str]  # the marker, its delta's rest, every delta since
    _xhold = ""  # text the reader holds (a template's prefix, a number), from ``_xph``'s start
    _xph = HEAD
    _xj = KEY_OR_END
    _xkey = False  # the string being read is a key
    _xstack: list[str]
    _xastart = 0  # where the arguments begin in the text after the marker (``_x_step``)
    _xi = -1  # the call's index once CallStart is out
    _xid = ""
    _xname = ""
    _xnames: set[str]  # names read and accepted in this parser (``_x_step``)
    _xknown: frozenset[str] | None = None  # the catalog's name prefixes (``inline_json``)
    _xfirst: str | None = None  # the marker, where ``_x_at`` may take it (``_x_setup``)
    _fast: bool
    _starts: tuple[str, ...]
    _stops: frozenset[str]

    def _set_fast(self, on: bool) -> None:
        raise NotImplementedError

    def _feed(self, delta: str, body: Any) -> list[ParserEvent]:
        raise NotImplementedError

    def _x_setup(self, max_buffer: int | None) -> None:
        spec = SPECS.get(self.syntax)
        if spec is None or not ENABLED or self._stops or max_buffer is not None:
            return
        catalog = self._ctx.catalog
        if spec.undecided and not isinstance(catalog, AnyTool):
            # (``inline_json``'s window rejects a name no tool's begins with at once)
            self._xknown = name_prefixes(tuple(catalog))
        self._xspec = spec
        self._xmarker = spec.marker
        self._xnames = set()
        markers = self._text.markers
        if not self.syntax.once and not any(
            m != spec.marker and m.startswith(spec.marker) for m in markers
        ):
            # where the marker begins a buffer's text, ``_scan`` would take it there:
            # no longer marker begins with it, and none ends inside it (``holding``)
            self._xfirst = spec.marker if spec.marker not in self._text.holding else None

    def _x_at(self, s: str, i: int, out: list[ParserEvent]) -> bool:
        """``_feed`` found the marker at ``s[i]`` (``_xfirst``; TEXT mode, ``s[i]``
        its first marker-start character, nothing of ``s`` emitted): what ``_scan``
        does there, without the scan (a Python call and a regex search fewer for
        most calls' first delta): the character before it decides as
        there, then ``_x_open``. False: nothing done, the scan decides."""
        prev = s[i - 1] if i else self._prev[-1:]
        if prev == "`" and s[i] != "`":
            return False  # (prose quoting the marker: the scan emits it)
        if self.syntax.line_start and prev != "\n" and prev != "":
            return False
        quiet = self._quiet
        if quiet and self.syntax.quiet_markers:
            return False  # (the text before may hold one: ``_scan`` reads it there)
        self._quiet = True  # as ``_scan`` sets it for a call (``TextModes._quiet``)
        if self._x_open(s, 0, i, self._xmarker, out):
            return True
        self._quiet = quiet
        return False

    def _x_open(self, s: str, pos: int, i: int, tok: str, out: list[ParserEvent]) -> bool:
        """``_scan`` found the marker ``tok`` at ``s[i]`` (text from ``s[pos]``):
        read the call, or return False (nothing done) for the general machine."""
        if len(s) - i > _LONGEST:
            return False  # a reply in one delta: the general machine scans it in place
        n0 = len(out)
        count = self._ctx.count
        if i > pos:  # (``_emit``: no express dialect drops outer whitespace)
            out.append(TextDelta(text=s[pos:i]))
        first = s[i + len(tok) :]
        self._xraw = [tok, first]
        self._xph, self._xhold, self._xi = HEAD, "", -1
        self._opened = True
        self._mode = CALL
        self._xs = ON
        if self._x_step(first, out):
            return True
        del out[n0:]
        self._ctx.count = count
        self._x_off()
        self._mode = TEXT
        return False

    def _x_off(self) -> None:
        self._xs = OFF
        self._xraw = []
        self._xhold = ""
        self._xph = HEAD
        self._xi = -1

    def _express(self, delta: str) -> list[ParserEvent]:
        """A delta inside a call the express reader reads (the core's entry points
        call it while ``_xs`` is on, past their lane)."""
        if not delta:
            return []
        self._xraw.append(delta)
        out: list[ParserEvent] = []
        ph = self._xph
        if ph == ARGS:  # (most of a call's steps: one call less)
            hold = self._xhold
            if hold:  # (a number or literal: ``_x_args`` holds it again if it goes on)
                self._xhold = ""
                delta = hold + delta
            if self._x_args(delta, 0, 0, out):
                return out
        else:
            s = self._xhold + delta
            if ph < AFTER and s in self._xspec.holds[ph]:
                self._xhold = s  # a template still arriving, as ``_x_step`` holds it
                return out
            if ph == TAIL:  # (the call's end: one call less than through ``_x_step``)
                if self._x_tail(s, 0, out):
                    return out
            elif self._x_step(delta, out):
                return out
        return self._x_replay()

    def _x_replay(self) -> list[ParserEvent]:
        """Hand the call to the general machine: open its body and feed it the
        call's text with the same cuts; the last delta's events are returned."""
        raw = self._xraw
        if self._xi >= 0:
            self._ctx.count -= 1  # the general machine allocates it again
        self._x_off()
        tok, first = raw[0], raw[1]
        self._mode = CALL
        body = self.syntax.open(tok, self._ctx)
        assert body is not None  # (every marker of a spec opens a body)
        self._body = body
        self._prev = tok[-1]
        if first:
            self._feed(first, body)
        events: list[ParserEvent] = []
        for d in raw[2:]:
            events = self.feed(d)  # type: ignore[attr-defined]
        return events

    def _x_step(self, delta: str, out: list[ParserEvent]) -> bool:
        """Read ``delta`` (after what the reader holds); False: derail."""
        hold = self._xhold
        s = hold + delta if hold else delta
        ph = self._xph
        spec = self._xspec
        i = 0
        if ph == HEAD:
            for h in spec.heads:
                if s.startswith(h):
                    i, ph = len(h), NAME
                    self._xastart = i  # (the arguments' start, counted up to in MID)
                    break
                if h.startswith(s):
                    return self._x_hold(s, HEAD)
            else:
                return False
        if ph == NAME:
            j = s.find(spec.name_end, i)
            name = s[i:] if j < 0 else s[i:j]
            ctx = self._ctx
            if j < 0 or name not in self._xnames:
                if _NAME.fullmatch(name) is None:
                    return False
                if self._xknown is not None and name not in self._xknown:
                    return False
                if j < 0:
                    return self._x_hold(name, NAME)
                if not name or name not in ctx.catalog:
                    return False
                self._xnames.add(name)  # (this parser's next call of it skips the tests)
            n = ctx.count  # ``CallContext.allocate``, inline
            ctx.count = n + 1
            self._xi, self._xid = n, f"{ctx.id_prefix}{n}"
            self._xname = name
            out.append(CallStart(index=self._xi, id=self._xid, name=name))
            i, ph = j, MID
        if ph == MID:
            rest = s[i:]
            for m in spec.mids:
                if rest.startswith(m):
                    i += len(m) - 1
                    break
                if m.startswith(rest):
                    return self._x_hold(rest, MID)
            else:
                return False
            # the arguments' "{" at s[i]
            # (the head, the name and the template before it, from the marker's end)
            self._xastart += len(self._xname) + len(m) - 1
            self._xstack = ["{"]
            self._xj = KEY_OR_END
            self._xkey = False
            self._xhold, self._xph = "", ARGS  # (``_x_args`` leaves them be)
            return self._x_args(s, i + 1, i, out)
        if ph == ARGS:
            self._xhold = ""
            return self._x_args(s, 0, 0, out)
        if ph == TAIL:
            return self._x_tail(s, 0, out)
        # AFTER (json_action): the fence ended the call; what follows it decides
        return self._x_after(s, out)

    def _x_after(self, s: str, out: list[ParserEvent]) -> bool:
        """After ``json_action``'s closing fence: the next block's fence line (the
        general body reads it: False), its start (held, as the body holds it), or
        text (``JsonActionBody.feed``'s test, in the same order)."""
        if s.startswith(_NEXT):
            return False
        if len(s) < _NEXT_LONGEST and s in _NEXT_START:
            return self._x_hold(s, AFTER)
        if s[0] in _VARIANT_FIRST and (len(s) < _HEADS_LONGEST or s.startswith(_HEADS)):
            e = _info(s, 0)
            if e >= 0:
                return False
            if e == -1:
                return self._x_hold(s, AFTER)
        self._x_text(s, out)
        return True

    def _x_hold(self, s: str, ph: int) -> bool:
        self._xhold = s
        self._xph = ph
        self._xs = ON
        if ph <= NAME and self._xspec.undecided:
            # ``_x_held``, counted: what came after the marker is all held, from the
            # head's start (``_xastart``: the head's length once it matched) on
            held = len(self._xmarker) + len(s) + (self._xastart if ph == NAME else 0)
            if held > self.max_held:
                self.max_held = held
        elif ph == AFTER and len(s) > self.max_held:
            self.max_held = len(s)
        return True

    def _x_held(self) -> int:
        """``Parser.held`` in a call the reader reads: an undecided body's text
        (``inline_json``'s, before its name) is held-back text."""
        if self._xph <= NAME and self._xspec.undecided:
            return sum(map(len, self._xraw))
        return len(self._xhold) if self._xph == AFTER else 0

    def _x_args(self, s: str, i: int, a: int, out: list[ParserEvent]) -> bool:
        """The arguments in ``s[i:]``, their text from ``s[a]`` on not emitted yet."""
        st, key, stack = self._xj, self._xkey, self._xstack
        n = len(s)
        while i < n:
            if st == STR:
                q = s.find('"', i)
                seg = s[i:] if q < 0 else s[i:q]
                if "\\" in seg or not seg.isprintable():
                    return False
                if q < 0:
                    break
                i = q + 1
                st = COLON if key else NEXT
                continue
            c = s[i]
            if c == " ":
                i += 1
                continue
            if st == NEXT:
                if c == ",":
                    st = KEY if stack[-1] == "{" else VALUE
                elif c == ("}" if stack[-1] == "{" else "]"):
                    stack.pop()
                    if not stack:
                        if i + 1 > a:
                            out.append(ArgsDelta(index=self._xi, id=self._xid, delta=s[a : i + 1]))
                        return self._x_tail(s, i + 1, out)
                else:
                    return False
            elif st == COLON:
                if c != ":":
                    return False
                st = VALUE
            elif st == KEY or st == KEY_OR_END:
                if c == '"':
                    st, key = STR, True
                elif c == "}" and st == KEY_OR_END:
                    stack.pop()
                    if not stack:
                        if i + 1 > a:
                            out.append(ArgsDelta(index=self._xi, id=self._xid, delta=s[a : i + 1]))
                        return self._x_tail(s, i + 1, out)
                    st = NEXT
                else:
                    return False
            else:  # VALUE, VALUE_OR_END
                if c == '"':
                    st, key = STR, False
                elif c == "{" or c == "[":
                    if len(stack) >= _MAX_DEPTH:
                        return False
                    stack.append(c)
                    st = KEY_OR_END if c == "{" else VALUE_OR_END
                elif c == "]" and st == VALUE_OR_END:
                    stack.pop()
                    st = NEXT
                else:
                    # a number or literal: held until the character after it
                    if c in "tfn":
                        e = i
                        for lit in _LITERALS:
                            if s.startswith(lit, i):
                                e = i + len(lit)
                                break
                            if lit.startswith(s[i:]):
                                e = n
                                break
                        else:
                            return False
                    elif c in "-0123456789":
                        m = _NUMBER_RUN.match(s, i)
                        assert m is not None
                        e = m.end()
                        if e < n and _NUMBER.fullmatch(s, i, e) is None:
                            return False
                    else:
                        return False
                    if e == n:
                        if e - i > _TOKEN:
                            return False
                        if i > a:
                            out.append(ArgsDelta(index=self._xi, id=self._xid, delta=s[a:i]))
                        self._xj, self._xkey = st, key
                        return self._x_hold(s[i:], ARGS)
                    if s[e] not in _AFTER_VALUE:
                        return False
                    i, st = e, NEXT
                    continue
            i += 1
        if n > a:
            out.append(ArgsDelta(index=self._xi, id=self._xid, delta=s[a:]))
        self._xj, self._xkey = st, key  # (``_xph`` is ARGS, nothing held: the callers')
        self._xs = LANE if st == STR else ON
        return True

    def _x_tail(self, s: str, i: int, out: list[ParserEvent]) -> bool:
        """After the arguments' ``}`` at ``s[i - 1]``: the tail, then the call's end."""
        rest = s[i:]
        for t in self._xspec.tails:
            if rest.startswith(t):
                break
            if t.startswith(rest):
                return self._x_hold(rest, TAIL)
        else:
            return False
        end = i + len(t)
        raw = self._xraw
        text = "".join(raw)
        cut = len(text) - len(s) + end  # the call's end in ``text``
        at = len(raw[0]) + self._xastart
        try:
            arguments = _decode(text[at : cut - len(t)])
        except (msgspec.DecodeError, RecursionError):
            return False
        name = self._xname
        ctx = self._ctx
        if ctx.checks and ctx.catalog.check_arguments(name, arguments) is not None:
            return False
        call_raw = text[:cut] if cut < len(text) else text
        out.append(CallEnd(index=self._xi, id=self._xid, name=name, arguments=arguments,
                           raw=call_raw))
        prev = call_raw[-1]
        self._prev = prev if prev != "`" else CALL_END
        after = s[end:]
        if self._xspec.after:
            return self._x_after(after, out)
        self._x_text(after, out)
        return True

    def _x_text(self, after: str, out: list[ParserEvent]) -> None:
        """The call is over: ``after`` is text, read as ``_run`` reads text after
        a call's end (at once where no marker or stop string can start in it)."""
        # (``_x_off`` but for the state ``_x_open`` sets again: every call's end
        # passes here; no express dialect drops outer whitespace, so ``_ws`` is
        # empty, the fast path applies and ``_emit_text`` is one ``TextDelta``)
        self._xs = OFF
        self._xraw = []
        self._mode = TEXT
        if after:
            if len(after) <= _SHORT_REST:
                for c in self._starts:
                    if c in after:
                        break
                else:
                    out.append(TextDelta(text=after))
                    # (``_emit_text``: the call set ``_quiet``; text after it clears it)
                    self._quiet = after.isspace()
                    self._prev = after[-1]
                    self._set_fast(True)
                    return
            out += self._feed(after, None)
        else:
            self._set_fast(True)
