"""Render side of the ``json_object`` dialect: every reply is exactly one JSON object.

Theory of operation
-------------------
For models that do best under a strict JSON mode: the reply is either an action
``{"thought": "…", "action": {"tool": "NAME", "args": {…}}}`` or an answer
``{"final": {"content": "…"}}``, with no prose around it. The thought is a
short reason, capped (``THOUGHT_MAX`` characters) so the model does not spend
its budget there; a past reply's visible text becomes the thought, shortened
to the cap if needed.

The reply format is stated even when no tool is offered (the parser expects
one JSON object either way). One action per reply: ``project`` writes a past
reply with several calls (possible when the history came from native mode) as
one reply per call, each followed by its result; ``render_reply`` alone writes
them as one object per line, the thought only on the first.

Results go back as tool messages holding ``{"tool": "NAME", "result": "…"}`` (or
``"error"``), followed by the continuation instruction as a user message. The
output is a JSON string with ``<``, ``>``, ``&`` escaped; it cannot end the
object or carry a tag, and decoding restores it verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from streamtools.prompts.renderer import json_text, spoken, unended
from streamtools.prompts.results import JsonResults
from streamtools.prompts.special_tokens import defuse_json
from streamtools.transcript import ToolCall

__all__ = ["THOUGHT_MAX", "JsonObjectRenderer"]

THOUGHT_MAX = 200


_ONE_OBJECT = (
    "Every reply must be exactly one JSON object and nothing else: no text before or "
    "after it, no code fence"
)
_STRINGS_RULE = '- Write every string as a JSON string: a line break as \\n, a quote as \\".'


class JsonObjectRenderer(JsonResults):
    name = "json_object"
    format_always = True  # even without tools, a reply must be one JSON object
    one_call_per_reply = True
    raw_start = re.compile(r'\s*\{\s*"(thought|action)"')
    call_form = (
        '{"thought": "why, in one short sentence", "action": {"tool": "TOOL_NAME", '
        '"args": {"PARAMETER": "value"}}}'
    )
    final_form = '{"final": {"content": "your answer"}}'

    def instructions(self) -> str:
        return "\n".join(
            [
                "# How to reply",
                "",
                _ONE_OBJECT + ".",
                "",
                "To call a tool:",
                self.call_form,
                "",
                "To give your final answer:",
                self.final_form,
                "",
                f"- Keep the thought under {THOUGHT_MAX} characters.",
                _STRINGS_RULE,
                "- One action per reply. After an action, stop: the result comes back as "
                '{"tool": "TOOL_NAME", "result": "…"} (or "error" if the call failed).',
                "- Call only the tools defined under # Tools, and only when you need one.",
            ]
        )

    def instructions_without_tools(self) -> str:
        # no tool to call: the final-answer form only, so the model is not told
        # about tools that are not there
        return "\n".join(
            [
                "# How to reply",
                "",
                _ONE_OBJECT + ":",
                self.final_form,
                "",
                _STRINGS_RULE,
            ]
        )

    def format_call(self, name: str, arguments: dict[str, Any]) -> str:
        return json_text({"action": {"tool": name, "args": arguments}})

    def format_call_text(self, name: str, arguments: str) -> str:
        return self._action_text({}, name, arguments)

    def _action_text(self, head: dict[str, Any], name: str, arguments: str) -> str:
        """The action object with ``arguments`` as written, after ``head`` (the thought)."""
        start = json_text(head)[:-1] + (", " if head else "")
        return f'{start}"action": {{"tool": {json_text(name)}, "args": {arguments}}}}}'

    def render_reply(
        self, text: str, calls: Sequence[ToolCall], *, unparsed: bool = False
    ) -> str:
        if not calls:
            if unparsed:
                # the raw text of a failed call (or answer) object, kept in place by
                # the runtime: the model's object as written, which the repair quotes;
                # wrapped as a final answer, it read as an answer holding the object
                return spoken(text)
            # an answer, whatever it holds (JSON beginning {"action": … too)
            return self.render_final(text)
        lines: list[str] = []
        thought = " ".join(unended(text).split())
        if len(thought) > THOUGHT_MAX:
            thought = thought[: THOUGHT_MAX - 1].rstrip() + "…"
        for i, call in enumerate(calls):
            if self._reusable(call):  # the model's object as written, its thought in it
                lines.append(self.render_call(call))
                continue
            # a call without its raw, or with one in another dialect (a transcript
            # carried across dialects): the action written here, after the thought
            obj: dict[str, Any] = {"thought": thought} if thought and i == 0 else {}
            if call.arguments_text is not None:  # the text as written, defused
                lines.append(defuse_json(self._action_text(obj, call.name, call.arguments_text)))
                continue
            obj["action"] = {"tool": call.name, "args": call.arguments}
            lines.append(json_text(obj))
        return "\n".join(lines)

    def render_final(self, text: str) -> str:
        return json_text({"final": {"content": unended(text)}})

    def continuation(self) -> str:
        return (
            "Reply with one JSON object: another action if you still need a tool, "
            'otherwise {"final": {"content": "…"}}.'
        )

    def format_reminder(self) -> str:
        return (
            "Reply with exactly one JSON object and nothing else, either\n"
            f"{self.call_form}\nor {self.final_form}"
        )
