"""The ``json_action`` dialect: a fenced block ```` ```json action ```` holding
``{"tool": "NAME", "parameters": {…}}`` and a closing fence; several per reply.

Theory of operation
-------------------
Text mode looks for the whole taught fence line, newline included (so the
decision costs no hold-back beyond the marker), and for the start of the other
fence lines that mean a call: ``json_action``, ``json-action`` or ``action``
(what models taught ``json action`` write; no language is so named), any of
them in lower case or with its first letter or word capitalised (``JSON action``,
``json Action``, ``ACTION``), and the taught line with up to 4 spaces or tabs
before its newline (``VARIANTS``). After
one of those the body reads the rest of the line (``PREFIX``, undecided, at most
``HOLD_BOUND`` characters held): a newline (``\n`` or ``\r\n``) ends a call's
fence line, anything else makes the fence an ordinary code fence, text. So a
fence line with anything else on it (```` ```json actions ````, ```` ```asm ````,
more than 4 trailing spaces) stays text, and so does a plain ```` ```json ````
fence, in any case, which a model may write to show an example rather than to
call. Then comes the JSON object (``tool``, or ``name``; ``parameters``, or
``arguments``/``args``/``input``: arguments given twice, or under a key read
nowhere, are a ``CallError``), then whitespace and the closing fence (a chat
template's special token such as ``<|im_end|>`` there is layout, see
``JsonCallBody.loose_suffix``). A fence inside a JSON string is content.
A JSON error skips to the closing fence and becomes one ``CallError`` carrying
the whole block. A block may hold several calls, as a JSON array of call
objects or one object after another: each is a call, ending where the next
begins (see ``JsonCallBody``). The dialect has no stop marker; at
``end(finish_reason="stop")`` a complete object whose closing fence is missing
still completes (the fence is decoration, the JSON is the call).

A fence that ends a call may be the next block's opening fence: a model that
leaves a block open and writes its next one (```` ```json action ```` right
after the object) gave one call and then the next block as text, its call
lost. So after the fence the body waits (``AFTER``, holding at most what
``PREFIX`` holds) for what follows: the rest of a call's fence line, taught or
not, begins the next call, in this body; anything else ends it. The first
call has already ended at the fence (invariant 5), and completes as any call
closed by a fence does; the fence is in its raw text, the rest of the line in
the next call's.
"""

from __future__ import annotations

import re

from streamtools.events import ParserEvent
from streamtools.parser.calls import (
    DONE,
    REJECTED,
    RUNNING,
    CallBody,
    CallContext,
    DialectSyntax,
)
from streamtools.parser.envelope import ARGS, NAME, NO_HOLDS
from streamtools.parser.jsoncall import ENVELOPE, SKIP_TO_CLOSE, JsonCallBody

__all__ = ["JSON_ACTION", "JsonActionBody"]

FENCE = "```"
OPEN = FENCE + "json action\n"
OPEN_CRLF = FENCE + "json action\r\n"
# the other fence lines of a call begin so (see the docstring): markers too, each
# neither inside the taught one nor holding it, so that its path is unchanged
VARIANTS = tuple(
    FENCE + v for v in ("json_", "json-", "json action ", "json action\t", "json A", "J", "A", "a")
)
AFTER = 9  # the body's phase after the fence that ended a call (see the docstring)
_NEXT = (OPEN[len(FENCE) :], OPEN_CRLF[len(FENCE) :])  # the rest of an opening fence
_NEXT_START = frozenset(m[:k] for m in _NEXT for k in range(len(m)))  # "" included
_NEXT_LONGEST = len(_NEXT[1])
_SPACE = "[ \t]{0,4}"
# a call's fence line after its backticks, in lower case, whitespace bounded
_INFO = re.compile(rf"(?:json[ _-]action|action){_SPACE}\r?\n")
_WORDS = ("json action", "json_action", "json-action", "action")
# the whole rest of the buffer is the start of one (wait for more)
_INFO_START = re.compile(
    "(?:"
    + "|".join(sorted({re.escape(w[:k]) for w in _WORDS for k in range(len(w))}, key=len)[::-1])
    + rf"|(?:json[ _-]action|action){_SPACE}\r?)\Z"
)
# how one may begin after a closing fence (the markers' starts), and the length
# a buffer needs to tell by them (shorter, it is tested in full)
_VARIANT_FIRST = frozenset("jJaA")
_HEADS = ("json", "J", "A", "action")
_HEADS_LONGEST = 6
# the most a fence line holds back, its newline not yet there
HOLD_BOUND = len(FENCE) + len("json action") + 4 + 1


