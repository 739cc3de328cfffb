"""The sans-IO incremental tool-call parser (DESIGN §2–3).

``Parser(dialect, tools, stop)`` turns a model's text deltas into typed events;
``DIALECTS`` maps each dialect name to its ``DialectSyntax`` (``NO_CALLS``: text
and reasoning only); ``ToolCatalog`` is the protocol a tool registry satisfies.
See ``streamtools.parser.core``.
"""

from __future__ import annotations

from streamtools.parser.calls import DialectSyntax
from streamtools.parser.catalog import ToolCatalog
from streamtools.parser.core import Parser
from streamtools.parser.dialects import DIALECTS, NO_CALLS

__all__ = ["DIALECTS", "NO_CALLS", "DialectSyntax", "Parser", "ToolCatalog"]
