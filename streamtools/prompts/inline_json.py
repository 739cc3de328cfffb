"""Render side of the ``inline_json`` dialect: a JSON object anywhere in the prose.

Theory of operation
-------------------
The model writes ``{"tool": "NAME", "arguments": {…}}`` where it likes in its
reply, several times if needed; only objects naming a known tool are calls,
other JSON stays text. We write past calls each on a line of its own.

Results go back in a user message as ``Tool Result (name):`` and the output,
then the continuation instruction. Output that holds a ``"tool":`` key, an
object whose first key is ``"name"`` or ``"function"``, a ``"type": "function"``
member (Llama 3.x's call forms and OpenAI's, which the parser reads for a known
tool) or a reasoning tag is written as one JSON string whose braces, quotes and angle
brackets are escaped (see ``plain_result``): no object, and so no call, can be
read out of it, and decoding restores it verbatim. Ordinary output, including
ordinary JSON, stays as it is.

Only a name written without JSON escapes is read as a call: a tool whose name
holds a quote, a backslash or a control character is refused when the prompt
is made (``Renderer.check_tools``).
"""

from __future__ import annotations

import re
from typing import Any

from streamtools.prompts.renderer import REASONING_TAG, json_text
from streamtools.prompts.results import PlainResults

__all__ = ["InlineJsonRenderer"]

_ESCAPED = re.compile(r'["\\\x00-\x1f]')  # what JSON writes as an escape in a string


class InlineJsonRenderer(PlainResults):
    name = "inline_json"
    raw_start = re.compile(r'\s*\{\s*"tool"')
    result_danger = re.compile(
        r'"tool"\s*:|\{\s*"name"\s*:|"type"\s*:\s*"function"|\{\s*"function"\s*:|'
        + REASONING_TAG,
        re.IGNORECASE,
    )
    call_form = '{"tool": "TOOL_NAME", "arguments": {"PARAMETER": "value"}}'
    call_noun = "call object"

    def instructions(self) -> str:
        return self.protocol(
            "To call a tool, write a JSON object with the tool's name and arguments:",
            "Put each call on a line of its own, as valid JSON. You may write text "
            "before and after the call lines, and call several tools in one reply.",
        )

    def name_problem(self, name: str) -> str | None:
        # the parser decides whether an object is a call from the name's raw text,
        # which must be plain (``parser.inline_json``): an escape never matches
        if _ESCAPED.search(name) is not None:
            return "a name there may not hold a quote, a backslash or a control character"
        return super().name_problem(name)

    def format_call(self, name: str, arguments: dict[str, Any]) -> str:
        return json_text({"tool": name, "arguments": arguments})

    def format_call_text(self, name: str, arguments: str) -> str:
        return f'{{"tool": {json_text(name)}, "arguments": {arguments}}}'

    def format_reminder(self) -> str:
        return f"Write each tool call exactly in this form, on a line of its own:\n{self.call_form}"
