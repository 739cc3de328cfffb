"""The parser's text and reasoning modes: the scan for markers and stop strings.

Theory of operation
-------------------
``TextModes`` is the base of ``core.Parser`` that holds what the modes TEXT,
THINK and THINK_START do with a buffer (the mode table and the decisions are
in the ``core`` docstring): ``_scan`` finds the next marker or stop string with
the mode's ``MarkerScan``, emits the text before it and switches mode (a call
body opens, reasoning begins or ends, the parser stops), or holds the tail that
may still become one; ``_rejected`` rescans a body that turned out to be prose.
They live apart from ``feed`` so that the per-delta entry points have room to
be written out in full (a call between them would cost every delta).
"""

from __future__ import annotations

import re

from streamtools.errors import SizeLimitExceeded
from streamtools.events import ParserEvent, ReasoningDelta, TextDelta
from streamtools.parser.calls import CallBody, CallContext, DialectSyntax
from streamtools.parser.markers import MarkerScan, marker_scan

__all__ = ["CALL", "CALL_END", "STOPPED", "TEXT", "THINK", "THINK_CLOSE", "THINK_OPEN",
           "THINK_START", "TextModes"]

# THINK_START (after STOPPED: ``_run`` tells it apart from both with the one test it
# makes anyway): reasoning that ``think_open`` began, before anything but whitespace
TEXT, THINK, CALL, STOPPED, THINK_START = 0, 1, 2, 3, 4
_SPACE = re.compile(r"\s*")
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
# ``_prev`` after a call whose markup ends in a backtick (json_action's closing
# fence): a marker right after a backtick is prose (`` `<think>` `` quotes the
# tag), but the fence's backtick quotes nothing, and ``<think>`` right after it is
# reasoning, as after ``</tool_call>``. No character a rule reads (not a backtick,
# not a line start: ``@tool`` right after a call is still not at one).
CALL_END = "\x00"


