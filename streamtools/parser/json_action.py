"""The ``json_action`` dialect: a fenced block ```` ```json action ```` holding
``{"tool": "NAME", "parameters": {…}}`` and a closing fence; several per reply.

Theory of operation
-------------------
Text mode looks for the whole opening fence line, newline included (so the
decision costs no hold-back beyond the marker); then comes the JSON object
(``tool``, or ``name``; ``parameters``, or ``arguments``/``args``/``input``:
arguments given twice, or under a key read nowhere, are a ``CallError``), then
whitespace and the closing fence (a chat template's special token such as
``<|im_end|>`` there is layout, see ``JsonCallBody.loose_suffix``). A fence line with
anything else on it (```` ```json actions ````, trailing spaces) is an ordinary
code fence and stays text; so does a plain ```` ```json ```` fence. A fence inside a JSON
string is content. A JSON error skips to the closing fence and becomes one
``CallError`` carrying the whole block. A block may hold several calls, as a
JSON array of call objects or one object after another: each is a call, ending
where the next begins (see ``JsonCallBody``). The dialect has no stop marker; at
``end(finish_reason="stop")`` a complete object whose closing fence is missing
still completes (the fence is decoration, the JSON is the call).

A fence that ends a call may be the next block's opening fence: a model that
leaves a block open and writes its next one (```` ```json action ```` right
after the object) gave one call and then the next block as text, its call
lost. So after the fence the body waits (``AFTER``, at most the length of
``json action\r\n``, held like a marker) for what follows: ``json action`` and
a newline begin the next call, in this body; anything else ends it. The first
call has already ended at the fence (invariant 5), and completes as any call
closed by a fence does; the fence is in its raw text, the rest of the line in
the next call's.
"""

from __future__ import annotations

from streamtools.events import ParserEvent
from streamtools.parser.calls import DONE, RUNNING, CallBody, CallContext, DialectSyntax
from streamtools.parser.envelope import ARGS, NAME, NO_HOLDS
from streamtools.parser.jsoncall import SKIP_TO_CLOSE, JsonCallBody

__all__ = ["JSON_ACTION", "JsonActionBody"]

FENCE = "```"
OPEN = FENCE + "json action\n"
OPEN_CRLF = FENCE + "json action\r\n"
AFTER = 9  # the body's phase after the fence that ended a call (see the docstring)
_NEXT = (OPEN[len(FENCE) :], OPEN_CRLF[len(FENCE) :])  # the rest of an opening fence
_NEXT_START = frozenset(m[:k] for m in _NEXT for k in range(len(m)))  # "" included
_NEXT_LONGEST = len(_NEXT[1])


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
                if len(s) - pos >= _NEXT_LONGEST or s[pos:] not in _NEXT_START:
                    self.status = DONE
                return pos

    def end(self, tail: str, finish_reason: str, out: list[ParserEvent]) -> str | None:
        if self.phase == AFTER:
            self.status = DONE  # the call ended at its fence: ``tail`` is text after it
            return tail or None
        return super().end(tail, finish_reason, out)


def _open(marker: str, ctx: CallContext) -> CallBody | None:
    return JsonActionBody(ctx, marker, prefix=False)


JSON_ACTION = DialectSyntax(
    name="json_action", stop_marker=None, markers=(OPEN, OPEN_CRLF), open=_open
)
