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
              When it closes, arguments given twice (under two of the keys the
              dialect reads) or none, while an object stood under a key it does
              not read next to where they go (``"options": {…}``), make the call
              ``CallError(reason="malformed")`` naming the key: either way the
              call would run with arguments the model did not mean.
``SUFFIX``    whitespace and the closing marker, for dialects that have one. The
              dialect's opening marker there instead (``reopen``: the model
              forgot the closing marker and went on to its next call, as models
              leave it out before prose, see below) ends the call complete at
              its object, as its closing marker would, and is left for the core,
              which opens the next call (it was ``CallError(unterminated)``, the
              call lost for a missing tag, while ``json_action``'s next fence
              and an ``<invoke>``'s next call already read both). Only here,
              after a complete object: after a JSON error the text may be inside
              a string, so ``SKIP`` looks for the closing marker alone.
              In a dialect whose block may hold ``several`` calls (hermes,
              json_action), another object here, or the ``,`` before the next
              element where the block opened a JSON array of calls (``[``, read
              where the envelope's ``{`` was due), completes this call as its
              closing marker would and starts the next in the same body (its raw
              text from the ``{`` or ``,``); the array's ``]`` is markup before
              the closing marker. A ``}`` here is a brace too many (the object
              was complete: Qwen and QwQ models write ``{…}}}``, langchain-qwq#30)
              and is markup too, as is each further one; it was
              ``CallError(malformed)``, the call lost for a slip that changes
              nothing it says. Prose on a line of its
              own here (a letter or digit after a line break: ``{…}\nDone.``,
              ``calls.prose_line``) means the model left the closing marker out
              and went on writing (a few percent of calls through a hermes
              prompt, minpeter/ai-sdk-tool-call-middleware#295; vLLM's hermes
              parser, reading an unclosed call to the end of the text, loses
              it then): the call is complete at the object and its layout, the
              prose is text from its first character. Other text here, or prose
              on the object's own line (``{…} x</tool_call>``), is still
              ``malformed``; a closing marker after the prose is then text.

Failure handling is per dialect (``on_error``): ``SKIP`` drops to the closing
marker (hermes, json_action), so one broken call never eats the next;
``CUT`` ends the call at the offending character and gives the rest back to
text mode (inline_json, command); ``SWALLOW`` keeps everything up to the end of
the reply (json_object, whose reply is the object). Either way the raw text of
the failed call is kept in ``CallError.raw``.

The fast paths, which take most deltas without this machine, are in
``jsonfast`` (``JsonFastPaths``, a base of ``JsonCallBody``).
"""

from __future__ import annotations

from streamtools.events import ArgsDelta, CallErrorReason, ReasoningDelta, TextDelta
from streamtools.parser.calls import (
    DONE,
    NEVER_HOLDS,
    PROVIDER_STOP,
    REJECTED,
    RUNNING,
    SPECIAL_TOKEN,
    SPECIAL_TOKEN_START,
    Call,
    CallBody,
    CallContext,
    prose_line,
)
from streamtools.parser.envelope import (
    ARGS,
    ENVELOPE_DONE,
    NO_HOLDS,
    OPEN_EXPECTED,
    Envelope,
    Jumps,
    role_prefixes,
)
from streamtools.parser.jsonfast import ENVELOPE, PREFIX, SKIP, SUFFIX, JsonFastPaths, Out

__all__ = ["CUT", "ENVELOPE", "PREFIX", "SKIP_TO_CLOSE", "SWALLOW", "JsonCallBody"]

SKIP_TO_CLOSE, CUT, SWALLOW = range(3)


class JsonCallBody(JsonFastPaths, CallBody):
    """A call whose arguments are JSON; subclasses set the class attributes below."""

    roles: dict[tuple[str, ...], int] = {}
    close: str | None = None
    reopen: str | None = None  # the opening marker, where ``close`` is due (see above)
    several = False  # a block may hold several calls (see ``_next_call``)
    array = False  # in a JSON array of calls (``several``), not yet closed
    on_error = SKIP_TO_CLOSE
    example = ""
    opened = False  # the marker itself opened the envelope object (``{``)
    prefixes: frozenset[tuple[str, ...]] = frozenset()  # of ``roles``, once per class
    jumps: Jumps | None = None  # the envelope head's regexes, once per class
    args_key = "arguments"  # the key the dialect's prompt teaches for the arguments
    # paths of the objects that hold an arguments member, once per class
    args_parents: frozenset[tuple[str, ...]] = frozenset()

    suffix_holds: frozenset[str] = NO_HOLDS  # ``holds`` in the suffix, once per class

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls.prefixes = role_prefixes(cls.roles)
        cls.jumps = Jumps.for_roles(cls.roles, cls.prefixes)
        cls.args_parents = frozenset(p[:-1] for p, r in cls.roles.items() if r == ARGS and p)
        if cls.close is not None:
            # the closing marker still arriving, after the layout models write (the
            # layout alone is taken, not held: see ``JsonFastPaths.fast``)
            close = cls.close
            cls.suffix_holds = frozenset(
                space + close[:k] for space in ("", " ", "\n", "\r\n", "\n\n")
                for k in range(1, len(close))
            )

    def __init__(self, ctx: CallContext, marker: str, *, prefix: bool = True) -> None:
        super().__init__(ctx, marker)
        self.call = Call(ctx)
        self.env = Envelope(
            self.roles, self, opened=self.opened, prefixes=self.prefixes, jumps=self.jumps
        )
        self.phase = PREFIX if prefix else ENVELOPE
        self.undecided = prefix
        self.failure: tuple[CallErrorReason, str] | None = None
        self.out: Out = []
        self.args_given = False
        self.streaming = 0  # see ``_settle``: the role whose string is streaming, or 0
        # (``holds``: see ``_settle``, and the core's use of it in ``CallBody``)

    renews = True

    def renew(self, marker: str, *, prefix: bool = True) -> None:
        """Be the body ``__init__(ctx, marker, prefix=prefix)`` makes, reusing this
        finished one with its call, envelope and scanner (``CallBody.renews``);
        a subclass that keeps more state resets it too."""
        self.status = RUNNING  # ``CallBody.renew``, inline
        self.raw = [marker]
        self.size = len(marker)
        self.streaming = 0
        self.holds = NEVER_HOLDS
        self.rest = ""
        self.call.renew()
        self.env.renew(self)
        self.phase = PREFIX if prefix else ENVELOPE
        self.undecided = prefix
        self.failure = None
        self.out = []
        self.args_given = False
        self.array = False

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
        self.out.append(ReasoningDelta(text=text) if reasoning else TextDelta(text=text))

    # -- dialect hooks ------------------------------------------------------------

    def prefix(self, s: str, i: int) -> int:
        """Consume the prefix phase; set ``phase``/``status`` when decided."""
        self.phase = ENVELOPE
        self.undecided = False
        return i

    def loose_suffix(self, s: str, i: int) -> tuple[int, bool] | None:
        """Where ``close`` is due and ``s[i:]`` is neither it nor ``reopen``: text
        the dialect still takes, as layout or as its closing marker written
        loosely. ``(end, closes)``: taken up to ``end``, ``closes`` if it was the
        closing marker; ``(i, False)``: it may still be, wait; None: the call is
        malformed. (Reached only where the call would otherwise fail.) Here: a
        chat template's special token (``<|im_end|>``, ``<turn|>``, ``<｜…｜>``:
        ``calls.SPECIAL_TOKEN``; one still arriving waits, at most 67
        characters) is layout, so a call that
        ends the model's turn before its closing marker completes at
        ``end("stop")``, as one whose marker the provider removed."""
        m = SPECIAL_TOKEN.match(s, i)
        if m is not None:
            return m.end(), False
        return (i, False) if SPECIAL_TOKEN_START.match(s, i) is not None else None

    def prefix_end(self, finish_reason: str) -> bool:
        """The stream ended in the prefix: True if that completes a call."""
        return False

    def envelope_done(self, raw: str) -> None:
        if self.failure is None and self.call.started:
            self.failure = self._misplaced_args()
        if self.failure is not None:
            self.call.fail(raw, *self.failure, self.out)
        else:
            example = f" {self.example}" if self.example else ""  # a sentence of its own
            self.call.complete(raw, self.out, example=example)

    def _misplaced_args(self) -> tuple[CallErrorReason, str] | None:
        """Arguments the envelope read but cannot use: given twice (the second
        object would be dropped, or the two sent as one broken text), or none
        given while an object stood under a key the dialect does not read there
        (``"options": {…}``: run without them, the call would do something else)."""
        env = self.env
        name = self.call.name
        key = self.args_key
        if env.wrong is not None:  # ``"arguments": [...]``, read through (``Envelope.wrong``)
            return ("invalid_json", f"The call to {name} is not valid JSON: {env.wrong}."
                    + (f" {self.example}" if self.example else ""))
        if env.given > 1:
            return ("malformed", f"The call to {name} gives its arguments more than once. "
                    f'Give them once, as one object under "{key}".')
        skipped = env.skipped
        if not env.given and skipped is not None and skipped[:-1] in self.args_parents:
            return ("malformed", f'The call to {name} has its arguments under "{skipped[-1]}", '
                    f'which is not read. Put them under "{key}".')
        return None

    # -- the machine ----------------------------------------------------------------

    def _finish(
        self, s: str, start: int, stop: int, failure: tuple[CallErrorReason, str] | None
    ) -> None:
        self.record(s, start, stop)
        self.status = DONE
        raw = self.raw_text()
        if failure is not None:
            self.call.fail(raw, *failure, self.out)
        else:
            self.envelope_done(raw)
        self.env.detach()

    def _next_call(self, s: str, start: int, stop: int) -> int:
        """Several calls in one block (``several``): the one read ends at
        ``s[stop]`` (the ``,`` between array elements, or the next object's
        ``{``), complete as if its closing marker had come, and the body reads
        the next in the same block, its raw text from ``stop``."""
        self.record(s, start, stop)
        raw = self.raw_text()
        if self.failure is not None:
            self.call.fail(raw, *self.failure, self.out)
        else:
            self.envelope_done(raw)
        self.env.detach()
        out = self.out
        JsonCallBody.__init__(self, self.ctx, "", prefix=False)
        self.out = out
        return stop

    def _error(self, reason: CallErrorReason, message: str) -> None:
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
                    self.env.detach()
                    return j
                if j == i and self.phase == PREFIX:
                    break
                i = j
            elif phase == ENVELOPE:
                env = self.env
                i = env.feed(s, i)
                if env.error is not None:
                    if (
                        self.several and not self.array and s[i] == "["
                        and env.error.startswith(OPEN_EXPECTED)
                    ):
                        # the calls as a JSON array: each element is one (the error
                        # path, so an ordinary call pays nothing for this)
                        self.array = True
                        self.env = Envelope(
                            self.roles, self, prefixes=self.prefixes, jumps=self.jumps
                        )
                        i += 1
                        continue
                    name = self.call.name or "the tool"
                    # (arguments that were no object first: the first mistake to fix)
                    message = f"The call to {name} is not valid JSON: {env.wrong or env.error}."
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
                if n - i < len(close) and close.startswith(s[i:]):
                    break
                reopen = self.reopen
                if reopen is not None:
                    if s.startswith(reopen, i):
                        # the closing marker left out before the next call: this one
                        # ends complete at its object (and layout), as before prose
                        self._finish(s, pos, i, self.failure)
                        return i
                    if n - i < len(reopen) and reopen.startswith(s[i:]):
                        break
                if self.several:
                    c = s[i]
                    if c == "{" or (c == "," and self.array):
                        # (the "," is the next call's raw: a reply cut after it has
                        # begun a call it did not finish)
                        pos = self._next_call(s, pos, i)
                        i += c == ","
                        continue
                    if c == "]" and self.array:
                        self.array = False  # the array closed: then the closing marker
                        i += 1
                        continue
                if s[i] == "}":
                    i += 1  # a brace too many after a complete object (each one): layout
                    continue
                loose = self.loose_suffix(s, i)
                if loose is not None:
                    j, closes = loose
                    if closes:
                        self._finish(s, pos, j, self.failure)
                        return j
                    if j == i:
                        break  # may still be one: wait
                    i = j
                    continue
                if prose_line(self.raw, s, pos, i):
                    # the closing marker left out, prose on the next line: the call
                    # ends complete at the object (and its layout), the prose is text
                    self._finish(s, pos, i, self.failure)
                    return i
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
