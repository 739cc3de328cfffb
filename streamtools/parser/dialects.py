"""The registry of dialects by name (DESIGN §3)."""

from __future__ import annotations

from streamtools.parser.am_xml import AM_XML
from streamtools.parser.calls import DialectSyntax
from streamtools.parser.command import COMMAND
from streamtools.parser.hermes import HERMES
from streamtools.parser.inline_json import INLINE_JSON
from streamtools.parser.json_action import JSON_ACTION
from streamtools.parser.json_object import JSON_OBJECT

__all__ = ["DIALECTS"]

DIALECTS: dict[str, DialectSyntax] = {
    d.name: d for d in (AM_XML, HERMES, JSON_ACTION, INLINE_JSON, JSON_OBJECT, COMMAND)
}
