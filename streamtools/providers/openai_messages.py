"""An OpenAI-compatible request's messages, as ``OpenAIChat`` sends them.

A past assistant message's calls go with their ids (shortened where the
server limits them: ``providers.callids``) and ``extra_content``; its
reasoning goes back in the field it came in, to the server and model that
streamed it (see ``streamtools.providers.openai``'s module docstring and
``OpenAIChat``'s ``send_reasoning``); OpenRouter's ``reasoning_details`` go
back beside the calls (``providers.openrouter``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from streamtools.model import ChatMessage, NativeCall
from streamtools.providers.bodies import with_call_texts
from streamtools.providers.callids import IdRule, shortened
from streamtools.providers.openrouter import DETAILS, details_of

__all__ = ["message"]


def _tool_call(call: NativeCall, limit: IdRule) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": shortened(call.id, limit),
        "type": "function",
        "function": {"name": call.name, "arguments": msgspec.json.encode(call.arguments).decode()},
    }
    if call.extra is not None:  # as the server attached it (see ``providers.openai``)
        content = {k: v for k, v in call.extra.items() if k != DETAILS}
        if content or DETAILS not in call.extra:
            out["extra_content"] = content
    return out


_PLACEHOLDER = " "  # the reasoning of a forced reply with calls and none: DeepSeek takes no ""


def _reasoning_back(msg: ChatMessage, server: str, send: bool | None) -> tuple[str, str] | None:
    """The field and text an assistant message's reasoning goes back in, or
    None (see ``providers.openai``'s docstring and ``OpenAIChat``'s ``send_reasoning``)."""
    origin = msg.reasoning_origin
    if msg.role != "assistant" or send is False:
        return None
    if send is None:
        if origin is None or origin.server != server or not msg.reasoning:
            return None
        if origin.field == "reasoning" and details_of(msg):
            return None  # OpenRouter: the same reasoning goes as its ``reasoning_details``
        return origin.field, msg.reasoning
    if not (msg.reasoning or msg.tool_calls):
        return None
    field = origin.field if origin is not None else "reasoning_content"
    return field, msg.reasoning or _PLACEHOLDER


def message(
    msg: ChatMessage,
    server: str = "",
    send_reasoning: bool | None = None,
    limit: IdRule = None,
) -> dict[str, Any]:
    """One message. A past call whose arguments are text that is no JSON object
    (``NativeCall.arguments_text``) goes as ``{}`` with its text at the end of
    the content, as for Ollama: OpenAI's API takes any string as ``arguments``,
    but vLLM, SGLang and llama-server decode past arguments to fill their chat
    templates and refuse the request (400) when they are not an object, which
    would refuse every later request of the conversation."""
    out: dict[str, Any] = {"role": msg.role, "content": msg.content}
    if msg.tool_calls:
        out["tool_calls"] = [_tool_call(call, limit) for call in msg.tool_calls]
        out["content"] = with_call_texts(msg) or None
        if details := details_of(msg):
            out[DETAILS] = details
    if (back := _reasoning_back(msg, server, send_reasoning)) is not None:
        out[back[0]] = back[1]
    if msg.tool_call_id is not None:
        out["tool_call_id"] = shortened(msg.tool_call_id, limit)
    if msg.name is not None:
        out["name"] = msg.name
    return out
