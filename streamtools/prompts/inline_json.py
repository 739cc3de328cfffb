"""Render side of the ``inline_json`` dialect: a JSON object anywhere in the prose.

Theory of operation
-------------------
The model writes ``{"tool": "NAME", "arguments": {…}}`` where it likes in its
reply, several times if needed; only objects naming a known tool are calls,
other JSON stays text. We write past calls each on a line of its own.

Results go back in a user message as ``Tool Result (name):`` and the output,
then the continuation instruction. Output that holds a ``"tool":`` key or a
reasoning tag is written as one JSON string whose braces, quotes and angle
brackets are escaped (see ``plain_result``): no object, and so no call, can be
read out of it, and decoding restores it verbatim. Ordinary output, including
ordinary JSON, stays as it is.
"""

from __future__ import annotations

import re
from typing import Any

from streamtools.prompts.renderer import (
    REASONING_TAG,
    ReadResult,
    Renderer,
    json_text,
    plain_result,
    read_plain_result,
)

__all__ = ["InlineJsonRenderer"]

_DANGER = re.compile(r'"tool"\s*:|' + REASONING_TAG, re.IGNORECASE)


class InlineJsonRenderer(Renderer):
    name = "inline_json"
    results_role = "user"
    raw_start = re.compile(r'\s*\{\s*"tool"')

    def instructions(self) -> str:
        return "\n".join(
            [
                "# How to call a tool",
                "",
                "To call a tool, write a JSON object with the tool's name and arguments "
                "on a line of its own:",
                '{"tool": "TOOL_NAME", "arguments": {"PARAMETER": "value"}}',
                "",
                "- You may write text around it and call several tools in one reply.",
                "- After your calls, stop: the results come back in the next message, "
                "each under a line `Tool Result (TOOL_NAME):`. Never write results yourself.",
                "- Call only the tools listed above. When you have what you need, "
                "answer in plain text without any call object.",
            ]
        )

    def format_call(self, name: str, arguments: dict[str, Any]) -> str:
        return json_text({"tool": name, "arguments": arguments})

    def render_result(self, name: str, content: str, *, call_id: str) -> str:
        return plain_result(name, content, error=False, danger=_DANGER)

    def render_error(self, name: str, message: str, *, call_id: str) -> str:
        return plain_result(name, message, error=True, danger=_DANGER)

    def read_result(self, text: str) -> ReadResult | None:
        return read_plain_result(text)

    def format_reminder(self) -> str:
        return (
            "Write each tool call exactly in this form, on a line of its own:\n"
            '{"tool": "TOOL_NAME", "arguments": {"PARAMETER": "value"}}'
        )
