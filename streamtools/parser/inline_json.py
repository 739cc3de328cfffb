"""The ``inline_json`` dialect: ``{"tool": "NAME", "arguments": {…}}`` anywhere in
prose; several per reply; only known tool names count. Llama 3.x's own form,
``{"name": "NAME", "parameters": {…}}``, maybe after ``<|python_tag|>`` or with
``"type": "function"`` first, is a call too when NAME is a tool of the catalog, as
is OpenAI's ``{"type": "function", "function": {"name": "NAME", "arguments": {…}}}``.

Theory of operation
-------------------
Every ``{`` in visible text opens a *decision window*: the body reads the exact
shape ``{`` ws ``"tool"`` ws ``:`` ws ``"NAME"`` (``ws`` at most 8 whitespace
characters each): one character at a time, except that the common spellings
``"tool": "`` / ``"tool":"`` are held while they arrive and taken in one step,
and the name is read in runs. The first character that cannot continue that
shape rejects the window: the ``{`` is text and the rest is rescanned (so an
inline call nested inside other JSON is still found). With a catalog of names,
the name must stay a prefix of a known name (one lookup in the set of their
prefixes) after every run, so a window for an unknown name is rejected as early
as possible; with ``tools=None`` any name (at most 256 characters) is accepted.

The first key may also be ``name``, Llama 3.1-3.3's call form, which those models
write whatever the prompt teaches: ``{"name": "get_weather", "parameters": {…}}``
(``arguments`` too). Only with a catalog, and only for a name in it: JSON with a
``name`` key is common in prose (a user record, a package.json), so without a
catalog, or for another name, the window is text as before. ``<|python_tag|>``,
the special token Llama writes before a call, is a marker too: at most 8
whitespace characters and the ``{`` of a window must follow it, and the tag is
then the call's markup (in its ``raw``); anything else after it leaves the tag
as text.

Llama 3.x models also write ``"type": "function"`` before the name (llama.cpp's
Llama 3.x parser and its grammar trigger allow it; in ggml-org/llama.cpp#24329 a
model on that template opens every call so, and waybarrios/vllm-mlx#580 has Llama
3.3 write it bare), and some models the OpenAI tool
call of the request's ``tools`` list, ``{"type": "function", "function": {"name":
…, "arguments": {…}}}``; with a catalog the window reads both: a first
member ``"type": "function"`` (that exact value, then ``,``), after which the next
key is ``name`` or ``function``, and a ``"function": {`` (first, or after the type),
inside which the next key is ``name``; the arguments are then read under
``function`` (``arguments`` or ``parameters``). Each key or value once: any other
key or value there rejects the window, as a key the window does not know does.

Hold-back bound: the window is at most ``1 + 8 + 6 + 8 + 1 + 8 + 1 + L + 1``
characters, ``L`` the longest name a window reads (256 without a catalog; with
one the longest tool name and 10, since ``functions.NAME`` calls the tool
``NAME``: ``catalog.tool_named``), i.e.
``34 + L``, and ``14 + 8`` more after ``<|python_tag|>``: ``56 + L``. With a
catalog, ``"type"`` ws ``:`` ws ``"function"`` ws ``,`` ws (``6 + 1 + 10 + 1`` and 4
runs of 8: 50) and ``"function"`` ws ``:`` ws ``{`` ws (``10 + 1 + 1`` and 3 runs: 36)
may come before the name's key: ``142 + L``. Text before a ``{`` or the tag is
never held.

Once the name closes the call starts, and the rest of the object is read as an
envelope (``arguments``, also ``parameters``/``args``/``input``; other members
are ignored, but arguments given twice, or none while an object stands under
another key, are ``CallError(reason="malformed")``).
The call ends with the object's closing brace; a JSON error ends it at
the offending character as ``CallError(reason="invalid_json")`` and the rest of
the reply is text again. Arguments that are JSON but no object
(``"arguments": [{"tool": …}]``) are read through to the object's end, and the
whole call is that error: cut at the ``[``, the object inside was read as a
call of its own, which the model did not write as one. Only ``tool`` as the
*first* key makes a call: the bound would otherwise be unbounded.
"""

from __future__ import annotations

from streamtools.events import ParserEvent
from streamtools.parser.calls import REJECTED, CallBody, CallContext, DialectSyntax
from streamtools.parser.catalog import name_prefixes, tool_named
from streamtools.parser.envelope import ARGS, NAME, NO_HOLDS
from streamtools.parser.jsoncall import CUT, ENVELOPE, JsonCallBody
from streamtools.parser.jsonscan import STRING_RUN

