"""The call body shared by the JSON dialects (hermes, json_action, command,
inline_json, json_object).

Theory of operation
-------------------
A JSON call has up to three phases, each a few lines of state:

``PREFIX``    dialect-specific text between the marker and the JSON (hermes:
              whitespace; json_action: the rest of the fence line; command: the
              tool name; inline_json: the ``"tool": "<name>"`` decision window).
              While in it the body is ``undecided`` and may reject itself, which
              turns everything it consumed back into text.
``ENVELOPE``  an ``Envelope`` reads the JSON object; the tool name starts the call,
              the arguments object streams out as ``ArgsDelta`` at the model's pace.
``SUFFIX``    whitespace and the closing marker, for dialects that have one.

Failure handling is per dialect (``on_error``): ``SKIP`` drops to the closing
marker (hermes, json_action), so one broken call never eats the next;
``CUT`` ends the call at the offending character and gives the rest back to
text mode (inline_json, command); ``SWALLOW`` keeps everything up to the end of
the reply (json_object, whose reply is the object). Either way the raw text of
the failed call is kept in ``CallError.raw``.

The fast path (``fast``): a delta inside a string value, with no quote, no
control character and only whole escapes, is taken without the envelope and
scanner machinery (raw for arguments, decoded for text and reasoning). An escape
the delta cuts is left in ``rest`` for the core to hold and offer again. The
shortest case, plain text in an argument string, is one flag (``streaming``,
recomputed by ``_settle`` whenever the machine or the scanner moved) and three
``in``-class tests. A closing marker or an envelope head (``Envelope.waits``)
still arriving is held the same way.
"""

from __future__ import annotations

import re

import msgspec

from streamtools.events import ArgsDelta, ParserEvent, ReasoningDelta, TextDelta
from streamtools.parser.calls import (
    DONE,
    PROVIDER_STOP,
    REJECTED,
    RUNNING,
    Call,
    CallBody,
    CallContext,
)
from streamtools.parser.envelope import (
    ARGS,
    ENVELOPE_DONE,
    IN_VALUE,
    REASONING,
    TEXT,
    Envelope,
    Jumps,
    role_prefixes,
)
from streamtools.parser.jsonscan import IN_STRING, VALUE_DONE, ValueScanner

__all__ = ["CUT", "ENVELOPE", "PREFIX", "SKIP_TO_CLOSE", "SWALLOW", "JsonCallBody"]

PREFIX, ENVELOPE, SUFFIX, SKIP = range(4)
# string content whose escapes are all whole and valid (a surrogate pair whole):
# the fast path takes it as it is (raw) or decoded (text and reasoning)
_WHOLE_ESCAPES = re.compile(
    r'(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u(?![dD][89a-fA-F])[0-9a-fA-F]{4}'
    r"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})*"
)
# the start of an escape, up to a whole high surrogate and part of its low half
_CUT_ESCAPE = re.compile(
    r"\\(?:u[0-9a-fA-F]{0,3}|u[dD][89abAB][0-9a-fA-F]{2}"
    r"(?:\\(?:u(?:[dD](?:[c-fC-F][0-9a-fA-F]?)?)?)?)?)?\Z"
)
# the end of the arguments (no quote, so no string opens or closes on the way),
# and the envelope's "}" after them
_ARGS_END = re.compile(r'[^"\\}\]]*\}')
_ENVELOPE_END = re.compile(r"[ \t\r\n]*\}")
SKIP_TO_CLOSE, CUT, SWALLOW = range(3)
Out = list[ParserEvent]


