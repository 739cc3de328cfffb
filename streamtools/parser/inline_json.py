"""The ``inline_json`` dialect: ``{"tool": "NAME", "arguments": {…}}`` anywhere in
prose; several per reply; only known tool names count.

Theory of operation
-------------------
Every ``{`` in visible text opens a *decision window*: the body reads, one
character at a time, the exact shape ``{`` ws ``"tool"`` ws ``:`` ws ``"NAME"``
(``ws`` at most 8 whitespace characters each). The first character that cannot
continue that shape rejects the window: the ``{`` is text and the rest is
rescanned (so an inline call nested inside other JSON is still found). With a
catalog of names, the name must stay a prefix of a known name at every
character, so a window for an unknown name is rejected as early as possible;
with ``tools=None`` any name (at most 256 characters) is accepted.

Hold-back bound: the window is at most ``1 + 8 + 6 + 8 + 1 + 8 + 1 + L + 1``
characters, ``L`` the longest tool name (256 without a catalog), i.e.
``34 + L``; text before a ``{`` is never held.

Once the name closes the call starts, and the rest of the object is read as an
envelope (``arguments``, also ``parameters``/``args``; other members are
ignored). The call ends with the object's closing brace; a JSON error ends it at
the offending character as ``CallError(reason="invalid_json")`` and the rest of
the reply is text again. Only ``tool`` as the *first* key makes a call: the
bound would otherwise be unbounded.
"""

from __future__ import annotations

from streamtools.parser.calls import REJECTED, CallBody, CallContext, DialectSyntax
from streamtools.parser.envelope import ARGS, NAME
from streamtools.parser.jsoncall import CUT, ENVELOPE, JsonCallBody

__all__ = ["INLINE_JSON", "InlineJsonBody"]

_WS = " \t\r\n"
_WS_LIMIT = 8
_ANY_NAME_LIMIT = 256
# decision-window states: expecting ws/quote, the key letters, ws/colon, ws/quote, the name
_W_KEY_QUOTE, _W_KEY, _W_COLON, _W_VALUE_QUOTE, _W_NAME = range(5)
_KEY = 'tool"'


class InlineJsonBody(JsonCallBody):
    roles = {("tool",): NAME, ("arguments",): ARGS, ("parameters",): ARGS, ("args",): ARGS}
    close = None
    on_error = CUT
    opened = True
    example = 'Write {"tool": "TOOL", "arguments": {"param": "value"}}.'

    def __init__(self, ctx: CallContext, marker: str, names: tuple[str, ...] | None) -> None:
        super().__init__(ctx, marker)
        self.names = names
        self.w = _W_KEY_QUOTE
        self.k = 0  # letters of the key matched, or whitespace run length
        self.name: list[str] = []

    def prefix(self, s: str, i: int) -> int:  # noqa: C901 - the window's small machine
        n = len(s)
        while i < n:
            c = s[i]
            w = self.w
            if w == _W_KEY:
                if c != _KEY[self.k]:
                    break
                self.k += 1
                if self.k == len(_KEY):
                    self.w, self.k = _W_COLON, 0
            elif w == _W_NAME:
                if c == '"':
                    return self._decide(i + 1)
                if c == "\\" or c < " ":
                    break
                self.name.append(c)
                sofar = "".join(self.name)
                if self.names is None:
                    if len(sofar) > _ANY_NAME_LIMIT:
                        break
                elif not any(x.startswith(sofar) for x in self.names):
                    break
            elif c in _WS:
                self.k += 1
                if self.k > _WS_LIMIT:
                    break
            elif w == _W_KEY_QUOTE and c == '"':
                self.w, self.k = _W_KEY, 0
            elif w == _W_COLON and c == ":":
                self.w, self.k = _W_VALUE_QUOTE, 0
            elif w == _W_VALUE_QUOTE and c == '"':
                self.w, self.k = _W_NAME, 0
            else:
                break
            i += 1
        else:
            return i
        self.status = REJECTED
        return i

    def _decide(self, i: int) -> int:
        name = "".join(self.name)
        if name not in self.ctx.catalog:
            self.status = REJECTED
            return i
        self.undecided = False
        self.phase = ENVELOPE
        self.call.named(name, self.out)
        self.env.after_value()
        return i


def _open(marker: str, ctx: CallContext) -> CallBody | None:
    names = tuple(ctx.catalog) or None
    return InlineJsonBody(ctx, marker, names)


INLINE_JSON = DialectSyntax(
    name="inline_json", stop_marker=None, markers=("{",), open=_open, hold_bound=34 + 256
)
