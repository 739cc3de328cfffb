"""Incremental JSON scanning shared by the JSON dialects.

Theory of operation
-------------------
``ValueScanner`` scans exactly one JSON value that arrives in pieces. It keeps a
bracket stack and a small grammar state, jumps over string contents and
whitespace with compiled regexes (no per-character Python loop inside strings),
and validates each structural token as it passes, so a syntax error is found at
the character that causes it (a hermes closing tag after a broken object is then
still found). ``feed(s, i)`` returns how far it consumed; it stops *before* an
incomplete escape (``\\``, ``\\u12``) or an incomplete number or literal at the
end of ``s`` (``12`` may become ``123``, ``tru`` is not yet ``true``). The caller
holds that tail and offers it again with the next delta. Everything consumed is
therefore a safe cut: the argument text streamed so far never needs retracting.

Only a bounded tail (an escape of at most 6 characters, a literal of at most 5,
or a number of at most ``TOKEN_MAX`` characters) is ever examined twice;
``examined`` counts every character the scanner looked at so tests can prove
linear work. A longer number or bare word is refused, however it is cut (no
JSON decoder reads a thousand-digit number as anything useful; a model that
writes one is looping): held, it would be read again with every delta,
quadratic in its length.

``feed_run(s)`` is ``feed(s, 0)`` for a short piece with no closing bracket,
remembered: without a closer the stack only grows, so what the scanner does with
such a piece (where it stops, the state after it, the brackets it opens) depends
only on the piece, the state, whether a string is a key and the innermost
bracket. Models write the same punctuation over and over (``", "``,
``": "``, ``", "li``), so a call's punctuation is mostly one dict lookup instead
of the loop. The table is shared by all scanners and cleared when it reaches
``_RUNS_MAX`` entries; a piece that fails is never remembered.

Errors name the mistakes models make in the terms of the fix: Python's
``True``/``False``/``None`` (write ``true``/``false``/``null``), a trailing
comma, single quotes. They are errors, not accepted: the argument text streams
as the model wrote it (raw ``ArgsDelta``), and a trailing comma is out before
the ``}`` that shows it is one, so accepting either would mean arguments that
are not the text streamed.

One mistake is taken instead: a raw control character (a newline, a tab) inside
a string, which models write all the time in code and file contents. ``feed``
stops before it with ``error`` set to ``CONTROL`` and the scanner still in the
string; a caller that takes it (``take_control``) streams its JSON escape
(``\\n``, ``\\t``, ``\\r``, ``\\u00XX``) in its place and feeds on, so the
arguments are the text the model meant and the streamed text is still JSON that
decodes to them; the call's ``raw`` keeps what the model wrote. Only there does
the streamed text differ from the model's. It is one character, known where it
stands, so nothing streamed is ever retracted; the lanes and ``feed_run`` never
see it (they take printable deltas, and a failing piece is not remembered).

The call envelope around the value (``{"name": …, "arguments": {…}}``) is
read by ``streamtools.parser.envelope``, which uses this scanner for every value.
"""

from __future__ import annotations

import re

__all__ = [
    "CONTROL", "IN_STRING", "STRING_RUN", "VALUE_DONE", "WHOLE_ESCAPES", "ValueScanner",
    "escape_controls",
]

# a run of JSON string content whose escapes are all whole and valid (a surrogate
# pair whole): what can be taken or decoded before the rest of a string arrives
# (the JSON body's fast path; the proxy's custom-tool text)
WHOLE_ESCAPES = re.compile(
    r'(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u(?![dD][89a-fA-F])[0-9a-fA-F]{4}'
    r"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})*"
)

