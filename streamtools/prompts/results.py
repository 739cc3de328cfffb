"""The two result forms the JSON-family dialects share, and a base class for each.

Theory of operation
-------------------
``am_xml`` and ``hermes`` wrap results in their own elements. The other four
dialects use one of two forms, and the dialects of one form differ only in
what their parser could mistake for markup:

* **plain** (``json_action``, ``inline_json``; results in a user message):
  a ``Tool Result (name):`` line and the output as it is. Output that matches
  the dialect's ``result_danger`` pattern (a fence, a ``"tool":`` key, a
  reasoning tag…), that has a line beginning like a label (``Tool Result (``,
  ``Tool Error (``: the results of a reply share one message, and such a line
  would start a forged result of its own), or that holds a chat template's
  special token (``<|im_end|>``: ``streamtools.prompts.special_tokens``), is
  written instead as one JSON string with every character that could start
  markup in any text dialect as a ``\\uXXXX`` escape: a JSON string has no raw
  newline, fence, brace, tag or token left, and decoding gives the output back
  verbatim. Ordinary output, including ordinary JSON, stays as is.
* **json** (``command``, ``json_object``; results as tool messages): one JSON
  object ``{"tool": NAME, "result": "…"}`` (``"error"`` for a failure), with
  ``<``, ``>``, ``&`` and ``@`` escaped so no tag or command appears in it.

``PlainResults`` and ``JsonResults`` are ``Renderer`` bases that render, read
back and describe (``results_rule``, one line of the instructions) their form,
so a dialect states its form once, by its base class.

Core module: standard library and msgspec only.
"""

from __future__ import annotations

import json
import re

from streamtools.prompts.renderer import ReadResult, Renderer, json_text
from streamtools.prompts.special_tokens import holds_special_token

__all__ = [
    "JsonResults",
    "PlainResults",
    "json_result",
    "plain_result",
    "read_json_result",
    "read_plain_result",
]

_PLAIN = re.compile(r"\ATool (Result|Error) \(([^)\n]*)\)(, as a JSON string)?:\n(.*)\Z", re.DOTALL)
# Everything that can start markup in any text dialect, escaped inside the JSON string,
# and the line breaks JSON writes raw (a reader may break the line there, and a
# label after one would begin a line: ``_forges_label``)
_PLAIN_ESCAPE = "<>&`@{}\u2028\u2029\x85"
_UNSAFE_NAME = re.compile(r"[^\w.:-]")


def plain_result(name: str, content: str, *, error: bool, danger: re.Pattern[str]) -> str:
    """A result as plain text under a ``Tool Result (name):`` line; content that
    matches ``danger``, or holds a chat template's special token, as one escaped
    JSON string (see the module docstring)."""
    # The name may be whatever a model wrote (an unknown tool): keep the label inert.
    label = f"Tool {'Error' if error else 'Result'} ({_UNSAFE_NAME.sub('_', name)})"
    if danger.search(content) or holds_special_token(content) or _forges_label(content):
        return f"{label}, as a JSON string:\n{json_text(content, escape=_PLAIN_ESCAPE)}"
    return f"{label}:\n{content}"


def _forges_label(content: str) -> bool:
    """Whether a line of ``content`` begins like a result's own label. The
    results of one reply share a user message, each under its label, so a
    fetched page holding ``Tool Result (delete_all):`` on a line of its own
    read as a second result, of a call that may have failed. Any line break
    counts (``str.splitlines``: a model may read ``\\r`` or U+2028 as one)."""
    return any(
        line.lstrip().lower().startswith(("tool result (", "tool error ("))
        for line in content.splitlines()
    )


def read_plain_result(text: str) -> ReadResult | None:
    """Inverse of ``plain_result``."""
    match = _PLAIN.match(text)
    if match is None:
        return None
    kind, name, encoded, body = match.groups()
    try:
        content = json.loads(body) if encoded else body
    except ValueError:
        return None
    return name, str(content), kind == "Error"


def json_result(name: str, content: str, *, error: bool) -> str:
    """A result as one JSON object (for dialects whose results are tool messages);
    ``<``, ``>``, ``&`` and ``@`` are escaped so no tag or command can appear in it."""
    return json_text({"tool": name, "error" if error else "result": content}, escape="<>&@")


def read_json_result(text: str) -> ReadResult | None:
    """Inverse of ``json_result``."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or "tool" not in data:
        return None
    if "error" in data:
        return str(data["tool"]), str(data["error"]), True
    return str(data["tool"]), str(data.get("result", "")), False


class PlainResults(Renderer):
    """Results as ``Tool Result (name):`` text in a user message."""

    results_role = "user"
    #: what in a tool's output this dialect's parser could take as markup
    result_danger: re.Pattern[str] = re.compile(r"(?!)")
    results_rule = (
        "After your calls, stop: the results come back in the next message, each under "
        "a line `Tool Result (TOOL_NAME):` (or `Tool Error (TOOL_NAME):` if the call "
        "failed). Never write results yourself."
    )

    def render_result(self, name: str, content: str, *, call_id: str) -> str:
        return plain_result(name, content, error=False, danger=self.result_danger)

    def render_error(self, name: str, message: str, *, call_id: str) -> str:
        return plain_result(name, message, error=True, danger=self.result_danger)

    def read_result(self, text: str) -> ReadResult | None:
        return read_plain_result(text)


class JsonResults(Renderer):
    """Results as one JSON object each, in tool messages."""

    results_role = "tool"
    results_rule = (
        'After your calls, stop: each result comes back as {"tool": "TOOL_NAME", '
        '"result": "…"} (or "error" instead of "result" if the call failed). '
        "Never write results yourself."
    )

    def render_result(self, name: str, content: str, *, call_id: str) -> str:
        return json_result(name, content, error=False)

    def render_error(self, name: str, message: str, *, call_id: str) -> str:
        return json_result(name, message, error=True)

    def read_result(self, text: str) -> ReadResult | None:
        return read_json_result(text)
