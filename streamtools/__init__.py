"""streamtools: reliable, streaming-first tool calling for any LLM.

Public names are re-exported here; ``tests/test_public_api.py`` checks
``__all__`` against what the package really provides.
"""

from __future__ import annotations

from streamtools.errors import (
    BudgetExceeded,
    ParserStateError,
    ProviderError,
    SizeLimitExceeded,
    StreamtoolsError,
    ToolDefinitionError,
    UnknownDialectError,
    UsageError,
)
from streamtools.events import (
    ArgsDelta,
    CallEnd,
    CallError,
    CallStart,
    Event,
    Final,
    Finish,
    ReasoningDelta,
    Retry,
    StreamError,
    TextDelta,
    ToolFailed,
    ToolResult,
    TurnEnd,
    TurnStart,
    Usage,
)
from streamtools.transcript import Transcript

__version__ = "0.1.0"

__all__ = [
    "ArgsDelta",
    "BudgetExceeded",
    "CallEnd",
    "CallError",
    "CallStart",
    "Event",
    "Final",
    "Finish",
    "ParserStateError",
    "ProviderError",
    "ReasoningDelta",
    "Retry",
    "SizeLimitExceeded",
    "StreamError",
    "StreamtoolsError",
    "TextDelta",
    "ToolDefinitionError",
    "ToolFailed",
    "ToolResult",
    "Transcript",
    "TurnEnd",
    "TurnStart",
    "UnknownDialectError",
    "Usage",
    "UsageError",
]
