"""Render side of the ``command`` dialect: one line ``@tool NAME {json-args}``.

Theory of operation
-------------------
The smallest protocol, for small models and terse agents: a call is a single
line starting with ``@tool``, the tool's name, a space and the arguments as one
JSON object on the same line. JSON text has no raw newline (newlines in strings
are ``\\n``), so a call we generate is always exactly one line.

Results go back as tool messages holding ``{"tool": "NAME", "result": "…"}`` (or
``"error"``), then the continuation instruction as a user message. The output
is a JSON string, so it has no raw newline and can never begin a line with
``@tool``; ``<``, ``>``, ``&`` and ``@`` are escaped as well (no tag, no
command anywhere in it), and decoding restores it.
"""

from __future__ import annotations

import re
from typing import Any

from streamtools.prompts.renderer import (
    ReadResult,
    Renderer,
    json_result,
    json_text,
    read_json_result,
)

__all__ = ["CommandRenderer"]


class CommandRenderer(Renderer):
    name = "command"
    results_role = "tool"
    raw_start = re.compile(r"\s*@tool\b")

    def instructions(self) -> str:
        return "\n".join(
            [
                "# How to call a tool",
                "",
                "To call a tool, write one line: `@tool`, the tool's name, and its "
                "arguments as a JSON object on the same line:",
                '@tool TOOL_NAME {"PARAMETER": "value"}',
                "",
                "- One call per line; the line must start with @tool.",
                '- After your calls, stop: each result comes back as {"tool": "TOOL_NAME", '
                '"result": "…"} (or "error" if the call failed). Never write results yourself.',
                "- Call only the tools listed above. When you have what you need, "
                "answer in plain text without any @tool line.",
            ]
        )

    def format_call(self, name: str, arguments: dict[str, Any]) -> str:
        return f"@tool {name} {json_text(arguments)}"

    def render_result(self, name: str, content: str, *, call_id: str) -> str:
        return json_result(name, content, error=False)

    def render_error(self, name: str, message: str, *, call_id: str) -> str:
        return json_result(name, message, error=True)

    def read_result(self, text: str) -> ReadResult | None:
        return read_json_result(text)

    def format_reminder(self) -> str:
        return (
            "Write each tool call exactly as one line of its own:\n"
            '@tool TOOL_NAME {"PARAMETER": "value"}'
        )
