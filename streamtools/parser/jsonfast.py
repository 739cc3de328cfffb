"""The fast paths of the JSON call body: what it takes without its machine.

Theory of operation
-------------------
Most deltas of a JSON call need none of the body's machine (``JsonCallBody.feed``
with its envelope and scanner loops). ``fast(delta)`` tries, in order:

* **string content**: inside a string of the arguments, or of a text or
  reasoning member after its first piece, a delta with no quote, no control
  character and only whole escapes is taken as it is (raw arguments) or decoded
  (text, reasoning). An escape the delta cuts is left in ``rest`` for the core
  to hold and offer again. The shortest case, plain text with no escape where
  ``streaming`` (recomputed by ``_settle`` whenever the machine or the scanner
  moved) says such a string is open, never reaches the body: the core's lane
  (``Parser.feed``) takes it with three ``in``-class tests;
* **held text**: an envelope head written the usual way (``{"na``, ``, "argu``;
  ``Envelope.waits``) or a closing marker still arriving is held whole. The
  commonest of these spellings are one set lookup (``holds``, kept with
  ``streaming`` by ``_settle`` and by the paths below that move the state);
* **the head completing** (``_fast_head``): the tool name's closing quote
  (CallStart) or the arguments' ``{``, read by the envelope's head regexes;
* **punctuation, keys and scalars** in the arguments (``_fast_args``): the
  scanner alone checks them;
* **the arguments and the envelope closing** (``_fast_close``, ``_fast_end``):
  ``60}}</to`` or ``ris"}}</``, or ``60}`` and ``}</to`` apart, for dialects
  with a closing marker, the marker's start held.

Each either takes the delta exactly as the machine would (the same state after
it, the same events), with at most a tail left in ``rest``, or returns None
having changed nothing, and the machine runs. None of them ends a call: a delta
that completes the closing marker goes to the machine, so that the core sees the
body finish.
"""

from __future__ import annotations

import re

import msgspec

from streamtools.events import ArgsDelta, ParserEvent, ReasoningDelta, TextDelta
from streamtools.parser.calls import Call, Holds
from streamtools.parser.envelope import ARGS, IN_VALUE, NO_HOLDS, REASONING, TEXT, Envelope
from streamtools.parser.jsonscan import IN_STRING, VALUE_DONE, WHOLE_ESCAPES, ValueScanner

__all__ = ["ENVELOPE", "PREFIX", "SKIP", "SUFFIX", "JsonFastPaths"]

PREFIX, ENVELOPE, SUFFIX, SKIP = range(4)  # the body's phases (see ``jsoncall``)
# the start of an escape, up to a whole high surrogate and part of its low half
_CUT_ESCAPE = re.compile(
    r"\\(?:u[0-9a-fA-F]{0,3}|u[dD][89abAB][0-9a-fA-F]{2}"
    r"(?:\\(?:u(?:[dD](?:[c-fC-F][0-9a-fA-F]?)?)?)?)?)?\Z"
)
# the end of the arguments (no quote, so no string opens or closes on the way),
# and the envelope's "}" after them
_ARGS_END = re.compile(r'[^"\\}\]]*\}')
# the same from inside a string value: its plain rest, its quote, the "}"
_STRING_ARGS_END = re.compile(r'[^"\\\x00-\x1f]*"[ \t\r\n]*\}')
_ENVELOPE_END = re.compile(r"[ \t\r\n]*\}")
Out = list[ParserEvent]