def _info(s: str, i: int) -> int:
    """Where the fence line whose info string begins at ``s[i]`` ends if it is a
    call's (in any case), -1 if it may still be one (wait), -2 if it is not."""
    t = s[i : i + HOLD_BOUND].lower()  # (what the longest line ends within, and more)
    m = _INFO.match(t)
    if m is not None:
        return i + m.end()  # (the matched characters are ASCII: the same length)
    if len(s) - i < HOLD_BOUND and _INFO_START.match(t) is not None:
        return -1
    return -2


class JsonActionBody(JsonCallBody):
    roles = {
        ("tool",): NAME,
        ("name",): NAME,
        ("parameters",): ARGS,
        ("arguments",): ARGS,
        ("args",): ARGS,
        ("input",): ARGS,
    }
    args_key = "parameters"
    close = FENCE
    several = True
    on_error = SKIP_TO_CLOSE
    example = (
        'Write a fenced block: ```json action, a newline, {"tool": "TOOL", "parameters": '
        '{"param": "value"}}, a newline and ```.'
    )

    def feed(self, s: str, pos: int, out: list[ParserEvent]) -> int:
        while True:
            if self.phase != AFTER:
                pos = JsonCallBody.feed(self, s, pos, out)  # (super(): a lookup more)
                if self.status != DONE:
                    return pos
                # the call ended at a fence: the next block's opening one, maybe
                self.status = RUNNING
                self.phase = AFTER
                self.undecided = True  # what follows is text unless it opens a call
                # (the fence stays as the raw text's last character: the core reads
                # it as the one before what follows; nothing emits it again)
                self.raw = [FENCE]
                self.size = 0
                self.streaming = 0
                self.holds = NO_HOLDS
            for rest in _NEXT:
                if s.startswith(rest, pos):
                    JsonCallBody.__init__(self, self.ctx, rest, prefix=False)
                    pos += len(rest)
                    break
            else:
                if len(s) - pos < _NEXT_LONGEST and s[pos:] in _NEXT_START:
                    return pos  # the taught fence line, maybe: wait
                if s[pos] not in _VARIANT_FIRST or (
                    len(s) - pos >= _HEADS_LONGEST and not s.startswith(_HEADS, pos)
                ):
                    self.status = DONE
                    return pos
                e = _info(s, pos)
                if e < 0:
                    if e == -2:
                        self.status = DONE
                    return pos
                JsonCallBody.__init__(self, self.ctx, s[pos:e], prefix=False)
                pos = e

    def prefix(self, s: str, i: int) -> int:
        # (only after a variant's marker: the taught one opens the envelope at once)
        head = self.raw[0][len(FENCE) :]  # the marker's part of the info string
        e = _info(head + s[i : i + HOLD_BOUND], 0)  # (a bounded copy, once per call)
        if e >= 0:
            self.phase = ENVELOPE
            self.undecided = False
            return i + e - len(head)
        if e == -2:
            self.status = REJECTED  # an ordinary code fence: text
        return i

    def end(self, tail: str, finish_reason: str, out: list[ParserEvent]) -> str | None:
        if self.phase == AFTER:
            self.status = DONE  # the call ended at its fence: ``tail`` is text after it
            return tail or None
        return super().end(tail, finish_reason, out)


def _open(marker: str, ctx: CallContext) -> CallBody | None:
    prefix = marker[-1] != "\n"
    body = JsonActionBody.spare(ctx)
    if body is None:
        return JsonActionBody(ctx, marker, prefix=prefix)
    body.renew(marker, prefix=prefix)
    return body


JSON_ACTION = DialectSyntax(
    name="json_action", stop_marker=None, markers=(OPEN, OPEN_CRLF, *VARIANTS), open=_open,
    hold_bound=HOLD_BOUND,
)
