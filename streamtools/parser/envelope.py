"""The JSON envelope around a call, read incrementally by the JSON dialects.

Theory of operation
-------------------
``Envelope`` reads the JSON object around a call (``{"name": …, "arguments":
{…}}``) with a role per member path: the tool name, the argument object (streamed
raw, exactly as the model wrote it but for a raw control character in a string,
streamed as its escape: see ``jsonscan``), text or reasoning (decoded and
streamed) and everything else skipped. Envelope punctuation is handled one character at a time
(it is a few characters per call); every value is scanned by a ``ValueScanner``.
The common head (``{"name": "TOOL"`` and ``, "arguments": {``) is read by two
compiled regexes instead (``Jumps``) when it is there whole. While it arrives in
tiny deltas, text written the way models write it (``{"na``, ``{"name": "sea``,
``, "argu``) is held, one set lookup per delta (``waits``), instead of stepped
through: per-delta overhead, not per-character work, dominates there. (Holding
on a partial-match regex instead cost as much as the steps.) No event comes from
a head before the name's closing quote or the arguments' ``{``, so holding it
moves no event. Other spellings take the steps.
Objects on the way to a role path are descended into (``json_object``'s
``{"action": {"tool": …, "args": …}}``).
"""

from __future__ import annotations

import re
from typing import Protocol

import msgspec

from streamtools.parser.calls import NO_HOLDS
from streamtools.parser.jsonscan import (
    CONTROL,
    STRING_RUN,
    VALUE_DONE,
    ValueScanner,
    escape_controls,
)

__all__ = [
    "ARGS", "ENVELOPE_DONE", "IN_VALUE", "NAME", "NO_HOLDS", "OPEN_EXPECTED", "REASONING",
    "TEXT", "Envelope",
    "EnvelopeSink", "Jumps", "role_prefixes",
]

_SPACE = " \t\r\n"
_NAME_HOLD = 64  # the longest tool name held whole while it arrives (longer: stepped)

# Member roles. NAME: the tool name (a string); ARGS: the arguments object, streamed
# raw; TEXT/REASONING: a string streamed decoded; SKIP: read and dropped. Internal:
# KEY reads a member's key; ARGS_STR reads arguments a model double-encoded as a
# string of JSON (``"arguments": "{\"a\": 1}"``), emitted decoded when it closes.
NAME, ARGS, TEXT, REASONING, SKIP, KEY, ARGS_STR = range(7)
# Envelope states
_E_OPEN, _E_FIRST_KEY, _E_KEY, _E_COLON, _E_VALUE, _E_AFTER, _E_IN, _E_DONE, _E_ERROR = range(9)
IN_VALUE, ENVELOPE_DONE = _E_IN, _E_DONE
OPEN_EXPECTED = "expected '{' to open the call object"  # the error of a first character


class EnvelopeSink(Protocol):
    """Where an envelope delivers what it finds (the JSON call body)."""

    def on_name(self, name: object) -> None: ...
    def on_args(self, text: str) -> None: ...
    def on_text(self, text: str, reasoning: bool) -> None: ...


class _Detached:
    """The sink of an envelope whose call is over: it hears nothing."""

    def on_name(self, name: object) -> None:
        pass

    def on_args(self, text: str) -> None:
        pass

    def on_text(self, text: str, reasoning: bool) -> None:
        pass


_DETACHED = _Detached()


