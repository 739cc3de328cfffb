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
``arguments``/``parameters``/``input``) streams as ``ArgsDelta``. Other members
are ignored, except that an action whose arguments are given twice, or are
missing while an object stands under another key (``"params": {…}``), is
``CallError(reason="malformed")`` naming it. A ``thought`` is not an answer: a
reply with only a thought and members the dialect does not read (a call written
flat, ``{"thought": …, "tool": …}``, LangChain's ``"action": "NAME",
"action_input": {…}``, ``"final_answer"``) is the error for an object with
neither ``action`` nor ``final``, not an empty answer; its message says what
the object has instead and where that goes (``_misplaced``: the object, complete
JSON then, is decoded once on this error path only), e.g. that the action is an
object holding the tool's name and its ``args``.
The call ends when the whole object closes, and its ``raw`` is the whole
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

Markdown fence. Models often wrap the object in a code block (```` ```json ````,
newline, object, newline, ```` ``` ````). That fence is envelope markup like the
surrounding whitespace: ```` ``` ```` followed by ``json`` (any case) or
nothing, then whitespace and ``{``, opens the object, and after the object
closes, whitespace and a closing ```` ``` ```` (if there) are consumed with it.
Neither is visible text nor part of the call's ``raw`` (the object text). While
the opener is undecided it is held (at most ``_FENCE_HOLD`` characters); any
other fence (```` ```python ````, or text before the ``{``) is prose and is
rescanned as text. Whitespace after a fenced object is dropped even when prose,
not a closing fence, follows. The fence is markup only at the first object of
the reply: once an object has been parsed, later backticks are text.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from streamtools.events import ParserEvent
from streamtools.parser.calls import DONE, REJECTED, RUNNING, CallBody, CallContext, DialectSyntax
from streamtools.parser.envelope import ARGS, NAME, REASONING, TEXT
from streamtools.parser.jsoncall import SWALLOW, JsonCallBody

__all__ = ["JSON_OBJECT", "FencedObjectBody", "JsonObjectBody"]

FENCE = "```"
_OPENER_LIMIT = 24  # the language tag and whitespace between the fence and ``{``
_FENCE_HOLD = len(FENCE) + _OPENER_LIMIT
_OPENER_SO_FAR = re.compile(r"(?i)(?:j|js|jso|json\s*|\s*)")  # can still become one
OPENING, INNER, CLOSING = range(3)


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
        ("action", "input"): ARGS,
    }
    args_key = "args"
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
            if self.env.answered:
                return  # a final answer: its text is already out (a thought is not one)
            self.failure = ("malformed", _misplaced(raw))
        elif self.failure is None and self.call.name is None:
            self.failure = ("malformed", 'The action names no tool: put its name under "tool".')
        if self.failure is not None and self.failure[0] == "malformed":
            reason, message = self.failure
            self.failure = (reason, f"{message} {self.example}")
        super().envelope_done(raw)


_ARGS_KEYS = ("action_input", "args", "arguments", "parameters", "input")
_ANSWER_KEYS = ("final_answer", "answer", "response", "output", "content", "text")


def _misplaced(raw: str) -> str:
    """What an object with no action and no final answer the dialect reads has
    instead, and where it goes (``raw`` is the object, complete JSON: this is
    the error path, the only one that decodes it)."""
    try:
        obj: Any = msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError, UnicodeEncodeError):
        obj = None
    if not isinstance(obj, dict):
        return "The reply has neither an action nor a final answer."
    action = obj.get("action")
    if isinstance(action, str):  # LangChain's {"action": "NAME", "action_input": {…}}
        if action.strip().lower().replace("_", " ") in ("final answer", "final", "finish"):
            return (f"{_json(action)} is no tool: give the answer as "
                    '{"final": {"content": "..."}}, not as an action.')
        given = next((k for k in _ARGS_KEYS if k in obj), None)
        beside = f', with its arguments under "{given}" beside it' if given else ""
        return (f'"action" is the tool\'s name alone{beside}: the action is an object '
                f'that holds both, {{"action": {{"tool": {_json(action)}, "args": {{...}}}}}}.')
    if "action" in obj:
        one = " (one call per reply)" if isinstance(action, list) else ""
        return ('"action" must be an object, {"action": {"tool": "TOOL", "args": {...}}}'
                f"{one}.")
    name = obj.get("tool", obj.get("name"))
    if isinstance(name, str):  # the call written flat, or in another dialect's form
        return (f"The call must be under \"action\": write "
                f'{{"action": {{"tool": {_json(name)}, "args": {{...}}}}}}.')
    if "final" in obj:
        return 'The final answer goes under "content": {"final": {"content": "..."}}.'
    key = next((k for k in _ANSWER_KEYS if k in obj), None)
    if key is not None:
        return f'The answer goes under "final", not "{key}": {{"final": {{"content": "..."}}}}.'
    return "The reply has neither an action nor a final answer."