__all__ = ["INLINE_JSON", "InlineJsonBody"]

_WS = " \t\r\n"
_WS_LIMIT = 8
_ANY_NAME_LIMIT = 256
# decision-window states: expecting ws/quote, the key letters, ws/colon, ws/quote, the name
_W_KEY_QUOTE, _W_KEY, _W_COLON, _W_VALUE_QUOTE, _W_NAME = range(5)
_KEY = 'tool"'
_NAME_KEY = 'name"'  # Llama 3.x's first key: with a catalog only (see the docstring)
PYTHON_TAG = "<|python_tag|>"
_W_OPEN = 5  # after ``<|python_tag|>``: whitespace, then the window's ``{``
# Llama's ``"type": "function"`` before the name, and OpenAI's ``"function": {``
# around it (with a catalog only): the keys, the type's value (its opening quote
# too, so that it is no key), and the states after their colons: ws/quote of the
# type's value, ws/brace of the function's object
_TYPE_KEY = 'type"'
_FUNCTION_KEY = 'function"'
_TYPE_VALUE = '"function"'
_W_TYPE_QUOTE, _W_BRACE, _W_DEAD = 6, 7, -1
_AFTER_COLON = {
    _KEY: _W_VALUE_QUOTE, _NAME_KEY: _W_VALUE_QUOTE, _TYPE_KEY: _W_TYPE_QUOTE,
    _FUNCTION_KEY: _W_BRACE, _TYPE_VALUE: _W_DEAD,
}
# the window as models write it, read in one step when it is there whole, held
# by one set lookup while it arrives; any other spelling takes the steps below
_HEADS = ('"tool": "', '"tool":"', '"name": "', '"name":"')
_HEAD_PREFIXES = frozenset(h[:n] for h in _HEADS for n in range(1, len(h)))
_HEAD_LONGEST = max(map(len, _HEADS))


