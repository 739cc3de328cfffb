"""The ``hermes`` dialect: ``<tool_call>{"name": …, "arguments": {…}}</tool_call>``.

Theory of operation
-------------------
Text mode looks for ``<tool_call>``. The body then expects, after optional
whitespace, a JSON object (anything else within 64 characters means the tag was
prose and it is given back as text). The envelope's ``name`` starts the call,
``arguments`` (also ``parameters``, or OpenAI's nested ``{"function": {"name",
"arguments"}}``; a double-encoded string of JSON is accepted too) streams as
``ArgsDelta``. After the object only whitespace and ``</tool_call>`` may follow.

``</tool_call>`` inside a JSON string is content: the closing tag is looked for
only once the object is complete. On a JSON error the body skips to the next
``</tool_call>`` and reports ``CallError(reason="invalid_json")`` with the whole
raw call. ``</tool_call>`` is the stop marker: when a provider removed it,
``end(finish_reason="stop")`` after a complete object completes the call.
"""

from __future__ import annotations

from streamtools.parser.calls import REJECTED, CallBody, CallContext, DialectSyntax
from streamtools.parser.jsoncall import ENVELOPE, SKIP_TO_CLOSE, JsonCallBody
from streamtools.parser.jsonscan import ARGS, NAME

__all__ = ["HERMES", "HermesBody"]

OPEN, CLOSE = "<tool_call>", "</tool_call>"
_WS_LIMIT = 64


class HermesBody(JsonCallBody):
    roles = {
        ("name",): NAME,
        ("arguments",): ARGS,
        ("parameters",): ARGS,
        ("function", "name"): NAME,
        ("function", "arguments"): ARGS,
    }
    close = CLOSE
    on_error = SKIP_TO_CLOSE
    example = (
        'Write exactly <tool_call>{"name": "TOOL", "arguments": {"param": "value"}}'
        "</tool_call>."
    )

    def prefix(self, s: str, i: int) -> int:
        n = len(s)
        start = i
        while i < n and s[i] in " \t\r\n":
            i += 1
        self.spaces = getattr(self, "spaces", 0) + i - start
        if self.spaces > _WS_LIMIT:
            self.status = REJECTED
            return i
        if i < n:
            if s[i] == "{":
                self.phase = ENVELOPE
                self.undecided = False
            else:
                self.status = REJECTED
        return i


def _open(marker: str, ctx: CallContext) -> CallBody | None:
    return HermesBody(ctx, marker)


HERMES = DialectSyntax(name="hermes", stop_marker=CLOSE, markers=(OPEN,), open=_open)
