"""Render side of the ``json_action`` dialect: fenced ```` ```json action ```` blocks.

Theory of operation
-------------------
The model writes a fenced block whose info string is ``json action``, holding
``{"tool": "NAME", "parameters": {…}}``; several blocks may share a reply.
Calls we generate write backticks inside JSON strings as ``\\u0060``, so an
argument can never hold a fence.

Results go back in a user message: ``Tool Result (name):`` and the output,
then the continuation instruction. Output that contains a fence (three
backticks) or a reasoning tag is written as one JSON string with those
characters escaped (see ``plain_result``), so it can neither open a block nor
close one; decoding restores it verbatim. Plain output stays plain text.
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

__all__ = ["JsonActionRenderer"]

FENCE = "```"
_DANGER = re.compile(r"```|" + REASONING_TAG, re.IGNORECASE)


class JsonActionRenderer(Renderer):
    name = "json_action"
    results_role = "user"
    raw_start = re.compile(r"\s*```")

    def instructions(self) -> str:
        return "\n".join(
            [
                "# How to call a tool",
                "",
                "To call a tool, write a fenced code block tagged `json action` that holds "
                "one JSON object with the tool's name and parameters:",
                "",
                f"{FENCE}json action",
                '{"tool": "TOOL_NAME", "parameters": {"PARAMETER": "value"}}',
                FENCE,
                "",
                "- One block per call; you may write several blocks in one reply.",
                "- After your blocks, stop: the results come back in the next message. "
                "Never write results yourself.",
                "- Call only the tools listed above. When you have what you need, "
                "answer in plain text without any block.",
            ]
        )

    def format_call(self, name: str, arguments: dict[str, Any]) -> str:
        body = json_text({"tool": name, "parameters": arguments}, escape="`")
        return f"{FENCE}json action\n{body}\n{FENCE}"

    def render_result(self, name: str, content: str, *, call_id: str) -> str:
        return plain_result(name, content, error=False, danger=_DANGER)

    def render_error(self, name: str, message: str, *, call_id: str) -> str:
        return plain_result(name, message, error=True, danger=_DANGER)

    def read_result(self, text: str) -> ReadResult | None:
        return read_plain_result(text)

    def format_reminder(self) -> str:
        return (
            "Write each tool call exactly in this form, as its own fenced block:\n"
            f'{FENCE}json action\n{{"tool": "TOOL_NAME", "parameters": {{"PARAMETER": "value"}}}}\n'
            f"{FENCE}"
        )
