"""Request-body pieces that more than one adapter builds the same way.

Theory of operation
-------------------
``streamtools.prompts.project`` writes results as ``role="tool"`` messages in
two cases: native mode (the preceding assistant message carries the matching
``tool_calls``) and the prompt dialects whose results are tool messages
(``json_object``, ``command``), where the call is text and no native call
precedes the result. OpenAI and Anthropic reject a tool message whose id
matches no call of the assistant message it answers, so ``answerable_only``
rewrites every such tool message as user text (``Tool result (NAME):`` and the
content). A tool message is answerable when its id names a call of the latest
assistant message and only other tool messages stand between them; a user or
system message in between ends the answering. A rewritten result is merged
with the user messages next to it (blank line between), because many chat
templates (Mistral, Gemma, …) reject two user messages in a row. Ollama takes
tool messages as they are and does not use this.

``with_call_texts`` is an assistant message's content as OpenAI-compatible
servers and Ollama take a past call whose arguments are text that is no JSON
object (``NativeCall.arguments_text``): ``{}`` goes as the call's arguments,
and the text after the content, so the model still reads what it wrote.

``function_tools`` is the ``{"type": "function", "function": {...}}`` shape
that OpenAI and Ollama share for native tool definitions, each schema as the
server takes it (``providers.toolschema``). ``json_schema_of``
reads a ``ModelRequest.response_format`` for the adapters that do not take
OpenAI's shape as it is (Ollama's ``format``, Anthropic's ``output_config``).

``reasoning_server`` is ``ReasoningOrigin.server`` for a server and model, so
that ``OpenAIChat`` and ``OllamaChat`` send a reply's reasoning back only to
the server and model that streamed it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

from streamtools.errors import UsageError
from streamtools.model import ChatMessage, ToolSpec
from streamtools.prompts.project import merge_user_messages
from streamtools.providers.toolschema import PLAIN, SchemaRule, sent_schema

__all__ = [
    "answerable_only", "function_tools", "json_schema_of", "reasoning_server", "result_as_text",
    "with_call_texts",
]


def reasoning_server(base_url: str, model: str) -> str:
    """The ``ReasoningOrigin.server`` of a server and model: a digest, so that a
    saved transcript holds no URL (a gateway's may name an account)."""
    seen = f"{base_url.rstrip('/')}\n{model}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(seen).hexdigest()[:16]


def result_as_text(msg: ChatMessage) -> ChatMessage:
    """A tool message with no native call to answer, as the user text that carries it."""
    head = f"Tool result ({msg.name}):" if msg.name else "Tool result:"
    return ChatMessage(role="user", content=f"{head}\n{msg.content}")


def with_call_texts(msg: ChatMessage) -> str:
    """``msg``'s content, then the text of each of its calls whose arguments are
    text that is no JSON object, one per line (see the module docstring)."""
    texts = [c.arguments_text for c in msg.tool_calls if c.arguments_text]
    if not texts:
        return msg.content
    return "\n".join([msg.content, *texts] if msg.content else texts)


def answerable_only(messages: Iterable[ChatMessage]) -> list[ChatMessage]:
    """``messages`` with every tool message that answers no native call made user text."""
    out: list[ChatMessage] = []
    open_ids: set[str] = set()  # calls of the latest assistant message not answered yet
    for msg in messages:
        if msg.role == "tool":
            if msg.tool_call_id is not None and msg.tool_call_id in open_ids:
                open_ids.discard(msg.tool_call_id)
                out.append(msg)
            else:
                out.append(result_as_text(msg))
            continue
        open_ids = {c.id for c in msg.tool_calls} if msg.role == "assistant" else set()
        out.append(msg)
    return merge_user_messages(out)


def function_tools(tools: Sequence[ToolSpec], rule: SchemaRule = PLAIN) -> list[dict[str, Any]]:
    """Native tool definitions in the OpenAI (and Ollama) function shape, each
    schema as ``rule``'s API takes it (``providers.toolschema``)."""
    out: list[dict[str, Any]] = []
    for t in tools:
        function: dict[str, Any] = {"name": t.name, "description": t.description}
        parameters = sent_schema(t.parameters, rule)
        if parameters is not None:
            function["parameters"] = parameters
        out.append({"type": "function", "function": function})
    return out


def json_schema_of(response_format: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON Schema a ``response_format`` asks for, or None for any JSON object
    (``json_object``). ``UsageError`` for any other shape."""
    kind = response_format.get("type")
    if kind == "json_object":
        return None
    spec = response_format.get("json_schema")
    if kind == "json_schema" and isinstance(spec, dict) and isinstance(spec.get("schema"), dict):
        schema: dict[str, Any] = spec["schema"]
        return schema
    raise UsageError(
        "response_format must be {'type': 'json_object'} or "
        "{'type': 'json_schema', 'json_schema': {'name': ..., 'schema': {...}}}"
    )