def _json(name: str) -> str:
    return msgspec.json.encode(name[:80]).decode()


class FencedObjectBody(CallBody):
    """The reply object inside a Markdown fence (see the module docstring): the
    fence is parsed here, the object by an inner ``JsonObjectBody``."""

    def __init__(self, ctx: CallContext, marker: str) -> None:
        super().__init__(ctx, marker)
        self.undecided = True
        self.state = OPENING
        self.opener = ""
        self.inner: JsonObjectBody | None = None

    def fast(self, delta: str) -> list[ParserEvent] | None:
        inner = self.inner
        if self.state != INNER or inner is None:
            return None
        events = inner.fast(delta)
        self.rest = inner.rest
        self.size = len(FENCE) + len(self.opener) + inner.size
        return events

    def feed(self, s: str, pos: int, out: list[ParserEvent]) -> int:
        i, n = pos, len(s)
        while i < n and self.status == RUNNING:
            if self.state == OPENING:
                # the "{" is looked for only as far as the opener may reach: one large
                # delta is not searched (and copied) to its end for each code fence
                room = _OPENER_LIMIT - len(self.opener)
                k = s.find("{", i, i + room + 1)
                end = n if k < 0 else k
                if end - i > room or not _OPENER_SO_FAR.fullmatch(self.opener + s[i:end]):
                    self.status = REJECTED  # another code block: prose
                    return i
                self.opener += s[i:end]
                self.record(s, i, n if k < 0 else k + 1)
                if k < 0:
                    return n
                self.undecided = False
                self.inner = JsonObjectBody(self.ctx, "{")
                self.state = INNER
                i = k + 1
            elif self.state == INNER:
                inner = self.inner
                assert inner is not None
                i = inner.feed(s, i, out)
                self.size = len(FENCE) + len(self.opener) + inner.size
                if inner.status != DONE:
                    return i
                self.state = CLOSING
            else:
                while i < n and s[i] in " \t\r\n":
                    i += 1  # markup around the object, even if prose follows
                if i == n:
                    return n
                if s.startswith(FENCE, i):
                    self.status = DONE
                    return i + len(FENCE)
                if n - i < len(FENCE) and FENCE.startswith(s[i:]):
                    return i  # a closing fence still arriving
                self.status = DONE  # prose after the object: text again
        return i

    def end(self, tail: str, finish_reason: str, out: list[ParserEvent]) -> str | None:
        if self.state == OPENING:
            self.status = REJECTED
            return self.raw_text() + tail  # a fence never followed by an object
        self.status = DONE
        if self.state == INNER:
            assert self.inner is not None
            return self.inner.end(tail, finish_reason, out)
        return tail or None  # a half closing fence is text


def _open(marker: str, ctx: CallContext) -> CallBody | None:
    if marker == FENCE:
        return FencedObjectBody(ctx, marker)
    return JsonObjectBody(ctx, marker)


JSON_OBJECT = DialectSyntax(
    name="json_object",
    stop_marker=None,
    markers=("{", FENCE),
    open=_open,
    once=True,
    drop_outer_whitespace=True,
    hold_bound=_FENCE_HOLD,
)