class Jumps:
    """An envelope's common head, read whole (see ``Envelope._jump`` and
    ``Envelope.waits``), built once per role table: ``head`` reads ``{"<name
    key>": "<plain name>"``, ``args`` reads ``, "<arguments key>": {``, with
    whitespace as JSON allows it. ``head_prefixes``, ``heads`` and
    ``args_prefixes`` spell the same heads the way models write them (``{"name":
    "``, ``{"name":"``): text that may still grow into one is held, by one set
    lookup, instead of stepped through."""

    __slots__ = (
        "args", "args_prefixes", "head", "head_prefixes", "heads", "shortest", "wait_limit",
    )

    def __init__(self, name_keys: list[str], args_keys: list[str]) -> None:
        # the fewest characters either regex can match: ``{"":""`` + the shortest
        # name key, ``,"":{`` + the shortest arguments key
        self.shortest = 6 + min(map(len, name_keys))
        if args_keys:
            self.shortest = min(self.shortest, 5 + min(map(len, args_keys)))
        ws = r"[ \t\r\n]*"
        names = "|".join(re.escape(k) for k in name_keys)
        # (a name with an escape, a control character or a lone surrogate half is
        # read by the steps, which report what is wrong)
        self.head = re.compile(rf'{ws}\{{{ws}"({names})"{ws}:{ws}"({STRING_RUN.pattern})"')
        self.heads = tuple(f'{{"{k}":{sp}"' for k in name_keys for sp in ("", " "))
        self.head_prefixes = frozenset(h[:n] for h in self.heads for n in range(1, len(h) + 1))
        self.args: re.Pattern[str] | None = None
        self.args_prefixes: frozenset[str] = frozenset()
        if args_keys:
            keys = "|".join(re.escape(k) for k in args_keys)
            self.args = re.compile(rf'{ws},{ws}"({keys})"{ws}:{ws}\{{')
            spelled = [f',{a}"{k}":{b}{{' for k in args_keys for a in ("", " ") for b in ("", " ")]
            # proper prefixes only: the "{" itself is the arguments' first character
            self.args_prefixes = frozenset(h[:n] for h in spelled for n in range(1, len(h)))
        # the longest text ``Envelope.waits`` can hold: a longer rest is not even
        # sliced (one large delta would otherwise cost time quadratic in its calls)
        self.wait_limit = max(
            max(map(len, self.heads)) + _NAME_HOLD, max(map(len, self.args_prefixes), default=0)
        )

    @classmethod
    def for_roles(
        cls, roles: dict[tuple[str, ...], int], prefixes: frozenset[tuple[str, ...]]
    ) -> Jumps | None:
        """None unless the tool name is a top-level member."""
        top = [(p[0], r) for p, r in roles.items() if len(p) == 1 and p not in prefixes]
        name_keys = [k for k, r in top if r == NAME]
        args_keys = [k for k, r in top if r == ARGS]
        return cls(name_keys, args_keys) if name_keys else None


def role_prefixes(roles: dict[tuple[str, ...], int]) -> frozenset[tuple[str, ...]]:
    """The member paths an envelope descends into on the way to a role path."""
    return frozenset(p[:k] for p in roles for k in range(len(p)))


