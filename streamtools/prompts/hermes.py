"""Render side of the ``hermes`` dialect: JSON inside ``<tool_call>`` tags.

Theory of operation
-------------------
The model writes ``<tool_call>`` + newline + ``{"name": …, "arguments": {…}}`` +
newline + ``</tool_call>``, the form many open-weight models were trained on;
generation may stop at ``</tool_call>`` (the stop marker). Tool definitions are
one JSON function object per line inside ``<tools></tools>``, the parameters'
``$ref`` inlined (``self_contained``).

Calls we generate write ``</`` inside JSON strings as ``<\\/`` (a legal JSON
escape of ``/``) so no closing tag appears in an argument, even for a reader
less careful than our parser.

Results go back in a user message as ``<tool_response>`` + a JSON object
``{"name": …, "content": "…"}`` (errors: ``"error"`` instead of ``"content"``).
The content is a JSON string with ``<``, ``>`` and ``&`` as ``\\u003c``-style
escapes: no tag of any kind (``</tool_response>``, ``<tool_call>``, ``<think>``)
can appear, and decoding the JSON gives the content back verbatim.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from streamtools.model import ToolSpec
from streamtools.prompts.renderer import ReadResult, Renderer, json_text
from streamtools.prompts.self_contained import self_contained

__all__ = ["HermesRenderer"]

_RESPONSE = re.compile(r"\A<tool_response>\n(.*)\n</tool_response>\Z", re.DOTALL)


class HermesRenderer(Renderer):
    name = "hermes"
    stop_marker = call_close = "</tool_call>"
    results_role = "user"
    raw_start = re.compile(r"\s*<tool_call>")
    call_form = (
        '<tool_call>\n{"name": "FUNCTION_NAME", "arguments": {"PARAMETER": "value"}}\n</tool_call>'
    )
    tool_word = "function"
    results_rule = (
        "After </tool_call>, stop and wait: each result comes back between <tool_response> "
        'and </tool_response> as {"name": "FUNCTION_NAME", "content": "…"} (or "error" '
        'instead of "content" if the call failed). Never write responses yourself.'
    )

    def tool_definitions(self, tools: Sequence[ToolSpec]) -> str:
        lines = [
            "# Tools",
            "",
            "You can call the functions below. Each line inside <tools></tools> is the "
            "JSON definition of one function:",
            "<tools>",
        ]
        for spec in tools:
            fn = {
                "name": spec.name,
                "description": " ".join(spec.description.split()),
                "parameters": self_contained(spec.parameters),
            }
            lines.append(json_text({"type": "function", "function": fn}, escape="<>"))
        lines.append("</tools>")
        return "\n".join(lines)

    def instructions(self) -> str:
        return self.protocol(
            "To call a function, write a JSON object with its name and arguments "
            "between <tool_call> and </tool_call>:",
            "The arguments must be valid JSON matching the function's parameters.",
        )

    def format_call(self, name: str, arguments: dict[str, Any]) -> str:
        body = json_text({"name": name, "arguments": arguments}).replace("</", "<\\/")
        return f"<tool_call>\n{body}\n</tool_call>"

    def format_call_text(self, name: str, arguments: str) -> str:
        body = f'{{"name": {json_text(name)}, "arguments": {arguments}}}'.replace("</", "<\\/")
        return f"<tool_call>\n{body}\n</tool_call>"

    def render_result(self, name: str, content: str, *, call_id: str) -> str:
        body = json_text({"name": name, "content": content}, escape="<>&")
        return f"<tool_response>\n{body}\n</tool_response>"

    def render_error(self, name: str, message: str, *, call_id: str) -> str:
        body = json_text({"name": name, "error": message}, escape="<>&")
        return f"<tool_response>\n{body}\n</tool_response>"

    def read_result(self, text: str) -> ReadResult | None:
        match = _RESPONSE.match(text)
        if match is None:
            return None
        try:
            data = json.loads(match.group(1))
        except ValueError:
            return None
        if not isinstance(data, dict) or "name" not in data:
            return None
        if "error" in data:
            return str(data["name"]), str(data["error"]), True
        return str(data["name"]), str(data.get("content", "")), False

    def format_reminder(self) -> str:
        return f"Write each function call exactly in this form and stop after it:\n{self.call_form}"
