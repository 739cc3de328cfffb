"""streamtools: reliable, streaming-first tool calling for any LLM.

The names most programs need are re-exported here; ``tests/test_public_api.py``
checks ``__all__`` against what the package really provides. Optional layers
stay in their own namespaces so that importing ``streamtools`` never needs an
optional extra: ``streamtools.proxy`` (Starlette), ``streamtools.ui``,
``streamtools.mcp`` (the MCP SDK), and ``streamtools.testing`` (``ScriptedModel``,
``FakeServer``) for tests.
"""

from __future__ import annotations

from streamtools.errors import (
    BudgetExceeded,
    ParserStateError,
    ProviderError,
    RepairExhausted,
    SizeLimitExceeded,
    StreamtoolsError,
    TokenCountUnavailable,
    ToolDefinitionError,
    TurnPaused,
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
    ParserEvent,
    ReasoningDelta,
    Retry,
    StreamError,
    TextDelta,
    ToolFailed,
    ToolResult,
    TurnEnd,
    TurnStart,
    Usage,
    decode_event,
    encode_events,
)
from streamtools.model import (
    CallChunk,
    ChatMessage,
    Chunk,
    FinishChunk,
    Model,
    ModelRequest,
    NativeCall,
    ReasoningChunk,
    TextChunk,
    ToolSpec,
    UsageChunk,
    UseTool,
)
from streamtools.native import NativeCalls
from streamtools.parser import DIALECTS, DialectSyntax, Parser, ToolCatalog
from streamtools.prompts import Renderer, get_renderer, project
from streamtools.providers import AnthropicMessages, HTTPProvider, OllamaChat, OpenAIChat
from streamtools.results import format_result
from streamtools.runtime import Agent, ConsoleRenderer, Replay, RunResult, record
from streamtools.runtime.hybrid import HybridAgent
from streamtools.tools import FunctionTool, Tool, ToolArgumentsError, ToolRegistry, tool
from streamtools.transcript import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    Transcript,
    UserMessage,
)

__version__ = "0.1.0"

__all__ = [
    "DIALECTS",
    "Agent",
    "AnthropicMessages",
    "ArgsDelta",
    "AssistantMessage",
    "BudgetExceeded",
    "CallChunk",
    "CallEnd",
    "CallError",
    "CallStart",
    "ChatMessage",
    "Chunk",
    "ConsoleRenderer",
    "DialectSyntax",
    "Event",
    "Final",
    "Finish",
    "FinishChunk",
    "FunctionTool",
    "HTTPProvider",
    "HybridAgent",
    "Message",
    "Model",
    "ModelRequest",
    "NativeCall",
    "NativeCalls",
    "OllamaChat",
    "OpenAIChat",
    "Parser",
    "ParserEvent",
    "ParserStateError",
    "ProviderError",
    "ReasoningChunk",
    "ReasoningDelta",
    "RepairExhausted",
    "Renderer",
    "Replay",
    "Retry",
    "RunResult",
    "SizeLimitExceeded",
    "StreamError",
    "StreamtoolsError",
    "SystemMessage",
    "TextChunk",
    "TextDelta",
    "TokenCountUnavailable",
    "Tool",
    "ToolArgumentsError",
    "ToolCall",
    "ToolCatalog",
    "ToolDefinitionError",
    "ToolFailed",
    "ToolRegistry",
    "ToolResult",
    "ToolResultMessage",
    "ToolSpec",
    "Transcript",
    "TurnEnd",
    "TurnPaused",
    "TurnStart",
    "UnknownDialectError",
    "Usage",
    "UsageChunk",
    "UsageError",
    "UseTool",
    "UserMessage",
    "decode_event",
    "encode_events",
    "format_result",
    "get_renderer",
    "project",
    "record",
    "tool",
]