class InlineJsonBody(JsonCallBody):
    roles = {
        ("tool",): NAME, ("arguments",): ARGS, ("parameters",): ARGS, ("args",): ARGS,
        ("input",): ARGS, ("function", "arguments"): ARGS, ("function", "parameters"): ARGS,
    }
    close = None
    on_error = CUT
    opened = True
    example = 'Write {"tool": "TOOL", "arguments": {"param": "value"}}.'

    def __init__(self, ctx: CallContext, marker: str, names: tuple[str, ...] | None) -> None:
        super().__init__(ctx, marker)
        self.known = name_prefixes(names) if names is not None else None
        self.w = _W_OPEN if marker == PYTHON_TAG else _W_KEY_QUOTE
        self.k = 0  # letters of the key matched, or whitespace run length
        self.key = _KEY  # the first key being read: ``tool"`` or ``name"``
        self.name = ""

    def renew_with(self, marker: str, names: tuple[str, ...] | None) -> None:
        """``renew`` for the window's state too (``__init__``'s ``names``)."""
        self.renew(marker)
        self.known = name_prefixes(names) if names is not None else None
        self.w = _W_OPEN if marker == PYTHON_TAG else _W_KEY_QUOTE
        self.k = 0
        self.key = _KEY
        self.name = ""

    def _possible(self, name: str) -> bool:
        """``name`` may still become a tool name this window accepts."""
        return name in self.known if self.known is not None else len(name) <= _ANY_NAME_LIMIT

    def _head_arriving(self, rest: str) -> bool:
        """At the window's start, ``rest`` may still grow into a common head."""
        return self.w == _W_KEY_QUOTE and self.k == 0 and rest in _HEAD_PREFIXES

    def prefix_holds(self) -> frozenset[str]:
        return _HEAD_PREFIXES if self.w == _W_KEY_QUOTE and self.k == 0 else NO_HOLDS

    def fast_prefix(self, delta: str) -> list[ParserEvent] | None:
        if (
            self.w == _W_NAME and '"' not in delta and "\\" not in delta and delta.isprintable()
            and self._possible(self.name + delta)
        ):
            # a piece of the name, still a possible one: what ``prefix`` does with it
            self.name += delta
            self.rest = ""
            self.raw.append(delta)
            self.size += len(delta)
            return []
        if self._head_arriving(delta):
            self.rest = delta  # the window's head still arriving: held whole
            return []
        return None

    def prefix(self, s: str, i: int) -> int:  # noqa: C901 - the window's small machine
        n = len(s)
        if self.w == _W_KEY_QUOTE and self.k == 0:
            # (a window of the rest: a head is short, and slicing all of a long
            # delta per call would make one large delta cost quadratic time)
            rest = s[i : i + _HEAD_LONGEST]
            if self._head_arriving(rest) and i + len(rest) == n:
                return i  # held whole until it is there (see ``fast_prefix``)
            for head in _HEADS:
                if rest.startswith(head):
                    if self.known is None if head[1] == "n" else self.key != _KEY:
                        # no catalog: a "name" key is prose; after ``"type":
                        # "function",`` or in ``"function": {`` the name key only
                        # (the steps reject the window)
                        break
                    self.w = _W_NAME
                    i += len(head)
                    break
        while i < n:
            c = s[i]
            w = self.w
            if w == _W_NAME:
                # the name in runs, not characters: up to a quote (the end) or worse
                # (a control character, a lone surrogate half)
                j = STRING_RUN.match(s, i).end()  # type: ignore[union-attr]
                if j > i:
                    name = self.name + s[i:j]
                    if not self._possible(name):
                        break
                    self.name = name
                    i = j
                    if i == n:
                        return i
                    c = s[i]
                if c == '"':
                    return self._decide(i + 1)
                break  # a backslash or a control character: not a name
            if w == _W_KEY:
                if self.k == 0:
                    self.key = _KEY if self.known is None else self._catalog_key(c)
                if c != self.key[self.k]:
                    if self.k != 1 or c != "y" or self.key != _KEY or self.known is None:
                        break
                    self.key = _TYPE_KEY  # ``{"type": "function", "name": …``
                self.k += 1
                if self.k == len(self.key):
                    self.w, self.k = _W_COLON, 0
            elif c in _WS:
                self.k += 1
                if self.k > _WS_LIMIT:
                    break
            elif w == _W_KEY_QUOTE and c == '"':
                self.w, self.k = _W_KEY, 0
            elif w == _W_OPEN and c == "{":
                self.w, self.k = _W_KEY_QUOTE, 0
            elif w == _W_COLON and c == ":":
                self.w, self.k = _AFTER_COLON[self.key], 0
                if self.w == _W_DEAD:
                    break  # ``"type": "function":``
            elif w == _W_VALUE_QUOTE and c == '"':
                self.w, self.k = _W_NAME, 0
            elif not self._preamble(w, c):
                break
            i += 1
        else:
            return i
        self.status = REJECTED
        return i

    def _catalog_key(self, c: str) -> str:
        """The key a window with a catalog reads, from its first letter ``c``:
        the key read before it says where the window is (``_KEY``: none yet;
        the type's value: after ``"type": "function",``; ``function``: in its
        object). A key that does not start with ``c`` rejects the window."""
        before = self.key
        if before == _KEY or before == _TYPE_VALUE:
            if c == "n":
                return _NAME_KEY
            if c == "f":
                return _FUNCTION_KEY
            return _KEY if before == _KEY else _NAME_KEY
        return _NAME_KEY  # in ``"function": {``: the name only

    def _preamble(self, w: int, c: str) -> bool:
        """One step of ``"type": "function",`` or ``"function": {`` before the
        name (the module docstring); False if ``c`` rejects the window."""
        if w == _W_TYPE_QUOTE and c == '"':
            self.key, self.w, self.k = _TYPE_VALUE, _W_KEY, 1  # its letters, as a key's
        elif w == _W_COLON and c == "," and self.key == _TYPE_VALUE:
            self.w, self.k = _W_KEY_QUOTE, 0  # the next key: ``name`` or ``function``
        elif w == _W_BRACE and c == "{":
            self.env.path.append("function")  # the arguments are its members
            self.w, self.k = _W_KEY_QUOTE, 0
        else:
            return False
        return True

    def _decide(self, i: int) -> int:
        name = self.name
        if tool_named(self.ctx.catalog, name) is None:
            self.status = REJECTED
            return i
        self.undecided = False
        self.phase = ENVELOPE
        self.call.named(name, self.out)
        self.env.after_value()
        return i


def _open(marker: str, ctx: CallContext) -> CallBody | None:
    names = tuple(ctx.catalog) or None
    body = InlineJsonBody.spare(ctx)
    if body is None:
        return InlineJsonBody(ctx, marker, names)
    body.renew_with(marker, names)
    return body


INLINE_JSON = DialectSyntax(
    name="inline_json", stop_marker=None, markers=("{", PYTHON_TAG), open=_open,
    hold_bound=56 + 256,
)
