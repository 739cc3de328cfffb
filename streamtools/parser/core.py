"""The incremental parser: text mode, reasoning, stop sequences, call dispatch.

Theory of operation
-------------------
``Parser`` is sans-IO (after h11): ``feed(delta)`` returns the events that text
makes certain, ``end(finish_reason)`` flushes and closes. It has five modes:

===========  ===========================================  ============================
mode         scans for                                    on match
===========  ===========================================  ============================
TEXT         dialect markers, ``<think>``, stop strings   CALL / THINK / STOPPED
THINK        ``</think>``, stop strings                   TEXT / STOPPED
CALL         (the dialect's ``CallBody`` consumes input)  TEXT when the body is done
STOPPED      nothing: later input is ignored              -
THINK_START  ``<think>``, ``</think>``, stop strings      THINK / TEXT / STOPPED
===========  ===========================================  ============================

A parser starts in TEXT, or with ``think_open`` in THINK_START: reasoning, until
something other than whitespace or the start of ``<think>`` arrives (THINK).

Text and reasoning are released as soon as they cannot be the start of a marker
or stop string: after a full-marker search (one compiled alternation, so
``str``-speed scanning, no per-character Python loop) only the longest suffix
that is a proper prefix of some marker is held, i.e. at most ``longest marker -
1`` characters. A delta with no marker-start character while nothing is held is
returned whole as one ``TextDelta`` (the fast path: one or two ``in`` tests);
a buffer that is only the start of a marker (``<to`` + ``ol_c``) is held
without a scan, and so is one whose first marker-start character begins such a
start (``prose <tool_``: the prose is released); text after a call's end that
holds no marker-start character is released without a scan too.

Held text is prepended to the next delta; it is short, so re-examining it costs
O(longest marker) per delta and the whole parse stays O(input). Call bodies use
the same mechanism to wait for partial escapes or closing markers. Inside a call,
``CallBody.fast`` takes string content, keys and punctuation without the body's
full machine, leaving a cut escape in ``rest`` for the core to hold. Shorter
still is the lane, for most of a call's deltas: while the body's ``streaming``
says a string argument (or a text member) is open and nothing is held, a delta
with no quote, backslash or unprintable character (in ``am_xml`` no markup or
entity either) is that string's text, and ``feed`` takes it without calling the
body.

A call in the canonical spelling of ``hermes``, ``json_action``, ``command`` or
``inline_json`` is read without a body by the express reader (``express``; the
entry points' ``_xs`` test), which hands it to the general machine, replaying its
deltas, at the first thing it does not follow; it holds what the body would.
``am_xml``'s canonical call has one of its own (``express_xml``, with a lane of
its own in ``feed``, the one entry point ``am_xml`` uses).

Per delta, the fast paths cost little more than what any ``feed`` returning a
new list of one event costs in CPython (``bench/parser.py`` prints both); the
rest of a call (markers, keys, punctuation, the closing decode) runs the full
machines, a few microseconds per call.

Decisions
---------
* ``<think>``/``</think>`` work in every dialect. ``<think>`` opens reasoning
  only where nothing but whitespace has been shown since the reply began, a call
  opened, or reasoning closed (``TextModes._quiet``); after anything else it is
  text, with the rest of the reply: a model naming the tag in its answer, or a
  small model echoing it, would otherwise hide the whole rest of the answer as
  reasoning. llama.cpp reads ``<think>`` only at the start of the message,
  Ollama only before any non-whitespace; this parser also after a call or a
  ``</think>`` (models that think between calls). The fast paths are off while
  ``<think>`` may still open (one slow delta per reply start and per call end
  that ends a delta: +32 slow deltas in 17,234 on the hermes bench corpus,
  about +0.8M instructions per parse of 71M, 1.1%, by callgrind in steady state).
  A dialect's quiet markers (``hermes``' ``[TOOL_CALLS]``, ``mistral_call``)
  count only there too: their start character is then never the fast path's
  (the scans there search a larger alternation: about +0.5M more, 0.7%).
  The tags are markup, like call markers: ``ReasoningDelta`` carries only what is
  between them, so conservation holds for every character except the think tags
  (an empty ``<think></think>`` leaves no event; to restore the text, wrap each
  run of reasoning in the tags). Markup inside reasoning is reasoning. An orphan
  ``</think>`` is text.
* ``think_open=True`` is for models whose chat template ends the prompt with
  ``<think>`` (DeepSeek-R1 and its distills, QwQ, Qwen3 thinking templates): the
  reply begins inside reasoning, ``reasoning…</think>answer``. What comes before
  ``</think>`` is ``ReasoningDelta`` and is never parsed for calls; the
  ``</think>`` is markup, not an orphan. A reply that writes ``<think>`` itself
  as well (some templates and models do both), with nothing but whitespace
  before it, shows no stray tag: it is markup, like the template's, and the
  whitespace before it is reasoning. A ``<think>`` after anything else is
  reasoning, as markup inside reasoning always is. A reply that ends before
  ``</think>`` (cut by ``max_tokens``, or a model that never closes it) is all
  reasoning, as an unclosed ``<think>`` is without the option, and as vLLM's
  ``deepseek_r1``, SGLang's ``force_reasoning`` and llama.cpp's
  ``thinking_forced_open`` read it. Off (the default), nothing changes and no
  path a delta takes does more work: the option only sets the mode a parser
  starts in (and each ``</think>`` pays one test).
* A marker directly after a backtick is prose quoting the syntax (`` `<tool_call>` ``)
  and stays text (except a marker that is itself a fence of backticks). A call's
  own closing fence quotes nothing: ``<think>`` right after it is reasoning.
* Stop strings apply to visible text and reasoning, not inside call bodies: the
  text of a call is content (a provider applying the stop server-side already cut
  the stream; see ``end``). The stop string and everything after it is dropped and
  reported in ``Finish.stop_sequence``. Where stop strings overlap each other or
  a marker, the one that ends first decides (``ST`` before ``STOP``, ``<th``
  before ``<think>``), as it does when text arrives a character at a time and
  as a provider cutting at its stop strings would; a marker that turns out to
  be prose (its body rejected, a backtick before it) does not hide a stop
  string that holds it (``{"`` in ``inline_json``; ``ab{"q`` on ``say ab{"q": 1}``:
  text before a marker whose body is still undecided that may begin such a stop
  string is held until the body decides, ``TextModes._pend``; where a second
  marker inside the stop string ends first, its body decides in turn). ``stop``
  is one string or a
  sequence of strings (a str is never split into characters); an empty stop
  string is caller misuse (``UsageError``: it would stop before the first
  character).
* ``end(finish_reason)``: ``Finish.reason`` is ``finish_reason or "stop"``. A call
  still open completes only when ``finish_reason`` says the provider stopped on
  purpose (``"stop"`` or ``"stop_sequence"``: it removed the dialect's closing
  marker as a stop sequence) and the body is complete; otherwise, including
  ``None`` (a stream that broke before its finish), it is
  ``CallError(reason="unterminated")``.
* ``max_buffer`` caps the characters held at once (held text plus an open call's
  raw text); exceeding it raises ``SizeLimitExceeded`` and the parser is closed.
* Hold-back exceptions, stated by their dialects: ``inline_json`` holds a ``{``
  until the tool name is decided (``56 + longest name``; ``152 +`` it with a
  catalog, whose window also reads Llama's ``"type": "function"`` forms and
  OpenAI's ``functions.`` before a name),
  ``json_action`` a fence line (``HOLD_BOUND``), ``json_object`` whitespace next
  to the reply object, ``hermes`` and ``am_xml`` a bare Qwen3-Coder ``<function=``
  until its name's ``>`` (74, ``qwen_bare``), a ``<function_calls>`` opener
  until its first ``<invoke`` (51, ``xml_invoke``), and ``hermes`` Gemma 4's
  ``<|tool_call>`` until its ``call:NAME{`` (81, ``gemma_call``) and Kimi K2's
  ``<|tool_calls_section_begin|>`` (and DeepSeek's ``<｜tool▁calls▁begin｜>``) until
  its ``<|tool_call_begin|>`` (62, ``kimi_call``); gpt-oss's ``<|channel|>`` is held
  until its ``commentary to=`` (24, ``harmony_call``) and ``<|start|>`` until its
  ``assistant to=`` (21), within the longest marker.

Instrumentation (cheap, for tests and the bench): ``held`` (characters that may
still become text), ``max_held`` (its maximum after any feed) and ``examined``
(characters handed to the scanners, counting re-examined held text: the work
measure behind the linear-time tests; deltas a fast path passes on whole, after
C-level ``in`` tests only, are not counted).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from streamtools.errors import ParserStateError, SizeLimitExceeded, UsageError
from streamtools.events import ArgsDelta, Finish, ParserEvent, TextDelta
from streamtools.parser.calls import (
    DONE,
    REJECTED,
    RUNNING,
    XML_ARGS,
    Call,
    CallBody,
    CallContext,
    DialectSyntax,
)
from streamtools.parser.catalog import AnyTool, NamedTools, ToolCatalog, as_catalog
from streamtools.parser.envelope import ARGS
from streamtools.parser.express import LANE
from streamtools.parser.express_xml import XLANE, XmlCall
from streamtools.parser.many_starts import ManyStarts
from streamtools.parser.markers import marker_scan, stop_strings, syntax_of
from streamtools.parser.textmode import (
    CALL,
    CALL_END,
    STOPPED,
    TEXT,
    THINK_CLOSE,
    THINK_OPEN,
    THINK_START,
)

__all__ = ["Parser"]

# the longest text after a call's end that is tested for marker-start characters
# before the scan (a longer rest, from a whole reply in one delta, goes to the scan:
# testing all of it after each call would cost time quadratic in the calls)
_SHORT_REST = 64
_MODE_NAMES = ("TEXT", "THINK", "CALL", "STOPPED", "THINK_START")


class Parser(ManyStarts):
    """Incremental tool-call parser for one model reply (see the module docstring)."""

    def __init__(
        self,
        dialect: str | DialectSyntax,
        tools: Iterable[str] | ToolCatalog | None = None,
        stop: str | Sequence[str] | None = (),
        *,
        id_prefix: str = "call_",
        max_buffer: int | None = None,
        think_open: bool = False,
    ) -> None:
        self.syntax = syntax_of(dialect)
        catalog = as_catalog(tools)
        checks = not isinstance(catalog, (AnyTool, NamedTools))
        self._ctx = CallContext(catalog, id_prefix, checks=checks)
        self._stops = stop_strings(stop)
        stops = tuple(sorted(self._stops))
        self._text = marker_scan((*self.syntax.markers, THINK_OPEN, *stops))
        self._think = marker_scan((THINK_CLOSE, *stops))
        self._think_close = self._think  # ``_think`` again once THINK_START is over
        self._max_buffer = max_buffer
        self._mode = TEXT
        self._held = ""
        self._prev = ""  # ends with the input character just before the current buffer
        self._body: CallBody | None = None
        self._stop_hit: str | None = None
        self._opened = False  # a call has been opened (for ``once`` dialects)
        # whitespace held under ``drop_outer_whitespace``, in pieces (joined, a long
        # run would be copied again with each delta)
        self._ws: list[str] = []
        self._closed: str | None = None  # why no more input is accepted
        # The fast path tests a delta for marker-start characters with ``in``, the
        # cheapest test CPython has. Every dialect has "<" (``<think>``); some have
        # one other start character; stop strings may add more. ``_one`` is "<" for a
        # dialect with no other; ``_lt`` and ``_other`` are "<" and the other one for
        # a dialect with two. Each is "" while it does not apply, the fast path is
        # off or there are more (then a loop over ``_starts``): "" is in every string,
        # so the one test says both "on" and "no marker can start here". Three entry
        # points, ``feed`` (``_one``), ``_feed_two`` (``_lt``, ``_other``) and
        # ``_feed_many`` (no test: ``_feed`` loops), not one with all branches,
        # because one test more per delta is ~10% of the path.
        self._starts = tuple(sorted({m[0] for m in self._text.markers}))
        others = [c for c in self._starts if c != "<"]
        self._many = len(others) > 1
        self._others = "".join(others)  # the one other start character, unless many
        # the quiet markers' (``TextModes._quiet``) for the text after a call, which
        # is where they count; never the fast path's (it is off where they count)
        self._starts += tuple({m[0] for m in self.syntax.quiet_markers} - set(self._starts))
        self._fast = False  # TEXT mode, nothing held: the fast path applies
        self._one = self._lt = self._other = ""
        self._set_fast(not self.syntax.drop_outer_whitespace and not think_open)
        if think_open:
            # the reply begins inside reasoning; until more than whitespace has come
            # it may still write the opening tag itself, which the THINK scan (the
            # mode's tables are in ``_think`` for ``_feed`` and ``_scan``) must see
            self._mode = THINK_START
            self._think = marker_scan((THINK_OPEN, THINK_CLOSE, *stops))
        # this dialect's entry point (a bound method in the instance, which is
        # one reason ``__copy__`` refuses: a copy would feed the original)
        if self._many:
            self.feed = self._feed_many  # type: ignore[method-assign]
        elif others:
            self.feed = self._feed_two  # type: ignore[method-assign]
        self._x_setup(max_buffer)
        self.max_held = 0  # the largest ``held`` after any feed (for tests and the bench)
        # characters handed to the scanning loop (delta plus held text): the work
        # measure tests use to prove linear time without timing anything
        self.examined = 0

    # -- public API -------------------------------------------------------------

    def __copy__(self) -> Parser:
        raise UsageError("a Parser holds one stream's state and cannot be copied; make a new one")

    def __deepcopy__(self, memo: object) -> Parser:
        return self.__copy__()

    @property
    def stopped(self) -> bool:
        """A user stop sequence was hit; later ``feed`` calls return ``[]``."""
        return self._stop_hit is not None

    @property
    def held(self) -> int:
        """Characters received that may still become visible text or reasoning."""
        if self._xs:
            return self._x_held()
        body = self._body or self._pbody
        if body is not None:
            return body.size + len(self._held) + len(self._pending) if body.undecided else 0
        return len(self._held)

    def feed(self, delta: str) -> list[ParserEvent]:
        """Consume one delta of model text; return the events it makes certain."""
        if self._one not in delta and delta:
            # the fast path, for dialects whose only marker-start character is "<"
            # (the test order lets a delta inside a call, where ``_one`` is "", fail
            # it with one test)
            self._prev = delta
            return [TextDelta(text=delta)]
        body = self._body
        if body is None:
            xs = self._xs
            if xs:  # the express reader's call (``express``): its lane, or its step
                if (
                    xs == LANE and '"' not in delta and "\\" not in delta
                    and delta.isprintable() and delta
                ):
                    self._xraw.append(delta)
                    return [ArgsDelta(index=self._xi, id=self._xid, delta=delta)]
                if xs >= XLANE:  # ``am_xml``'s (``express_xml``): no markup or entity either
                    if (
                        xs == XLANE and '"' not in delta and "\\" not in delta
                        and "<" not in delta and "&" not in delta and delta.isprintable() and delta
                    ):
                        st: XmlCall = self._xst  # type: ignore[assignment]
                        st.raw.append(delta)
                        st.args.append(delta)
                        return [ArgsDelta(index=st.i, id=st.id, delta=delta)]
                    return self._xm_express(delta)
                return self._express(delta)
            return self._feed(delta, None)
        streaming = body.streaming
        if (
            streaming
            and '"' not in delta
            and "\\" not in delta
            and delta.isprintable()
            and delta
            and not self._held
        ):
            # the lane: plain text in the string the body says is open
            if streaming == ARGS or (
                streaming == XML_ARGS and "<" not in delta and "&" not in delta
            ):
                body.raw.append(delta)
                call: Call = body.call  # type: ignore[attr-defined]
                call.args.append(delta)  # Call.add_args, inline: most deltas of a call
                if self._max_buffer is not None:  # (``size`` is read only then here)
                    body.size += len(delta)
                    self._check_call_size(body, self._max_buffer)
                return [ArgsDelta(index=call.index, id=call.id, delta=delta)]
            if streaming != XML_ARGS:
                return self._lane_text(body, streaming, delta)
        if delta:
            # the body's fast paths: string content, keys, punctuation (held text
            # included: the body stopped before it at a safe cut, in the same state),
            # and first what it holds whole by one lookup (``CallBody.holds``)
            s = self._held + delta if self._held else delta
            if s in body.holds:
                self._held = s  # as ``fast`` would hold it, without the call
                if body.undecided:
                    self._note_held(body)
                if self._max_buffer is not None:
                    self._check_call_size(body, self._max_buffer)
                return []
            fast = body.fast(s)
            if fast is not None:
                self._held = body.rest
                if body.undecided:  # text held back (inline_json's window): measured
                    self._note_held(body)
                if self._max_buffer is not None:
                    self._check_call_size(body, self._max_buffer)
                return fast
        return self._feed(delta, body)

    def _feed_two(self, delta: str) -> list[ParserEvent]:
        """``feed`` for a dialect with one marker-start character besides "<"
        (installed per instance by ``__init__``): ``feed`` with its first test
        swapped for two, so neither kind of delta pays a test that cannot pass.
        The in-call part after it is ``feed``'s, copied: shared, it would cost a
        call on every delta inside a call."""
        if self._lt not in delta and self._other not in delta and delta:
            self._prev = delta
            return [TextDelta(text=delta)]
        body = self._body
        if body is None:
            xs = self._xs
            if xs:  # the express reader's call (``express``): its lane, or its step
                if (
                    xs == LANE and '"' not in delta and "\\" not in delta
                    and delta.isprintable() and delta
                ):
                    self._xraw.append(delta)
                    return [ArgsDelta(index=self._xi, id=self._xid, delta=delta)]
                return self._express(delta)
            return self._feed(delta, None)
        streaming = body.streaming
        if (
            streaming
            and '"' not in delta
            and "\\" not in delta
            and delta.isprintable()
            and delta
            and not self._held
        ):
            if streaming == ARGS or (
                streaming == XML_ARGS and "<" not in delta and "&" not in delta
            ):
                body.raw.append(delta)
                call: Call = body.call  # type: ignore[attr-defined]
                call.args.append(delta)
                if self._max_buffer is not None:
                    body.size += len(delta)
                    self._check_call_size(body, self._max_buffer)
                return [ArgsDelta(index=call.index, id=call.id, delta=delta)]
            if streaming != XML_ARGS:
                return self._lane_text(body, streaming, delta)
        if delta:
            s = self._held + delta if self._held else delta
            if s in body.holds:
                self._held = s  # as ``fast`` would hold it, without the call
                if body.undecided:
                    self._note_held(body)
                if self._max_buffer is not None:
                    self._check_call_size(body, self._max_buffer)
                return []
            fast = body.fast(s)
            if fast is not None:
                self._held = body.rest
                if body.undecided:  # text held back (inline_json's window): measured
                    self._note_held(body)
                if self._max_buffer is not None:
                    self._check_call_size(body, self._max_buffer)
                return fast
        return self._feed(delta, body)

    def _feed(self, delta: str, body: CallBody | None) -> list[ParserEvent]:
        """``feed`` past its fast paths."""
        if self._many and self._fast and delta:
            # more start characters (stop strings): a loop
            for c in self._starts:
                if c in delta:
                    break
            else:
                self._prev = delta
                return [TextDelta(text=delta)]
        if self._closed is not None:
            raise ParserStateError(f"can't feed in state {self._closed}")
        if self._stop_hit is not None or not delta:
            return []
        out: list[ParserEvent] = []
        s = self._held + delta if self._held else delta
        self._held = ""
        self.examined += len(s)
        if body is None and self._mode == CALL:
            return self._feed_pending(s, out)
        try:
            if body is not None:
                # inside a call: the body takes the buffer directly (the common case
                # ends here, still inside the call, with no mode change to record)
                k = body.feed(s, 0, out)
                if body.status == RUNNING:
                    if k < len(s) or self._max_buffer is not None:
                        self._hold_in_call(body, s, k)
                    elif k:  # all taken (the common case): nothing to hold
                        self._prev = s[k - 1]
                    if body.undecided:
                        self._note_held(body)
                    return out
                self._run(s, out, final=False, pos=k, fed=True)
            else:
                scan = self._think if self._mode != TEXT else self._text  # TEXT: no jump
                if len(s) < scan.longest and s in scan.partial:
                    # a marker still arriving (``<tool_`` after ``<to``): hold it as the
                    # scan would, without the scan
                    self._held = s
                    if self._fast:
                        self._set_fast(False)
                    if len(s) > self.max_held:
                        self.max_held = len(s)
                    return out
                if self._fast and self._max_buffer is None:
                    # text whose first marker-start character begins a marker that is
                    # still arriving (``prose <tool_``): the text before it, the rest
                    # held, as the scan would have it, without the scan
                    m = scan.start_rx.search(s)
                    if m is not None:
                        i = m.start()
                        if s[i:] in scan.partial:
                            if i:
                                out.append(TextDelta(text=s[:i]))
                                self._prev = s[i - 1]
                            self._held = s[i:]
                            self._set_fast(False)
                            if len(s) - i > self.max_held:
                                self.max_held = len(s) - i
                            return out
                        xf = self._xfirst  # the express reader's marker, whole: its call
                        if xf is not None and s.startswith(xf, i) and self._x_at(s, i, out):
                            self._set_fast(False)
                            return out
                elif self._xfirst is not None and self._mode == TEXT:
                    if s.startswith(self._xfirst) and self._x_at(s, 0, out):
                        return out  # (``<tool`` held, ``_call>{"`` came: the express call)
                self._run(s, out, final=False)
        except SizeLimitExceeded:
            self._closed = "ERROR"
            self._set_fast(False)
            self._body = None
            raise
        if self._pending and self._body is not None:
            self._detach()  # (rare: a stop string may begin before an undecided body)
        on = (
            self._mode == TEXT
            and not self._held
            and not self._ws
            and not self.syntax.drop_outer_whitespace
        )
        if on != self._fast:
            self._set_fast(on)
        held = len(self._held)
        body = self._body or self._pbody
        if body is not None:  # text held inside a decided call is not text hold-back
            held = held + body.size + len(self._pending) if body.undecided else 0
        if held > self.max_held:
            self.max_held = held
        return out

    def _feed_pending(self, s: str, out: list[ParserEvent]) -> list[ParserEvent]:
        """``_feed`` for a delta while text before an undecided body is pending
        (``TextModes._pend``; ``s`` with the held text): the body takes it as in
        a call, and its decision settles the text (``_run`` when it ends)."""
        body = self._pbody
        assert body is not None
        self._pbody = None
        self._body = body
        self._pending_at = 0
        try:
            k = body.feed(s, 0, out)
            if body.status == RUNNING:
                self._hold_in_call(body, s, k)
                if out or not body.undecided:  # (json_action's is undecided again after)
                    self._settle(out)
            else:
                self._run(s, out, final=False, pos=k, fed=True)
            if self._pending and self._body is not None:
                self._detach()
        except SizeLimitExceeded:
            self._closed = "ERROR"
            self._body = self._pbody = None
            raise
        on = (
            self._mode == TEXT
            and not self._held
            and not self._ws
            and not self.syntax.drop_outer_whitespace
        )
        if on != self._fast:
            self._set_fast(on)
        held = self.held
        if held > self.max_held:
            self.max_held = held
        return out

    def end(self, finish_reason: str | None = None) -> list[ParserEvent]:
        """End of the reply: flush held text, close an open call, emit ``Finish``."""
        if self._closed is not None:
            raise ParserStateError(f"can't end in state {self._closed}")
        if self._xs:
            self._x_replay()  # the general machine ends the call
        self._closed = "ENDED"
        self._set_fast(False)
        reason = finish_reason or "stop"
        out: list[ParserEvent] = []
        s, self._held = self._held, ""
        self._pending_at = 0
        if self._pbody is not None:
            self._body, self._pbody = self._pbody, None
        if self._mode != STOPPED:
            self._run(s, out, final=True, reason=finish_reason or "")
        self._ws = []  # whitespace around a json_object reply is not text
        out.append(Finish(reason=reason, stop_sequence=self._stop_hit))
        return out

    def _set_fast(self, on: bool) -> None:
        # (off while ``<think>`` may still open reasoning: ``TextModes._quiet``)
        self._fast = on = on and not self._quiet
        on = on and not self._many
        self._one = "<" if on and not self._others else ""
        self._lt, self._other = ("<", self._others) if on and self._others else ("", "")

    # -- the loop ---------------------------------------------------------------

    def _run(
        self,
        s: str,
        out: list[ParserEvent],
        *,
        final: bool,
        reason: str = "stop",
        pos: int = 0,
        fed: bool = False,
    ) -> None:
        """The mode loop over ``s[pos:]``; ``fed``: the open body already consumed
        ``s[:pos]`` and stopped (done or rejected)."""
        while True:
            mode = self._mode
            if mode == CALL:
                body = self._body
                assert body is not None
                if fed:
                    k, fed = pos, False
                else:
                    k = body.feed(s, pos, out)
                if self._pending and (len(out) > self._pending_at or not body.undecided):
                    self._settle(out)  # a call after all: the text held before it
                if body.status == DONE:
                    # whitespace before the call was not text; kept until now in case
                    # the body turned out to be prose (``_rejected`` re-emits it)
                    self._ws = []
                    self._body = None
                    self._mode = TEXT
                    # the character before what follows the call: the body's last
                    # (the in-call fast paths do not keep ``_prev``), a backtick of
                    # its markup none (``CALL_END``)
                    prev = s[k - 1] if k > 0 else body.raw_text()[-1:]
                    self._prev = prev if prev != "`" else CALL_END
                    if body.renews:  # read no more: the next call of its kind may renew it
                        self._ctx.spare = body
                    pos = k
                    if len(s) - k <= _SHORT_REST:
                        after = s[k:]
                        for c in self._starts:
                            if c in after:
                                break
                        else:
                            # nothing after the call can start a marker or a stop
                            # string (most calls end a delta, or prose follows):
                            # text, as ``_scan`` would find it, without the scan
                            if after:
                                self._emit_text(after, out)
                                self._prev = after[-1]
                            return
                    continue
                if body.status == REJECTED:
                    s, pos = self._rejected(body.raw_text(), s, k, out, final)
                    if body.renews:
                        self._ctx.spare = body
                    if pos < 0:
                        return
                    continue
                if final:
                    rest = body.end(s[k:], reason, out)
                    self._body = None
                    self._mode = TEXT
                    if self._pending and (rest is None or body.status == DONE):
                        self._settle(out)  # a call (or its error): the text before it
                    if rest is None:
                        return
                    if body.status == DONE:
                        # text after the call's end, none of it scanned yet (stop
                        # strings included), as after a call that ends in ``feed``
                        prev = body.raw_text()[-1:]
                        self._prev = prev if prev != "`" else CALL_END
                        s, pos = rest, 0
                        continue
                    s, pos = self._rejected(rest, "", 0, out, final)
                    if pos < 0:
                        return
                    continue
                self._hold_in_call(body, s, k)
                return
            if mode >= STOPPED:
                if mode == STOPPED:
                    return
                self._think_start(s, pos, final)
            pos = self._scan(s, pos, out, final)
            if pos < 0:
                return

    def _hold_in_call(self, body: CallBody, s: str, k: int) -> None:
        self._held = s[k:]
        if k > 0:
            self._prev = s[k - 1]
        if self._max_buffer is not None and body.size + len(self._held) > self._max_buffer:
            raise SizeLimitExceeded(f"call text exceeds max_buffer={self._max_buffer} characters")

    def __repr__(self) -> str:
        return f"<Parser {self.syntax.name} {_MODE_NAMES[self._mode]} held={len(self._held)}>"
