"""The ``json_object`` dialect: the whole reply is one JSON object,
``{"thought": "…", "action": {"tool": …, "args": {…}}}`` or
``{"thought": "…", "final": {"content": "…"}}``.

Theory of operation
-------------------
The first ``{`` of the reply opens the envelope (``once`` in the syntax table:
later braces are text). Members are dispatched by path as they stream:
``thought`` → ``ReasoningDelta`` (decoded), ``final.content`` (or ``final`` as a
plain string) → ``TextDelta`` (decoded, streamed as the string grows),
``action.tool`` (or ``name``) starts the call, ``action.args`` (or
``arguments``/``parameters``) streams as ``ArgsDelta``. Other members are
ignored. The call ends when the whole object closes, and its ``raw`` is the whole
object text. Whitespace-only text around the object is not visible text
(``drop_outer_whitespace``); other text around it (prose the model should not
have written) is passed through as ``TextDelta``.

What this dialect conserves: not characters (the envelope is markup) but
meaning. For a reply that is one valid envelope, the reasoning deltas
concatenate to the decoded ``thought``, the text deltas to the decoded
``final.content``, and the call's ``CallEnd`` has ``raw`` equal to the object
text, ``name`` equal to ``action.tool`` and ``arguments`` equal to
``action.args``. An object with neither ``action`` nor ``final``, invalid JSON,
or an object cut off by the end of the stream is one ``CallError`` whose ``raw``
is everything from the ``{`` on (a JSON error keeps the rest of the reply).
"""

from __future__ import annotations

from streamtools.parser.calls import CallBody, CallContext, DialectSyntax
from streamtools.parser.jsoncall import SWALLOW, JsonCallBody
from streamtools.parser.jsonscan import ARGS, NAME, REASONING, TEXT

__all__ = ["JSON_OBJECT", "JsonObjectBody"]


class JsonObjectBody(JsonCallBody):
    roles = {
        ("thought",): REASONING,
        ("final",): TEXT,
        ("final", "content"): TEXT,
        ("action", "tool"): NAME,
        ("action", "name"): NAME,
        ("action", "args"): ARGS,
        ("action", "arguments"): ARGS,
        ("action", "parameters"): ARGS,
    }
    close = None
    on_error = SWALLOW
    opened = True
    example = (
        'Reply with one JSON object: {"thought": "...", "action": {"tool": "TOOL", '
        '"args": {...}}} or {"thought": "...", "final": {"content": "..."}}.'
    )

    def __init__(self, ctx: CallContext, marker: str) -> None:
        super().__init__(ctx, marker, prefix=False)

    def envelope_done(self, raw: str) -> None:
        if self.failure is None and self.call.name is None and not self.args_given:
            if self.text_given:
                return  # a final answer: its text is already out
            self.failure = ("malformed", "The reply has neither an action nor a final answer.")
        if self.failure is not None and self.failure[0] == "malformed":
            reason, message = self.failure
            self.failure = (reason, f"{message} {self.example}")
        super().envelope_done(raw)


def _open(marker: str, ctx: CallContext) -> CallBody | None:
    return JsonObjectBody(ctx, marker)


JSON_OBJECT = DialectSyntax(
    name="json_object",
    stop_marker=None,
    markers=("{",),
    open=_open,
    once=True,
    drop_outer_whitespace=True,
)