class JsonCallBody(CallBody):
    """A call whose arguments are JSON; subclasses set the class attributes below."""

    roles: dict[tuple[str, ...], int] = {}
    close: str | None = None
    on_error = SKIP_TO_CLOSE
    example = ""
    opened = False  # the marker itself opened the envelope object (``{``)
    prefixes: frozenset[tuple[str, ...]] = frozenset()  # of ``roles``, once per class
    jumps: Jumps | None = None  # the envelope head's regexes, once per class

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls.prefixes = role_prefixes(cls.roles)
        cls.jumps = Jumps.for_roles(cls.roles, cls.prefixes)

    def __init__(self, ctx: CallContext, marker: str, *, prefix: bool = True) -> None:
        super().__init__(ctx, marker)
        self.call = Call(ctx)
        self.env = Envelope(
            self.roles, self, opened=self.opened, prefixes=self.prefixes, jumps=self.jumps
        )
        self.phase = PREFIX if prefix else ENVELOPE
        self.undecided = prefix
        self.failure: tuple[str, str] | None = None
        self.out: Out = []
        self.args_given = False
        self.text_given = False
        self.streaming = 0  # see ``_settle``: the role whose string is streaming, or 0

    # -- envelope sink ------------------------------------------------------------

    def on_name(self, name: object) -> None:
        if self.call.name is not None:
            self.failure = self.failure or ("malformed", "The call names its tool twice.")
        elif not isinstance(name, str) or not name:
            self.failure = self.failure or ("malformed", "The tool name must be a string.")
        else:
            self.call.named(name, self.out)

    def on_args(self, text: str) -> None:
        self.args_given = True
        if not text:
            return
        call = self.call
        call.args.append(text)  # Call.add_args, inline: once per argument piece
        if call.started:
            self.out.append(ArgsDelta(index=call.index, id=call.id, delta=text))

    def on_text(self, text: str, reasoning: bool) -> None:
        self.text_given = True
        self.out.append(ReasoningDelta(text=text) if reasoning else TextDelta(text=text))

    # -- dialect hooks ------------------------------------------------------------

    def prefix(self, s: str, i: int) -> int:
        """Consume the prefix phase; set ``phase``/``status`` when decided."""
        self.phase = ENVELOPE
        self.undecided = False
        return i

    def fast_prefix(self, delta: str) -> list[ParserEvent] | None:
        """``fast`` in the prefix phase: events for a delta the prefix takes whole
        without deciding anything, else None for the machine."""
        return None

    def prefix_end(self, finish_reason: str) -> bool:
        """The stream ended in the prefix: True if that completes a call."""
        return False

    def envelope_done(self, raw: str) -> None:
        if self.failure is not None:
            self.call.fail(raw, *self.failure, self.out)
        else:
            self.call.complete(raw, self.out, example=self.example)

    # -- the machine ----------------------------------------------------------------

    def fast(self, delta: str) -> list[ParserEvent] | None:
        streaming = self.streaming
        if streaming and '"' not in delta and "\\" not in delta and delta.isprintable():
            # plain text inside a string of the arguments, or of a text or reasoning
            # member after its first piece: most deltas of a call
            self.rest = ""
            self.raw.append(delta)
            self.size += len(delta)
            if streaming == ARGS:
                call = self.call
                call.args.append(delta)
                return [ArgsDelta(index=call.index, id=call.id, delta=delta)]
            self.text_given = True
            return [TextDelta(text=delta) if streaming == TEXT else ReasoningDelta(text=delta)]
        env = self.env
        if self.phase != ENVELOPE or env.state != IN_VALUE:
            if self.phase == PREFIX:
                return self.fast_prefix(delta)
            if self.phase == SUFFIX:
                # the closing marker still arriving (``</tool`` after ``}}``): hold it
                # as the machine would, without the machine
                close = self.close
                assert close is not None
                tail = delta.lstrip(" \t\r\n")
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
            k = _WHOLE_ESCAPES.match(delta).end()  # type: ignore[union-attr]
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
            self.raw.append(delta)
            self.size += len(delta)
            call = self.call
            call.args.append(delta)
            if call.started:
                return [ArgsDelta(index=call.index, id=call.id, delta=delta)]
            return []
        if role == TEXT or role == REASONING:
            if env.first:
                return None
            self.raw.append(delta)
            self.size += len(delta)
            self.text_given = True
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
        key = env.key
        out: Out = []
        self.out = out  # where the name's CallStart goes
        j = env.take_head(delta)
        if j < 0:
            return None
        self.raw.append(delta[:j])
        self.size += j
        if env.state != IN_VALUE:  # the name: the rest (the start of the arguments) waits
            self.rest = delta[j:]
            return out
        events = self._fast_args(env.sub, delta[j:])  # from the arguments' "{"
        if events is None:  # "}" or a syntax error follows: the machine reports it
            env.resume(key)
            self.raw.pop()
            self.size -= j
        return events

    def _fast_args(self, sub: ValueScanner, delta: str) -> list[ParserEvent] | None:
        """Punctuation, keys and scalars inside the arguments object: the scanner
        alone checks them. A delta that may close the object goes to the full
        machine; so does one with a syntax error, after the scanner is put back
        (without a closer its stack only grew, so the undo is exact)."""
        if "}" in delta or "]" in delta:
            return self._fast_close(sub, delta) if self.close is not None else None
        stack, depth, state, is_key = sub.stack, len(sub.stack), sub.state, sub.is_key
        j = sub.feed(delta, 0)
        if sub.error is not None:
            del stack[depth:]
            sub.state, sub.is_key, sub.error = state, is_key, None
            return None
        self.rest = delta[j:]  # a number, literal or escape still arriving
        self._settle()
        if j == 0:
            return []
        piece = delta[:j] if j < len(delta) else delta
        self.raw.append(piece)
        self.size += j
        call = self.call
        call.args.append(piece)
        if call.started:
            return [ArgsDelta(index=call.index, id=call.id, delta=piece)]
        return []

    def _fast_close(self, sub: ValueScanner, delta: str) -> list[ParserEvent] | None:
        """The arguments object closing in ``delta`` (``60}``, ``60}}</to``), maybe
        the envelope too, and then at most the closing marker's start: taken as
        the machine would, what follows held. None, with nothing taken, for
        anything else; a marker that ends the call in this delta is the
        machine's, so the core sees the end."""
        m = _ARGS_END.match(delta)
        if m is None or len(sub.stack) != 1 or sub.state == IN_STRING:
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
        self.rest = delta[k:]
        self.raw.append(delta[:k])
        self.size += k
        piece = delta[:j]
        call = self.call
        call.args.append(piece)
        if call.started:
            return [ArgsDelta(index=call.index, id=call.id, delta=piece)]
        return []

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

    def _finish(self, s: str, start: int, stop: int, failure: tuple[str, str] | None) -> None:
        self.record(s, start, stop)
        self.status = DONE
        raw = self.raw_text()
        if failure is not None:
            self.call.fail(raw, *failure, self.out)
        else:
            self.envelope_done(raw)

    def _error(self, reason: str, message: str) -> None:
        hint = f" {self.example}" if self.example else ""
        self.failure = (reason, message + hint)
        self.phase = SKIP

    def feed(self, s: str, pos: int, out: Out) -> int:  # noqa: C901 - one state machine
        self.out = out
        n = len(s)
        i = pos
        while self.status == RUNNING and i < n:
            phase = self.phase
            if phase == PREFIX:
                j = self.prefix(s, i)
                if self.status != RUNNING:  # rejected, or the prefix ended the call
                    if self.status == REJECTED:
                        self.record(s, pos, j)
                    return j
                if j == i and self.phase == PREFIX:
                    break
                i = j
            elif phase == ENVELOPE:
                env = self.env
                i = env.feed(s, i)
                if env.error is not None:
                    name = self.call.name or "the tool"
                    message = f"The call to {name} is not valid JSON: {env.error}."
                    self._error("invalid_json", message)
                    if self.on_error == CUT:
                        self._finish(s, pos, i, self.failure)
                        return i
                elif env.state == ENVELOPE_DONE:
                    if self.close is None:
                        self._finish(s, pos, i, None)
                        return i
                    self.phase = SUFFIX
                else:
                    break
            elif phase == SUFFIX:
                close = self.close
                assert close is not None
                while i < n and s[i] in " \t\r\n":
                    i += 1
                if i == n:
                    break
                if s.startswith(close, i):
                    self._finish(s, pos, i + len(close), self.failure)
                    return i + len(close)
                if close.startswith(s[i:]):
                    break
                self._error("malformed", f"Expected {close} right after the JSON object.")
            else:  # SKIP
                close = self.close
                if close is None or self.on_error == SWALLOW:
                    i = n
                    break
                k = s.find(close, i)
                if k >= 0:
                    self._finish(s, pos, k + len(close), self.failure)
                    return k + len(close)
                j = max(i, n - len(close) + 1)
                while j < n and not close.startswith(s[j:]):
                    j += 1
                i = j
                break
        if i > pos:  # self.record, inline: once per delta inside a call
            self.raw.append(s[pos:i] if pos or i < n else s)
            self.size += i - pos
        self._settle()
        return i

    def _settle(self) -> None:
        """After the machine or the scanner moved: is the body now inside a string
        of a started call's arguments, or of a text or reasoning member past its
        first piece (``streaming``, the shortest fast path)?"""
        env = self.env
        role = env.role
        self.streaming = (
            role
            if self.phase == ENVELOPE and env.state == IN_VALUE and env.sub.state == IN_STRING
            and (
                (role == ARGS and self.call.started)
                or ((role == TEXT or role == REASONING) and not env.first)
            )
            else 0
        )

    def end(self, tail: str, finish_reason: str, out: Out) -> str | None:
        self.out = out
        if self.phase == PREFIX and self.undecided and not self.prefix_end(finish_reason):
            return self.raw_text() + tail
        self.record(tail, 0, len(tail))
        raw = self.raw_text()
        self.status = DONE
        phase = self.phase
        if phase == PREFIX:
            self.envelope_done(raw)
        elif phase == SKIP and self.failure is not None:
            self.call.fail(raw, *self.failure, out)
        elif (
            phase == SUFFIX
            and finish_reason in PROVIDER_STOP
            and (tail.strip() == "" or (self.close or "").startswith(tail.strip()))
        ):
            self.envelope_done(raw)  # the provider removed the closing marker as a stop string
        else:
            name = self.call.name or "the tool"
            closing = f", ending with {self.close}" if self.close else ""
            self.call.fail(
                raw, "unterminated",
                f"The call to {name} was cut off before it was complete. Write the whole "
                f"call{closing}.", out,
            )
        return None
