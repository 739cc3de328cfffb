"""The registry of dialects by name (DESIGN §3)."""

from __future__ import annotations

from streamtools.parser.am_xml import AM_XML
from streamtools.parser.calls import DialectSyntax
from streamtools.parser.command import COMMAND
from streamtools.parser.hermes import HERMES
from streamtools.parser.inline_json import INLINE_JSON
from streamtools.parser.json_action import JSON_ACTION
from streamtools.parser.json_object import JSON_OBJECT

__all__ = ["DIALECTS", "NO_CALLS"]

DIALECTS: dict[str, DialectSyntax] = {
    d.name: d for d in (AM_XML, HERMES, JSON_ACTION, INLINE_JSON, JSON_OBJECT, COMMAND)
}

NO_CALLS = DialectSyntax(name="text", stop_marker=None, markers=(), open=lambda m, c: None)
"""No call markers: text, reasoning (``<think>``, ``think_open``) and stop strings
only. For text that may hold no call (a native selection turn, a proxy request
without tools) but whose reasoning must still be told from the answer. Not a
dialect a model is prompted in, so not in ``DIALECTS``."""