_WS = re.compile(r"[ \t\r\n]*")
# string content up to a quote, a backslash, a control character or a lone UTF-16
# surrogate half (as a character: not text UTF-8 can carry, so not JSON); the
# envelope's head and inline_json's tool name are read with it too
STRING_RUN = re.compile(r'[^"\\\x00-\x1f\ud800-\udfff]*')
_TOKEN = re.compile(r"[-+.0-9A-Za-z]+")
TOKEN_MAX = 1000  # the longest number or bare word (held until it ends)
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_LOW = re.compile(r"\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_LOW_PART = re.compile(r"(?:\\(?:u(?:[dD](?:[c-fC-F][0-9a-fA-F]{0,2})?)?)?)?\Z")
_SPACE = " \t\r\n"
# feed_run's table: (piece, state, is_key, innermost closer) -> (end, state, is_key,
# closers the piece pushed)
_RUNS: dict[tuple[str, int, bool, str], tuple[int, int, bool, list[str]]] = {}
_RUNS_MAX = 4096
_RUN_LEN = 16  # longer pieces rarely repeat: scanned, not remembered

# ``error`` when ``feed`` stopped at a raw control character in a string (see
# ``take_control``); a caller that does not take it reports it as the error it was
CONTROL = "raw control character in a string (escape newlines as \\n)"
_CONTROL_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
_CONTROL_CHAR = re.compile(r"[\x00-\x1f]")

_PYTHON = {"True": "true", "False": "false", "None": "null"}


def _not_a_value(tok: str) -> str:
    if tok in _PYTHON:  # a model writing Python: say what JSON calls it
        return f"{tok!r} is Python, not JSON: write {_PYTHON[tok]}"
    return f"{tok!r} is not a JSON value (strings need double quotes)"


def _misplaced(c: str, where: str, after_comma: bool) -> str:
    """The message for ``c`` where a value or key should start (after a comma
    when ``after_comma``), naming the usual cause: a trailing comma (JSON has
    none), or single quotes (JSON takes double ones)."""
    if after_comma and c in "}]":
        return f"a comma before {c!r} (JSON allows no trailing comma)"
    if c == "'":
        return f"unexpected \"'\" where {where}: JSON strings and keys take double quotes"
    return f"unexpected {c!r} where {where}"


# ValueScanner states
_VALUE, _FIRST_ITEM, _FIRST_KEY, _KEY, _COLON, _AFTER, _STRING, _DONE, _ERROR = range(9)
IN_STRING, VALUE_DONE = _STRING, _DONE


def escape_controls(text: str) -> str:
    """``text``, JSON written whole (a value held until it closed), with each raw
    control character inside a string as its escape, as ``take_control`` streams
    it; ``text`` itself when it has none (or fails before one)."""
    if _CONTROL_CHAR.search(text) is None:
        return text
    scanner = ValueScanner()
    pieces: list[str] = []
    i = 0
    while True:
        j = scanner.feed(text, i, final=True)
        pieces.append(text[i:j])
        if scanner.error is not CONTROL:
            break
        pieces.append(scanner.take_control(text[j]))
        i = j + 1
    if len(pieces) == 1:
        return text
    pieces.append(text[j:])  # after the value (or an error): as it was
    return "".join(pieces)


class ValueScanner:
    """Scans one JSON value incrementally (see the module docstring)."""

    __slots__ = ("error", "examined", "is_key", "stack", "state")

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.state = _VALUE
        self.is_key = False
        self.error: str | None = None
        self.examined = 0

    def restart(self) -> None:
        """Scan a new value (an envelope reuses one scanner for all its members)."""
        self.stack.clear()
        self.state = _VALUE
        self.is_key = False
        self.error = None

    @property
    def done(self) -> bool:
        return self.state == _DONE

    def _fail(self, message: str) -> None:
        self.state = _ERROR
        self.error = message

    def take_control(self, c: str) -> str:
        """After ``feed`` stopped at a raw control character ``c`` in a string
        (``error is CONTROL``): the scanner takes it, and this is its JSON escape,
        the text to emit in its place (``\\n``, ``\\t``, ``\\r``, ``\\u00XX``).
        Feed on from the character after it."""
        self.error = None
        return _CONTROL_ESCAPES.get(c) or f"\\u{ord(c):04x}"

    def feed_run(self, s: str) -> int:
        """``feed(s, 0)`` for ``s`` without ``}`` or ``]``, remembered (see the
        module docstring): the same end, state, stack and count of examined
        characters. A piece with a syntax error returns -1 and leaves the scanner
        as it was (the caller gives it to a machine that reports the error)."""
        stack = self.stack
        state, is_key = self.state, self.is_key
        key = (s, state, is_key, stack[-1] if stack else "")
        hit = _RUNS.get(key)
        if hit is not None:
            self.examined += len(s)
            j, self.state, self.is_key, pushed = hit
            if pushed:
                stack.extend(pushed)
            return j
        depth = len(stack)
        j = self.feed(s, 0)
        if self.error is not None:
            # without a closer the stack only grew, so the undo is exact
            del stack[depth:]
            self.state, self.is_key, self.error = state, is_key, None
            return -1
        if len(s) <= _RUN_LEN:
            if len(_RUNS) >= _RUNS_MAX:
                _RUNS.clear()
            _RUNS[key] = (j, self.state, self.is_key, stack[depth:])
        return j

    def feed(self, s: str, i: int, final: bool = False) -> int:  # noqa: C901 - one state machine
        n = len(s)
        self.examined += n - i
        stack = self.stack
        state = self.state
        while i < n:
            if state == _STRING:
                j = STRING_RUN.match(s, i).end()  # type: ignore[union-attr]
                if j == n:
                    i = n
                    break
                c = s[j]
                if c == '"':
                    i = j + 1
                    if self.is_key:
                        state = _COLON
                    elif stack:
                        state = _AFTER
                    else:
                        state = _DONE
                        break
                elif c == "\\":
                    if j + 1 >= n:
                        i = j
                        break
                    e = s[j + 1]
                    if e == "u":
                        if j + 6 > n:
                            i = j
                            break
                        if _HEX4.match(s, j + 2) is None:
                            self._fail("bad \\u escape in a string")
                            return j
                        unit = int(s[j + 2 : j + 6], 16)
                        if 0xD800 <= unit <= 0xDBFF:  # a pair is never split: hold both
                            if j + 12 > n and _LOW_PART.match(s, j + 6) is not None:
                                i = j
                                break
                            if _LOW.match(s, j + 6) is None:
                                self._fail("a \\u surrogate escape without its pair")
                                return j
                            i = j + 12
                        elif 0xDC00 <= unit <= 0xDFFF:
                            self._fail("a \\u surrogate escape without its pair")
                            return j
                        else:
                            i = j + 6
                    elif e in '"\\/bfnrt':
                        i = j + 2
                    else:
                        self._fail(f"invalid escape \\{e} in a string")
                        return j
                elif c < " ":
                    # JSON wants it escaped; models write code with raw newlines all
                    # the same: stop before it, still in the string, and let the
                    # caller take it as its escape (``take_control``)
                    self.state = _STRING
                    self.error = CONTROL
                    self.examined -= n - j - 1
                    return j
                else:
                    self._fail("a lone UTF-16 surrogate in a string, which is not text")
                    return j
                continue
            c = s[i]
            if c in _SPACE:
                # one space (``", "``, ``": "``) without the regex; a run with it
                i += 1
                if i < n and s[i] in _SPACE:
                    i = _WS.match(s, i).end()  # type: ignore[union-attr]
                if i == n:
                    break
                c = s[i]
            if state == _VALUE or state == _FIRST_ITEM:
                if c == '"':
                    state = _STRING
                    self.is_key = False
                    i += 1
                elif c == "{":
                    stack.append("}")
                    state = _FIRST_KEY
                    i += 1
                elif c == "[":
                    stack.append("]")
                    state = _FIRST_ITEM
                    i += 1
                elif c == "]" and state == _FIRST_ITEM:
                    stack.pop()
                    i += 1
                    state = _AFTER if stack else _DONE
                else:
                    m = _TOKEN.match(s, i)
                    if m is None:
                        self._fail(_misplaced(c, "a value should start", state == _VALUE))
                        return i
                    j = m.end()
                    tok = m.group()
                    if len(tok) > TOKEN_MAX:  # whole or cut alike, so any split agrees
                        self._fail(f"a number or word of over {TOKEN_MAX} characters")
                        return i
                    if j == n and not final:
                        break
                    if tok not in ("true", "false", "null") and _NUMBER.fullmatch(tok) is None:
                        self._fail(_not_a_value(tok))
                        return i
                    i = j
                    state = _AFTER if stack else _DONE
            elif state == _FIRST_KEY or state == _KEY:
                if c == '"':
                    state = _STRING
                    self.is_key = True
                    i += 1
                elif c == "}" and state == _FIRST_KEY:
                    stack.pop()
                    i += 1
                    state = _AFTER if stack else _DONE
                else:
                    self._fail(_misplaced(c, "a double-quoted key should be", state == _KEY))
                    return i
            elif state == _COLON:
                if c != ":":
                    self._fail(f"expected ':' after a key, found {c!r}")
                    return i
                state = _VALUE
                i += 1
            elif state == _AFTER:
                if c == ",":
                    state = _KEY if stack[-1] == "}" else _VALUE
                    i += 1
                elif c == stack[-1]:
                    stack.pop()
                    i += 1
                    state = _AFTER if stack else _DONE
                else:
                    self._fail(f"expected ',' or {stack[-1]!r}, found {c!r}")
                    return i
            else:  # _DONE or _ERROR on entry: the value is over, nothing more is read
                break
            if state == _DONE:
                break
        self.state = state
        return i
