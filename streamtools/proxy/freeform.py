"""A custom tool's text (OpenAI's ``custom`` tools, on the Responses API and on
chat completions: raw text input, such as Codex's ``apply_patch``), read out of
the one string parameter, ``input``, the model is shown for it
(``freeform_spec``; see ``responses_wire`` and ``chat_custom``).

``RawInput`` decodes that text from the call's arguments as they stream, so a
``custom_tool_call_input.delta`` can follow each fragment; ``freeform_text``
gives the whole text from the decoded arguments at the call's end.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from streamtools.model import ToolSpec
from streamtools.parser.jsonscan import WHOLE_ESCAPES
from streamtools.proxy.request import tool_spec

__all__ = ["RawInput", "freeform_spec", "freeform_text"]

_encode = msgspec.json.Encoder().encode


def freeform_spec(tool: dict[str, Any], where: str) -> ToolSpec:
    """A ``custom`` tool as the model sees it: one string parameter, ``input``,
    described by the tool's format (plain text, or a grammar it must follow).
    ``tool`` holds ``name``, ``description`` and ``format``; a grammar format
    is ``{"type": "grammar", "syntax", "definition"}`` on the Responses API and
    ``{"type": "grammar", "grammar": {"syntax", "definition"}}`` on chat
    completions: either is read."""
    spec = tool_spec(tool, "parameters", where)  # name and description
    fmt = tool.get("format")
    about = "The tool's input, as raw text."
    if isinstance(fmt, dict) and fmt.get("type") == "grammar":
        inner = fmt.get("grammar")
        grammar: dict[str, Any] = inner if isinstance(inner, dict) else fmt
        syntax, definition = grammar.get("syntax"), grammar.get("definition")
        if isinstance(syntax, str) and isinstance(definition, str):
            about += f" It must match this {syntax} grammar:\n{definition}"
    schema = {
        "type": "object",
        "properties": {"input": {"type": "string", "description": about}},
        "required": ["input"],
    }
    return ToolSpec(name=spec.name, description=spec.description, parameters=schema)


def freeform_text(arguments: Any) -> str:
    """A custom tool's text from its decoded arguments: ``input`` when it is a
    string, else the arguments as JSON (a model that wrote another shape)."""
    if isinstance(arguments, dict) and isinstance(arguments.get("input"), str):
        return str(arguments["input"])
    return _encode(arguments).decode()


# the arguments of a custom tool's call as models and the dialects write them, up
# to the string's first character
_INPUT_START = re.compile(r'\s*\{\s*"input"\s*:\s*"')
_CUT = 11  # the longest cut escape held: half of a surrogate pair and 5 more


class RawInput:
    """A custom tool's ``input`` text, decoded from its arguments as they arrive
    (``{"input": "*** Begin``…): whole characters and escapes only, so nothing
    given out is taken back. Arguments of another shape give nothing here; the
    call's end gives the text (``freeform_text``)."""

    def __init__(self) -> None:
        self.tail = ""  # text that cannot be decoded yet
        self.started = False
        self.done = False

    def feed(self, fragment: str) -> str:
        if self.done:
            return ""
        text = self.tail + fragment
        if not self.started:
            m = _INPUT_START.match(text)
            if m is None:
                # the start still arriving is held; anything else is another shape
                if '{"input":"'.startswith(re.sub(r"\s", "", text)) and len(text) < 64:
                    self.tail = text
                else:
                    self.done = True
                return ""
            self.started = True
            text = text[m.end() :]
        k = WHOLE_ESCAPES.match(text).end()  # type: ignore[union-attr]
        piece, self.tail = text[:k], text[k:]
        if self.tail.startswith('"') or len(self.tail) > _CUT:
            self.done = True  # the string closed (or the text is not JSON)
        return msgspec.json.decode(f'"{piece}"'.encode()) if piece else ""
