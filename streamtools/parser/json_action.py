"""The ``json_action`` dialect: a fenced block ```` ```json action ```` holding
``{"tool": "NAME", "parameters": {…}}`` and a closing fence; several per reply.

Theory of operation
-------------------
Text mode looks for the opening fence line. The rest of that line may hold only
spaces; then comes the JSON object (``tool``, or ``name``; ``parameters``, or
``arguments``/``args``), then whitespace and the closing fence. A fence line with
anything else on it (```` ```json actions ````) is an ordinary code fence and
stays text; so does a plain ```` ```json ```` fence. A fence inside a JSON
string is content. A JSON error skips to the closing fence and becomes one
``CallError`` carrying the whole block. The dialect has no stop marker; at
``end(finish_reason="stop")`` a complete object whose closing fence is missing
still completes (the fence is decoration, the JSON is the call).
"""

from __future__ import annotations

from streamtools.parser.calls import REJECTED, CallBody, CallContext, DialectSyntax
from streamtools.parser.jsoncall import ENVELOPE, SKIP_TO_CLOSE, JsonCallBody
from streamtools.parser.jsonscan import ARGS, NAME

__all__ = ["JSON_ACTION", "JsonActionBody"]

FENCE = "```"
OPEN = FENCE + "json action"
_LINE_LIMIT = 64


class JsonActionBody(JsonCallBody):
    roles = {
        ("tool",): NAME,
        ("name",): NAME,
        ("parameters",): ARGS,
        ("arguments",): ARGS,
        ("args",): ARGS,
    }
    close = FENCE
    on_error = SKIP_TO_CLOSE
    example = (
        'Write a fenced block: ```json action, a newline, {"tool": "TOOL", "parameters": '
        '{"param": "value"}}, a newline and ```.'
    )
    spaces = 0

    def prefix(self, s: str, i: int) -> int:
        n = len(s)
        start = i
        while i < n and s[i] in " \t\r":
            i += 1
        self.spaces += i - start
        if self.spaces > _LINE_LIMIT:
            self.status = REJECTED
        elif i < n:
            if s[i] == "\n":
                self.phase = ENVELOPE
                self.undecided = False
                return i + 1
            self.status = REJECTED
        return i


def _open(marker: str, ctx: CallContext) -> CallBody | None:
    return JsonActionBody(ctx, marker)


JSON_ACTION = DialectSyntax(name="json_action", stop_marker=None, markers=(OPEN,), open=_open)