class TextModes:
    """The text and reasoning modes of ``core.Parser`` (its base)."""

    # the parser's state (``core.Parser.__init__`` sets it)
    syntax: DialectSyntax
    examined: int
    max_held: int
    _body: CallBody | None
    _ctx: CallContext
    _held: str
    _max_buffer: int | None
    _mode: int
    _opened: bool
    _prev: str
    # stop strings holding a whole marker, found on first use (``_prose_stop_list``)
    _prose_stops: tuple[str, ...] | None = None
    # text before an undecided body's marker that may begin such a stop string,
    # held until the body decides (``_pend``), and where its events go in ``out``
    _pending = ""
    _pending_at = 0
    # the undecided body while the text before it is pending, between feeds: ``_body``
    # is None then, so every entry point's first in-call test sends the delta to
    # ``_feed`` (``core``), which gives it to ``_feed_pending``
    _pbody: CallBody | None = None
    # a stop string that may hold a rejected body's marker and another after it,
    # which ends first (``_stop_after_prose``): where it begins, and where the scan
    # that follows searches from (the text between is not emitted yet)
    _blocked = -1
    _skip = -1
    _stop_hit: str | None
    _stops: frozenset[str]
    _text: MarkerScan
    _think: MarkerScan
    _think_close: MarkerScan
    _ws: list[str]
    # the marker the express reader takes (``express``; "" while it is off)
    _xmarker = ""
    # ``_text`` with the dialect's ``quiet_markers``, built on first use (``_scan``)
    _qtext: MarkerScan | None = None
    # nothing but whitespace has been shown since the reply began, a call opened or
    # reasoning closed: ``<think>`` opens reasoning only then (``core``'s Decisions).
    # Cleared by ``_emit_text``, the one way text leaves the slow paths; the fast
    # paths are off while it is set (``core.Parser._set_fast``), so it is exact
    _quiet = True

    def _x_open(self, s: str, pos: int, i: int, tok: str, out: list[ParserEvent]) -> bool:
        return False  # (``express.Express`` reads the call)

    def _think_start(self, s: str, pos: int, final: bool) -> None:
        """THINK_START (``think_open``): reasoning, and nothing but whitespace so
        far. ``s[pos:]`` either still may open with ``<think>`` after its
        whitespace (all of it is whitespace, ``<think>`` follows, or the start of
        one that may still arrive): the mode stays, and ``_scan`` with its tables
        (``<think>`` among the markers) drops that tag as the markup it is; or it
        holds something else, and the reasoning has begun: plain THINK."""
        i = _SPACE.match(s, pos).end()  # type: ignore[union-attr]
        rest = len(s) - i
        if rest and not s.startswith(THINK_OPEN, i):
            if final or rest >= len(THINK_OPEN) or not THINK_OPEN.startswith(s[i:]):
                self._mode = THINK
                self._think = self._think_close

    def _rejected(
        self, text: str, s: str, k: int, out: list[ParserEvent], final: bool
    ) -> tuple[str, int]:
        """A body turned out to be prose: the first character of its ``text`` is
        text, the rest is scanned again, then ``s[k:]``. Returns what to scan
        from where (-1: nothing, a stop string that begins with the marker was
        hit or is held, see ``_stop_after_prose``). When ``text`` ends ``s[:k]``
        (the body began in this input, as all but the first of a delta's bodies
        do) the scan goes back in ``s``: copying ``s[k:]`` for each rejected body
        would make one large delta cost time quadratic in their number."""
        self._body = None
        self._mode = TEXT
        self._opened = False  # it was no call: a ``once`` dialect may still open one
        self.examined += len(text) - 1  # the rescan; bounded by the decision window
        start = k - len(text)
        inside = start >= 0 and s.startswith(text, start)
        p = self._pending
        if p:
            self._unpend()
            inside = inside and start >= len(p) and s.startswith(p, start - len(p))
        if self._stops:
            r, j = (s, start) if inside else (p + text + s[k:], len(p))
            # the text before the marker went out when the body opened, but for
            # ``p``, which may begin a stop string holding it (``_pend``): a stop
            # string can only begin there or at the marker (``_stop_after_prose``)
            lo = j - len(p)
            h = self._stop_after_prose(r, j, lo, self._text, final)
            if h >= 0:
                if h > lo:
                    self._emit_text(r[lo:h], out)
                if self._held:
                    # the marker opens a body again when the held text comes back:
                    # what came before it allowed that ("" allows every marker)
                    self._prev = "" if h == j or h == 0 else r[h - 1]
                return r, -1
            h, self._blocked = self._blocked, -1
            if h >= 0:
                # a marker after this one ends before the stop string that begins
                # at ``r[h]``: its body decides, and the stop string counts if it is
                # prose too; the scan goes on after this marker, its text from ``h``
                # not emitted yet (``_scan``'s ``_skip``)
                if h > lo:
                    self._emit_text(r[lo:h], out)
                self._skip = j + 1
                return r, h
        self._emit_text(p + text[0], out)
        self._prev = text[0]
        if inside:
            return s, start + 1
        return text[1:] + s[k:], 0

    def _scan(self, s: str, pos: int, out: list[ParserEvent], final: bool) -> int:
        """Text or reasoning: emit what is certain; return where a new mode starts,
        or -1 once ``s`` is used up (its undecidable tail held)."""
        think = self._mode != TEXT  # THINK, or THINK_START
        scan = self._think if think else self._text
        syntax = self.syntax
        quiet = syntax.quiet_markers
        if quiet and self._quiet and not think:
            # the places ``<think>`` may open: the quiet markers count too (their start
            # character is not the dialect's, so the fast path, off here, never tests it)
            scan = self._qtext or self._quiet_text()
        start = pos  # the character before it is ``_prev``'s (``CALL_END`` after a call)
        search = pos
        if self._skip >= 0:  # (after ``_rejected``: a stop string may begin before)
            search, self._skip = self._skip, -1
        while True:
            m = scan.rx.search(s, search)
            if m is None:
                break
            i, tok = m.start(), m.group()
            if tok in scan.holding:  # another marker may end first inside it
                i, tok = scan.first_to_end(s, i, m.end())
            if tok in self._stops:
                self._emit(s[pos:i], think, out)
                self._stop_hit = tok
                self._mode = STOPPED
                self._held = ""
                return -1
            prev = s[i - 1] if i > start else self._prev[-1:]
            if think:
                if prev != "`":
                    self._emit(s[pos:i], True, out)
                    self._prev = tok[-1]
                    self._quiet = True
                    if self._mode == THINK_START:
                        self._think = self._think_close
                        if tok == THINK_OPEN:  # the template's tag, written again: markup
                            self._mode = THINK
                            return i + len(tok)
                    self._mode = TEXT
                    return i + len(tok)
            elif tok == THINK_OPEN:
                if prev != "`" and self._quiet and (i == pos or s[pos:i].isspace()):
                    self._emit(s[pos:i], False, out)
                    self._mode = THINK
                    self._prev = tok[-1]
                    return i + len(tok)
            elif (
                (prev != "`" or tok[0] == "`")
                and not (syntax.line_start and prev not in ("", "\n"))
                and not (syntax.once and self._opened)
                and (
                    not quiet or tok not in quiet
                    or (self._quiet and (i == pos or s[pos:i].isspace()))
                )
            ):
                if tok == self._xmarker and not final:
                    # the text before goes out first: the call sets ``_quiet``, and
                    # text after it in this delta clears it again
                    self._emit(s[pos:i], False, out)
                    pos = i
                    self._quiet = True
                    if self._x_open(s, pos, i, tok, out):
                        return -1
                body = syntax.open(tok, self._ctx)
                if body is not None:
                    h = i
                    if self._stops and body.undecided:
                        h = self._stop_start(s, i, tok, pos)
                    self._emit(s[pos:h], False, out)
                    if h < i:
                        self._pend(s[h:i], len(out))
                    self._opened = True
                    self._quiet = True  # (what follows a call may open reasoning)
                    self._body = body
                    self._mode = CALL
                    return i + len(tok)
            # not a marker here: its first character is plain text
            if self._stops:
                k = self._stop_after_prose(s, i, pos, scan, final)
                if k >= 0:
                    self._emit(s[pos:k], think, out)
                    if self._stop_hit is None:
                        self._hold(s, k, start)
                    return -1
                if self._blocked >= 0:
                    # a marker after this one ends before a stop string that begins
                    # at ``s[_blocked]``: it decides; the text from there waits
                    self._emit(s[pos : self._blocked], think, out)
                    pos, self._blocked = self._blocked, -1
                    search = i + 1
                    continue
            self._emit(s[pos : i + 1], think, out)
            pos = search = i + 1
        n = len(s)
        h = n
        if not final:
            if scan is self._qtext and not self._quiet:
                scan = self._text  # text came: the quiet markers are prose from here on
            c = scan.start_rx.search(s, max(pos, n - scan.longest + 1))
            while c is not None:
                t = c.start()
                if s[t:] in scan.prefixes:
                    h = t
                    break
                c = scan.start_rx.search(s, t + 1)
        self._emit(s[pos:h], think, out)
        self._hold(s, h, start)
        if self._max_buffer is not None and n - h > self._max_buffer:
            raise SizeLimitExceeded(f"held text exceeds max_buffer={self._max_buffer} characters")
        return -1

    def _quiet_text(self) -> MarkerScan:
        """``_text`` with the dialect's ``quiet_markers`` (``_scan``), built once."""
        # (sorted: ``marker_scan`` is cached by its argument, shared by every parser)
        self._qtext = marker_scan((*sorted(self._text.markers), *self.syntax.quiet_markers))
        return self._qtext

    def _stop_after_prose(
        self, s: str, j: int, lo: int, scan: MarkerScan, final: bool
    ) -> int:
        """The marker at ``s[j]`` is prose (a backtick before it, or its body
        rejected), so a stop string holding it, which lost to the marker because
        the marker ends first, counts after all, as it would for a provider: one
        beginning with it (``{"`` in ``inline_json``) or with text before it
        (`` `<tool_call>` `` after a backtick), that text not yet emitted (from
        ``s[lo]`` on). Returns where such a stop string begins, -1 if none does:
        it is there (the one to end first, the parser stops) or may still arrive
        (``s[k:]`` is its start: the caller holds it, at most the stop string's
        length, re-examined like a held marker). A marker or stop string that
        ends inside it after the prose marker is left to the scan from
        ``s[j + 1]``. Only stop strings holding a whole marker are tried
        (``_prose_stops``: usually none), on this path only, which a prose
        marker takes."""
        stops = self._prose_stop_list()
        self._blocked = -1
        n = len(s)
        hit: tuple[int, int, str] | None = None  # (end, start, stop) of the first to end
        held = n
        for t in stops:
            for k in range(max(lo, j - len(t) + 1), j + 1):
                e = k + len(t)
                if s.startswith(t, k):
                    if hit is None or (e, k) < hit[:2]:
                        hit = (e, k, t)
                    break
                if not final and e > n and k < held and s.startswith(t[: n - k], k):
                    held = k
        if hit is not None:
            e, k, t = hit
            if scan.rx.search(s, j + 1, e - 1) is not None:
                self._blocked = k  # (read by ``_rejected``)
                return -1  # something ends before it: the scan finds that
            self._stop_hit = t
            self._mode = STOPPED
            self._held = ""
            return k
        if held < n:
            self._held = s[held:]
            return held
        return -1

    def _prose_stop_list(self) -> tuple[str, ...]:
        """The stop strings holding a whole marker (usually none), found once."""
        stops = self._prose_stops
        if stops is None:
            tags = (*self.syntax.markers, THINK_OPEN, THINK_CLOSE)
            stops = self._prose_stops = tuple(
                sorted(t for t in self._stops if t not in tags and any(m in t for m in tags))
            )
        return stops

    def _stop_start(self, s: str, i: int, tok: str, lo: int) -> int:
        """The marker ``tok`` at ``s[i]`` opens an undecided body, which may
        still be rejected (prose): then a stop string holding the marker that
        begins in the text before it counts (``_stop_after_prose``), so that
        text must not go out yet. Returns where the first such stop string may
        begin, in ``s[lo:i]`` (text not yet emitted) and agreeing with the text
        after the marker so far; ``i`` if none may. Per call opened, and only
        with stop strings."""
        h = i
        e = i + len(tok)
        for t in self._prose_stop_list():
            for k in range(max(lo, i - len(t) + len(tok)), h):
                d = i - k
                if s.startswith(t[:d], k) and t.startswith(tok, d):
                    after = t[d + len(tok) :]
                    if s.startswith(after[: len(s) - e], e):
                        h = k
                        break
        return h

    def _pend(self, text: str, at: int) -> None:
        """Hold ``text``, the start of a stop string holding the marker of the
        undecided body just opened (``_stop_start``), until the body decides:
        a call, it is text before the call's events (``_settle``); prose, it is
        scanned again with the body's text (``_rejected``). At most the stop
        string's length. Between feeds the body is put aside (``_detach``), so
        that no fast path takes a delta that may decide it; ``_feed_pending``
        takes the next one."""
        self._pending = text
        self._pending_at = at

    def _detach(self) -> None:
        """The feed is over with text pending and the body undecided: aside."""
        self._pbody = self._body
        self._body = None

    def _unpend(self) -> None:
        self._pending = ""

    def _settle(self, out: list[ParserEvent]) -> None:
        """The body decided it is a call: the held text goes out before its events."""
        text = self._pending
        self._unpend()
        events: list[ParserEvent] = []
        quiet = self._quiet  # (the text came before the call, which set it)
        self._emit_text(text, events)
        self._quiet = quiet
        out[self._pending_at : self._pending_at] = events

    def _emit(self, text: str, think: bool, out: list[ParserEvent]) -> None:
        if text:
            if think:
                out.append(ReasoningDelta(text=text))
            else:
                self._emit_text(text, out)

    def _emit_text(self, text: str, out: list[ParserEvent]) -> None:
        if self._quiet and text and not text.isspace():
            self._quiet = False
        if self.syntax.drop_outer_whitespace:
            # trailing whitespace waits: it is dropped if the object or the end follows
            kept = text.rstrip()
            if not kept:
                self._ws.append(text)
                return
            tail = text[len(kept) :]
            if self._ws:
                kept = "".join(self._ws) + kept
            self._ws = [tail] if tail else []
            text = kept
        out.append(TextDelta(text=text))

    def _hold(self, s: str, k: int, start: int) -> None:
        """Hold ``s[k:]``; the scan began at ``s[start]``, whose ``_prev`` stands
        (``CALL_END``) when nothing was emitted since."""
        self._held = s[k:]
        if k > start:
            self._prev = s[k - 1]
