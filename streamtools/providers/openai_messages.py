"""An OpenAI-compatible request's messages, as ``OpenAIChat`` sends them.

A past assistant message's calls go with their ids (shortened where the
server limits them: ``providers.callids``) and ``extra_content``; its
reasoning goes back in the field it came in, to the server and model that
streamed it (see ``streamtools.providers.openai``'s module docstring and
``OpenAIChat``'s ``send_reasoning``); OpenRouter's ``reasoning_details`` go
back beside the calls (``providers.openrouter``).

Gemini 3 refuses a request whose past function call has no thought signature
(400, "Function call is missing a thought_signature in functionCall parts":
openai/openai-agents-python#2137 through Google's OpenAI-compatible
endpoint). Its own calls go back with theirs (in ``extra_content``); a reply
made on another server or model has none, and every later request of the
conversation was refused. For a model named Gemini 3 or later (``signs_calls``),
such a reply's first call (Gemini signs only the first of parallel calls) goes
with Google's documented sentinel, ``skip_thought_signature_validator``, as
its signature, as other clients send it for such calls (vercel/ai's
@ai-sdk/google 3.0.80, strands-agents/sdk-python#1298).
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from streamtools.model import ChatMessage, NativeCall
from streamtools.providers.bodies import with_call_texts
from streamtools.providers.callids import IdRule, shortened
from streamtools.providers.openrouter import DETAILS, details_of

__all__ = ["message", "signs_calls"]

SKIP_SIGNATURE = "skip_thought_signature_validator"  # Google's sentinel (module docstring)
_GEMINI = re.compile(r"gemini-(\d+)")


def signs_calls(model: str) -> bool:
    """Whether ``model`` is a Gemini that checks its past calls' thought
    signatures: Gemini 3 or later, or a Gemini named without a version
    (``gemini-flash-latest``, which is a later one)."""
    name = model.lower()
    if "gemini" not in name:
        return False
    version = _GEMINI.search(name)
    return version is None or int(version.group(1)) >= 3


def _signed(call: NativeCall) -> bool:
    google = (call.extra or {}).get("google")
    return isinstance(google, dict) and bool(google.get("thought_signature"))


def _sentinel(first: dict[str, Any]) -> None:
    """``first`` (a reply's first call, as sent) with the sentinel as its signature."""
    content = first.get("extra_content") or {}
    google = content.get("google")
    google = {**(google if isinstance(google, dict) else {}), "thought_signature": SKIP_SIGNATURE}
    first["extra_content"] = {**content, "google": google}


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
    sign: bool = False,
) -> dict[str, Any]:
    """One message. A past call whose arguments are text that is no JSON object
    (``NativeCall.arguments_text``) goes as ``{}`` with its text at the end of
    the content, as for Ollama: OpenAI's API takes any string as ``arguments``,
    but vLLM, SGLang and llama-server decode past arguments to fill their chat
    templates and refuse the request (400) when they are not an object, which
    would refuse every later request of the conversation. ``sign``: a reply
    whose calls carry no thought signature gets the sentinel on its first one
    (see the module docstring)."""
    out: dict[str, Any] = {"role": msg.role, "content": msg.content}
    if msg.tool_calls:
        out["tool_calls"] = [_tool_call(call, limit) for call in msg.tool_calls]
        if sign and not any(_signed(call) for call in msg.tool_calls):
            _sentinel(out["tool_calls"][0])
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