class JsonFastPaths:
    """The fast paths of ``JsonCallBody`` (its first base)."""

    # the body's state, kept by ``JsonCallBody``
    env: Envelope
    call: Call
    phase: int
    streaming: int
    holds: Holds
    suffix_holds: frozenset[str]
    close: str | None
    raw: list[str]
    size: int
    rest: str
    out: Out

    # -- dialect hook -------------------------------------------------------------

    def prefix_holds(self) -> frozenset[str]:
        """``holds`` in the prefix phase: buffers ``fast_prefix`` holds whole."""
        return NO_HOLDS

    def fast_prefix(self, delta: str) -> list[ParserEvent] | None:
        """``fast`` in the prefix phase: events for a delta the prefix takes whole
        without deciding anything, else None for the machine."""
        return None

    # -- the paths ------------------------------------------------------------------

    def fast(self, delta: str) -> list[ParserEvent] | None:
        streaming = self.streaming
        if streaming and '"' not in delta and "\\" not in delta and delta.isprintable():
            # plain text in the string ``streaming`` names: the core's lane takes it
            # before calling here, so this is for a body the core does not see (the
            # fenced json_object reply wraps one)
            self.rest = ""
            self.raw.append(delta)
            self.size += len(delta)
            if streaming == ARGS:
                call = self.call
                call.args.append(delta)  # Call.add_args, inline (the call has started)
                return [ArgsDelta(index=call.index, id=call.id, delta=delta)]
            return [TextDelta(text=delta) if streaming == TEXT else ReasoningDelta(text=delta)]
        env = self.env
        if self.phase != ENVELOPE or env.state != IN_VALUE:
            if delta in self.holds:
                # a head or closing marker still arriving, spelled the usual way:
                # held whole, one set lookup (the tests below hold it too, slower)
                self.rest = delta
                return []
            if self.phase == PREFIX:
                return self.fast_prefix(delta)
            if self.phase == SUFFIX:
                # the closing marker still arriving (``</tool`` after ``}}``): hold it
                # as the machine would, without the machine; whitespace alone is
                # taken (held, a long run would be copied again with each delta)
                close = self.close
                assert close is not None
                tail = delta.lstrip(" \t\r\n")
                if not tail:
                    self.rest = ""
                    self.raw.append(delta)
                    self.size += len(delta)
                    return []
                if len(tail) < len(close) and close.startswith(tail):
                    self.rest = delta
                    return []
            elif self.phase == ENVELOPE:
                if env.waits(delta):
                    self.rest = delta  # the envelope head still arriving: held whole
                    return []
                events = self._fast_head(env, delta)
                return events if events is not None else self._fast_end(env, delta)
            return None
        if env.sub.state != IN_STRING or '"' in delta:
            return self._fast_args(env.sub, delta) if env.role == ARGS else None
        if not delta.isprintable():
            return None
        escaped = "\\" in delta
        rest = ""
        if escaped:
            k = WHOLE_ESCAPES.match(delta).end()  # type: ignore[union-attr]
            if k < len(delta):
                # an escape cut by the delta waits for the rest (held by the core);
                # a bad one goes to the scanner, which reports it
                rest = delta[k:]
                if _CUT_ESCAPE.match(rest) is None:
                    return None
                if k == 0:
                    self.rest = rest
                    return []
                delta = delta[:k]
        self.rest = rest
        role = env.role
        if role == ARGS:
            out: Out = []
            self.raw.append(delta)
            self.size += len(delta)
            self.call.add_args(delta, out)
            return out
        if role == TEXT or role == REASONING:
            if env.first:
                return None
            self.raw.append(delta)
            self.size += len(delta)
            text = msgspec.json.decode(f'"{delta}"') if escaped else delta
            return [ReasoningDelta(text=text) if role == REASONING else TextDelta(text=text)]
        self.raw.append(delta)
        self.size += len(delta)
        env.pieces.append(delta)  # a name, a key, a skipped string: kept whole
        return []

    def _fast_head(self, env: Envelope, delta: str) -> list[ParserEvent] | None:
        """The envelope head completing in ``delta`` (the name's closing quote, or
        the arguments' ``{``), taken by ``Envelope.take_head`` without the machine;
        what follows the name is held, what follows the ``{`` goes to
        ``_fast_args``. None, with nothing taken, for anything else."""
        key, role = env.key, env.role
        out: Out = []
        self.out = out  # where the name's CallStart goes
        j = env.take_head(delta)
        if j < 0:
            return None
        self.raw.append(delta[:j])
        self.size += j
        if env.state != IN_VALUE:  # the name: the rest (the start of the arguments) waits
            self.rest = delta[j:]
            self.holds = env.holds()
            return out
        events = self._fast_args(env.sub, delta[j:])  # from the arguments' "{"
        if events is None:  # "}" or a syntax error follows: the machine reports it
            env.resume(key, role)
            self.raw.pop()
            self.size -= j
        else:
            self.holds = NO_HOLDS
        return events

    def _fast_args(self, sub: ValueScanner, delta: str) -> list[ParserEvent] | None:
        """Punctuation, keys and scalars inside the arguments object: the scanner
        alone checks them (``ValueScanner.feed_run``). A delta that may close the
        object goes to ``_fast_close`` or the full machine; so does one with a
        syntax error, which the scanner did not take."""
        if "}" in delta or "]" in delta:
            return self._fast_close(sub, delta) if self.close is not None else None
        j = sub.feed_run(delta)
        if j < 0:  # a syntax error: the scanner is as it was, the machine reports it
            return None
        self.rest = delta[j:]  # a number, literal or escape still arriving
        call = self.call
        # ``_settle`` where it is known that the arguments' value is being read
        self.streaming = ARGS if sub.state == IN_STRING and call.started else 0
        if j == 0:
            return []
        piece = delta[:j] if j < len(delta) else delta
        self.raw.append(piece)
        self.size += j
        call.args.append(piece)  # Call.add_args, inline: once per punctuation delta
        if call.started:
            return [ArgsDelta(index=call.index, id=call.id, delta=piece)]
        return []

    def _fast_close(self, sub: ValueScanner, delta: str) -> list[ParserEvent] | None:
        """The arguments object closing in ``delta`` (``60}``, ``60}}</to``, or
        from inside a string value ``ris"}}</``), maybe the envelope too, and
        then at most the closing marker's start: taken as the machine would,
        what follows held. None, with nothing taken, for anything else; a marker
        that ends the call in this delta is the machine's, so the core sees the
        end."""
        m = (_STRING_ARGS_END if sub.state == IN_STRING else _ARGS_END).match(delta)
        if m is None or len(sub.stack) != 1:
            return None
        j = m.end()
        k = self._suffix_start(delta, j)
        if k < 0:
            return None
        state, is_key = sub.state, sub.is_key
        env = self.env
        if sub.feed(delta, 0) != j or sub.state != VALUE_DONE or not env.end_args():
            # not the end of the arguments after all: put the scanner back (the
            # stack held the arguments' "}" alone)
            sub.stack[:] = ["}"]
            sub.state, sub.is_key, sub.error = state, is_key, None
            return None
        self.streaming = 0
        if k > j:  # the envelope's "}" as well
            env.end_object()
            self.phase = SUFFIX
            self.holds = self.suffix_holds
        else:
            self.holds = env.holds()
        self.rest = delta[k:]
        self.raw.append(delta[:k])
        self.size += k
        out: Out = []
        self.call.add_args(delta[:j], out)
        return out

    def _fast_end(self, env: Envelope, delta: str) -> list[ParserEvent] | None:
        """The envelope's ``}`` right after the arguments, then at most the closing
        marker's start (held): ``_fast_close``'s second half, when the arguments'
        ``}`` came in an earlier delta."""
        if self.close is None or env.role != ARGS:
            return None
        k = self._suffix_start(delta, 0)
        if k <= 0 or not env.end_object():
            return None
        self.phase = SUFFIX
        self.holds = self.suffix_holds
        self.rest = delta[k:]
        self.raw.append(delta[:k])
        self.size += k
        return []

    def _suffix_start(self, s: str, j: int) -> int:
        """Where the text to hold begins, if ``s[j:]`` is whitespace (j) or the
        envelope's ``}`` (after it) and then whitespace and at most a proper
        start of the closing marker; else -1."""
        close = self.close
        assert close is not None
        m = _ENVELOPE_END.match(s, j)
        if m is None:
            return j if not s[j:].strip(" \t\r\n") else -1
        k = m.end()
        tail = s[k:].lstrip(" \t\r\n")
        return k if len(tail) < len(close) and close.startswith(tail) else -1

    def _settle(self) -> None:
        """After the machine moved: is the body now inside a string of a started
        call's arguments, or of a text or reasoning member past its first piece
        (``streaming``, the shortest fast path)? What does it hold whole
        (``holds``)?"""
        env = self.env
        phase = self.phase
        if phase == ENVELOPE and env.state == IN_VALUE:
            self.holds = NO_HOLDS
            role = env.role
            self.streaming = (
                role
                if env.sub.state == IN_STRING
                and (
                    (role == ARGS and self.call.started)
                    or ((role == TEXT or role == REASONING) and not env.first)
                )
                else 0
            )
            return
        self.streaming = 0
        if phase == ENVELOPE:
            self.holds = env.holds()
        elif phase == SUFFIX:
            self.holds = self.suffix_holds
        elif phase == PREFIX:
            self.holds = self.prefix_holds()
        else:
            self.holds = NO_HOLDS