class Envelope:
    """Reads a call's JSON envelope, dispatching member values by role."""

    __slots__ = (
        "error", "jumps", "key", "path", "pieces", "prefixes", "role", "roles", "sink",
        "state", "sub", "first", "root", "given", "skipped",
        "answered", "first_state", "wrong",
    )

    def __init__(
        self,
        roles: dict[tuple[str, ...], int],
        sink: EnvelopeSink,
        *,
        opened: bool = False,
        prefixes: frozenset[tuple[str, ...]] | None = None,
        jumps: Jumps | None = None,
    ) -> None:
        self.roles = roles
        self.jumps = jumps
        # paths on the way to a role (``role_prefixes(roles)``; callers that open many
        # envelopes with the same roles compute it once)
        self.prefixes = role_prefixes(roles) if prefixes is None else prefixes
        self.sink = sink
        self.path: list[str] = []
        self.first_state = self.state = _E_FIRST_KEY if opened else _E_OPEN
        self.root = () in roles  # the whole value has a role (command: the arguments)
        if self.root:
            self.state = _E_VALUE
        self.sub = ValueScanner()
        self.role = SKIP
        self.key = ""
        self.pieces: list[str] = []
        self.first = True
        self.error: str | None = None
        # for the body's checks when the call closes: how many argument values were
        # read (a second one is a mistake ``feed`` cannot see), and the path of the
        # first object value skipped because its key has no role (arguments under a
        # key the dialect does not read)
        self.given = 0
        self.skipped: tuple[str, ...] | None = None
        self.answered = False  # a TEXT member (``json_object``'s final answer) began
        # what is wrong with an arguments value that is JSON but no object
        # (``"arguments": [...]``): it is read through as skipped, so the call ends
        # where its object does, and fails then (see ``_E_VALUE``)
        self.wrong: str | None = None

    def renew(self, sink: EnvelopeSink) -> None:
        """Be the envelope ``__init__`` makes with the same roles, reusing this
        one and its scanner (its call is over: see ``CallBody.renews``)."""
        self.sink = sink
        self.path = []
        self.state = _E_VALUE if self.root else self.first_state
        sub = self.sub
        sub.restart()
        sub.examined = 0
        self.role = SKIP
        self.key = ""
        self.pieces = []
        self.first = True
        self.error = None
        self.given = 0
        self.skipped = None
        self.answered = False
        self.wrong = None

    @property
    def done(self) -> bool:
        return self.state == _E_DONE

    def detach(self) -> None:
        """The call is over: let go of the sink. The body and its envelope refer
        to each other; broken, a finished call is freed as soon as the parser
        drops it, not by the cycle collector (a few percent of a parse)."""
        self.sink = _DETACHED

    def after_value(self) -> None:
        """Resume after the first member, which someone else read."""
        self.state = _E_AFTER

    def _fail(self, message: str) -> None:
        self.state = _E_ERROR
        self.error = message

    def feed(self, s: str, i: int, final: bool = False) -> int:  # noqa: C901
        n = len(s)
        while i < n:
            state = self.state
            if (state == _E_AFTER or state == _E_OPEN) and self.jumps is not None:
                if n - i >= self.jumps.shortest:  # shorter: no match possible
                    j = self._jump(s, i)
                    if j != i:
                        i = j
                        continue
                if not final and n - i <= self.jumps.wait_limit and self.waits(s[i:]):
                    return i  # a head still arriving: held whole (see ``waits``)
            if state == _E_IN:
                sub = self.sub
                j = sub.feed(s, i, final)
                try:  # the scanner validated the text; this guards model text regardless
                    if j > i:
                        if self.role == ARGS:  # the common case, one call less
                            self.sink.on_args(s[i:j])
                        else:
                            self._value_piece(s[i:j])
                    if sub.state == VALUE_DONE:  # not the property: this runs per delta
                        self._value_done()
                except msgspec.DecodeError as exc:
                    self._fail(str(exc))
                    return j
                i = j
                if sub.error is not None:
                    if sub.error is CONTROL:  # a raw newline in a string: escaped
                        self._value_piece(sub.take_control(s[j]))
                        i = j + 1
                        continue
                    self._fail(sub.error)
                    return i
                if sub.state != VALUE_DONE:
                    return i
                if self.state == _E_DONE:
                    return i
                continue
            c = s[i]
            if c in _SPACE:
                i += 1
                continue
            if state == _E_OPEN:
                if c != "{":
                    self._fail(f"{OPEN_EXPECTED}, found {c!r}")
                    return i
                self.state = _E_FIRST_KEY
            elif state == _E_FIRST_KEY or state == _E_KEY:
                if c == "}" and state == _E_FIRST_KEY:
                    self._close_object()
                    if self.state == _E_DONE:
                        return i + 1
                    i += 1
                    continue
                if c != '"':
                    if c == "}":  # (a "}" in FIRST_KEY closed the object above)
                        self._fail("a comma before '}' (JSON allows no trailing comma)")
                    elif c == "'":
                        self._fail("expected a double-quoted key, found \"'\": JSON strings "
                                   "and keys take double quotes")
                    else:
                        self._fail(f"expected a double-quoted key, found {c!r}")
                    return i
                self._start(KEY)
                continue
            elif state == _E_COLON:
                if c != ":":
                    self._fail(f"expected ':' after key {self.key!r}, found {c!r}")
                    return i
                self.state = _E_VALUE
            elif state == _E_VALUE:
                path = (*self.path, self.key) if not self.root else ()
                if c == "{" and path in self.prefixes:
                    self.path.append(self.key)
                    self.state = _E_FIRST_KEY
                else:
                    role = self.roles.get(path, SKIP)
                    if role == ARGS and c != "{":
                        if c == '"':
                            role = ARGS_STR  # double-encoded arguments: a string of JSON
                        elif c != "n":
                            wrong = f"the value of {self.key!r} must be a JSON object"
                            if self.root:  # (command: the whole value; nothing after it)
                                self._fail(wrong)
                                return i
                            # read through to the end of the call's object, which then
                            # fails whole: cut here, ``[{"tool": …}]``'s inner object
                            # read as a call of its own (inline_json), which the model
                            # did not write as one
                            self.wrong = self.wrong or wrong
                            role = SKIP
                        else:
                            role = SKIP  # null arguments: none
                    elif role == SKIP and c == "{" and self.skipped is None:
                        self.skipped = path
                    elif role == TEXT:
                        self.answered = True
                    self._start(role)
                    continue
            elif state == _E_AFTER:
                if c == ",":
                    self.state = _E_KEY
                elif c == "}":
                    self._close_object()
                    if self.state == _E_DONE:
                        return i + 1
                else:
                    self._fail(f"expected ',' or '}}' after a member, found {c!r}")
                    return i
            else:  # pragma: no cover - DONE/ERROR are never fed
                return i
            i += 1
        return i

    def waits(self, rest: str) -> bool:
        """``rest`` may still grow into a head ``_jump`` takes whole, written
        the common way (``{"na``, ``{"name": "sea``, ``, "argum``): hold it.
        Nothing in a head before the name's closing quote or the arguments'
        ``{`` makes an event, so holding it changes no event, only the work:
        a set lookup per delta instead of the steps."""
        jumps = self.jumps
        if jumps is None:
            return False
        if self.state == _E_OPEN:
            if rest in jumps.head_prefixes:
                return True
            for head in jumps.heads:  # the name itself still arriving
                if rest.startswith(head):
                    name = rest[len(head) :]
                    return len(name) < _NAME_HOLD and '"' not in name and "\\" not in name
            return False
        return self.state == _E_AFTER and not self.path and rest in jumps.args_prefixes

    def holds(self) -> frozenset[str]:
        """The texts ``waits`` holds whatever else is true, as one set (a body's
        ``holds``: one lookup, where ``waits`` is a call and a few tests)."""
        jumps = self.jumps
        if jumps is not None:
            if self.state == _E_OPEN:
                return jumps.head_prefixes
            if self.state == _E_AFTER and not self.path:
                return jumps.args_prefixes
        return NO_HOLDS

    def take_head(self, s: str) -> int:
        """The head that ``s`` completes, taken without the steps, for a body's fast
        path: ``{"name": "TOOL"`` from OPEN when nothing or the start of ``,
        "arguments": {`` follows (the sink hears the name; the rest is for the
        caller to hold), or ``, "arguments": `` from AFTER at the top level up to
        the ``{``, which starts the arguments (``resume`` puts that back). Returns
        where the head ends, or -1 with nothing taken. Exactly what ``feed``
        would do with ``s``, minus its steps."""
        jumps = self.jumps
        if jumps is None:
            return -1
        if self.state == _E_OPEN:
            m = jumps.head.match(s)
            if m is None:
                return -1
            if m.end() < len(s) and s[m.end() :] not in jumps.args_prefixes:
                return -1
            return self._took_name(m)
        if self.state != _E_AFTER or self.path or jumps.args is None:
            return -1
        m = jumps.args.match(s)
        return -1 if m is None else self._took_args(m)

    def end_args(self) -> bool:
        """The arguments value (a top-level member) ended: AFTER it, as ``feed``
        would be. False, with nothing changed, for any other value."""
        if self.role != ARGS or self.path or self.root or self.state != _E_IN:
            return False
        self.state = _E_AFTER
        self.given += 1
        return True

    def end_object(self) -> bool:
        """A ``}`` after the top-level members: the envelope is done, as ``feed``
        would have it. False, with nothing changed, anywhere else."""
        if self.state != _E_AFTER or self.path or self.root:
            return False
        self.state = _E_DONE
        return True

    def resume(self, key: str, role: int) -> None:
        """Undo ``take_head``'s start of the arguments (the caller's scanner
        refused what followed): back to AFTER the member ``key`` read as
        ``role``. (The scanner is for the next value, which restarts it.)"""
        self.key = key
        self.role = role
        self.state = _E_AFTER

    def _jump(self, s: str, i: int) -> int:
        """The common envelope head in one regex match: ``{"name": "TOOL"`` from
        OPEN, ``, "arguments": {`` from AFTER at the top level. What matches is
        exactly what the character steps below would accept, so this only skips
        work; anything else is left to them."""
        jumps = self.jumps
        assert jumps is not None
        if self.state == _E_OPEN:
            m = jumps.head.match(s, i)
            # the feed loop comes back here for the arguments
            return i if m is None else self._took_name(m)
        if self.path or jumps.args is None:
            return i
        m = jumps.args.match(s, i)
        return i if m is None else self._took_args(m)

    def _took_name(self, m: re.Match[str]) -> int:
        """``Jumps.head`` matched: the name key and the name read, AFTER them."""
        self.key = m.group(1)
        self.sink.on_name(m.group(2))  # no escapes matched: the text is the name
        self.state = _E_AFTER
        return m.end()

    def _took_args(self, m: re.Match[str]) -> int:
        """``Jumps.args`` matched: the arguments key read and its value started;
        returns where the arguments' ``{`` is (the scanner reads from there)."""
        self.key = m.group(1)
        self._start(ARGS)
        return m.end() - 1

    def _close_object(self) -> None:
        if self.path:
            self.path.pop()
            self.state = _E_AFTER
        else:
            self.state = _E_DONE

    def _start(self, role: int) -> None:
        self.role = role
        self.state = _E_IN
        self.sub.restart()
        self.pieces = []
        self.first = True

    def _value_piece(self, piece: str) -> None:
        role = self.role
        if role == ARGS:
            self.sink.on_args(piece)
        elif role == TEXT or role == REASONING:
            if self.pieces or (self.first and not piece.startswith('"')):
                # not a string (decided by its first piece): emitted as JSON text
                # when complete
                self.pieces.append(piece)
                return
            self._stream_string(piece, role == REASONING)
        elif role != SKIP:
            self.pieces.append(piece)

    def _stream_string(self, piece: str, reasoning: bool) -> None:
        # the scanner never splits an escape or a surrogate pair: each piece decodes alone
        if self.first:
            piece = piece[1:]
            self.first = False
        if self.sub.state == VALUE_DONE:
            piece = piece[:-1]
        if piece:
            self.sink.on_text(msgspec.json.decode(f'"{piece}"'), reasoning)

    def _value_done(self) -> None:
        role = self.role
        self.state = _E_DONE if self.root else _E_AFTER
        if role == ARGS:
            self.given += 1
        elif role == KEY:
            key = msgspec.json.decode("".join(self.pieces))
            self.key = key if isinstance(key, str) else ""
            self.state = _E_COLON
        elif role == ARGS_STR:
            self.given += 1
            value = msgspec.json.decode("".join(self.pieces))
            # (a raw newline the model wrote in a string of the arguments is now
            # one in the decoded text: escaped, as in arguments written as JSON)
            self.sink.on_args(escape_controls(value) if isinstance(value, str) else "")
        elif role == NAME:
            self.sink.on_name(msgspec.json.decode("".join(self.pieces)))
        elif (role == TEXT or role == REASONING) and self.pieces:
            self.sink.on_text("".join(self.pieces), role == REASONING)
