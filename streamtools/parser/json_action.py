"""The ``json_action`` dialect: a fenced block ```` ```json action ```` holding
``{"tool": "NAME", "parameters": {…}}`` and a closing fence; several per reply.

Theory of operation
-------------------
Text mode looks for the whole opening fence line, newline included (so the
decision costs no hold-back beyond the marker); then comes the JSON object
(``tool``, or ``name``; ``parameters``, or ``arguments``/``args``), then
whitespace and the closing fence. A fence line with
anything else on it (```` ```json actions ````, trailing spaces) is an ordinary
code fence and stays text; so does a plain ```` ```json ```` fence. A fence inside a JSON
string is content. A JSON error skips to the closing fence and becomes one
``CallError`` carrying the whole block. The dialect has no stop marker; at
``end(finish_reason="stop")`` a complete object whose closing fence is missing
still completes (the fence is decoration, the JSON is the call).
"""

from __future__ import annotations

from streamtools.parser.calls import CallBody, CallContext, DialectSyntax
from streamtools.parser.envelope import ARGS, NAME
from streamtools.parser.jsoncall import SKIP_TO_CLOSE, JsonCallBody

__all__ = ["JSON_ACTION", "JsonActionBody"]

FENCE = "```"
OPEN = FENCE + "json action\n"
OPEN_CRLF = FENCE + "json action\r\n"


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


def _open(marker: str, ctx: CallContext) -> CallBody | None:
    return JsonActionBody(ctx, marker, prefix=False)


JSON_ACTION = DialectSyntax(
    name="json_action", stop_marker=None, markers=(OPEN, OPEN_CRLF), open=_open
)
