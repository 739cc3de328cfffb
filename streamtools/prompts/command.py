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

A tool's name is written bare, so a name holding whitespace or ``{`` (which
ends a name for the parser) cannot be called in this dialect: such a tool is
refused when the prompt is made (``Renderer.check_tools``), rather than offered
and every call of it read as a malformed line. A past call under such a name
(history from elsewhere) is still written as it is.
"""

from __future__ import annotations

import re
from typing import Any

from streamtools.prompts.renderer import json_text
from streamtools.prompts.results import JsonResults

__all__ = ["CommandRenderer"]

_NAME_END = re.compile(r"[\s{]")


class CommandRenderer(JsonResults):
    name = "command"
    raw_start = re.compile(r"\s*@tool\b")
    calls_start_lines = True
    call_form = '@tool TOOL_NAME {"PARAMETER": "value"}'
    call_noun = "@tool line"

    def instructions(self) -> str:
        return self.protocol(
            "To call a tool, write one line: `@tool`, the tool's name, and its "
            "arguments as a JSON object on the same line:",
            "One call per line; the line must start with @tool. Keep the JSON on that "
            "line: write a line break inside a string as \\n.",
        )

    def name_problem(self, name: str) -> str | None:
        # the parser reads the name as the run of characters up to whitespace or
        # ``{`` (``parser.command._NAME``): no spelling of such a name reads back
        if _NAME_END.search(name) is not None:
            return "a name there ends at the first whitespace or '{' (@tool NAME {json})"
        return super().name_problem(name)

    def format_call(self, name: str, arguments: dict[str, Any]) -> str:
        return f"@tool {name} {json_text(arguments)}"

    def format_call_text(self, name: str, arguments: str) -> str:
        # a call is one line: a line break is written as JSON writes one in a string
        return f"@tool {name} " + arguments.replace("\r", "\\r").replace("\n", "\\n")

    def format_reminder(self) -> str:
        return f"Write each tool call exactly as one line of its own:\n{self.call_form}"
