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

from streamtools.prompts.renderer import REASONING_TAG, json_text
from streamtools.prompts.results import PlainResults

__all__ = ["JsonActionRenderer"]

FENCE = "```"


class JsonActionRenderer(PlainResults):
    name = "json_action"
    call_close = FENCE
    raw_start = re.compile(r"\s*```")
    result_danger = re.compile(r"```|" + REASONING_TAG, re.IGNORECASE)
    call_form = (
        f"{FENCE}json action\n"
        '{"tool": "TOOL_NAME", "parameters": {"PARAMETER": "value"}}\n'
        f"{FENCE}"
    )
    call_noun = "json action block"

    def instructions(self) -> str:
        return self.protocol(
            "To call a tool, write a fenced code block tagged `json action` that holds "
            "one JSON object with the tool's name and parameters:",
            "One block per call; you may write several blocks in one reply.",
        )

    def format_call(self, name: str, arguments: dict[str, Any]) -> str:
        body = json_text({"tool": name, "parameters": arguments}, escape="`")
        return f"{FENCE}json action\n{body}\n{FENCE}"

    def format_call_text(self, name: str, arguments: str) -> str:
        # a backtick as in generated calls: the text cannot close the fence
        body = f'{{"tool": {json_text(name)}, "parameters": {arguments}}}'.replace("`", "\\u0060")
        return f"{FENCE}json action\n{body}\n{FENCE}"

    def format_reminder(self) -> str:
        return (
            f"Write each tool call exactly in this form, as its own fenced block:\n{self.call_form}"
        )
