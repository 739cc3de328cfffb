"""How an OpenAI-compatible stream ends: finish reasons and in-band errors.

Theory of operation
-------------------
A chunk's ``finish_reason`` is read as OpenAI's word for it
(``finish_reason``): a server or gateway that passes on another API's reason
(Anthropic's ``max_tokens`` and ``tool_use``, Gemini's ``MAX_TOKENS`` and
``SAFETY``, vLLM's ``abort``) means one of OpenAI's, and a reason none of
them has a word for is passed on as sent. ``failed_finish`` is what an
``error`` finish says. DeepSeek's API ends an answer it broke off for want
of capacity with ``insufficient_system_resource`` (one of its documented
finish reasons): it was passed on as sent, so the text cut off there was the
final answer, and a call whose arguments were whole then ran. It is an
``error``, as vLLM's ``abort`` is. Mistral's API ends an answer that ran into
the model's context length with ``model_length``: it was passed on as sent,
so a call it cut off was ``invalid_json`` (the model told to fix JSON it had
not finished writing) rather than ``unterminated``; it is ``length``.
Gateways in front of Anthropic or Amazon Bedrock pass on their other reasons
too (Converse's ``stopReason``: ``guardrail_intervened``, ``content_filtered``,
``malformed_tool_use``, ``malformed_model_output``,
``model_context_window_exceeded``; Anthropic's ``refusal``): each was a finish
no consumer knew, the text taken for a whole answer; they are
``content_filter``, ``length``, ``malformed_call`` (the model's call could not
be read, as Gemini's ``MALFORMED_FUNCTION_CALL``) and ``error``.

Gemini ends an answer with ``MALFORMED_FUNCTION_CALL`` when it could not
read the function call the model wrote (empty content, no call:
googleapis/python-genai#1836, pydantic/pydantic-ai#3095); its
OpenAI-compatible endpoint passes its own reasons on as they are (upper case,
HKUDS/Vibe-Trading#308), and OpenRouter keeps the upstream's in
``native_finish_reason`` beside its own. It was passed on as sent, so the
reply looked like an empty answer: the agent asked the model for "its
answer", and a second one ended the run as an empty reply. It is read as
``malformed_call`` (``streamtools.native.MALFORMED_CALL``), from either field:
``NativeCalls`` makes the call a ``CallError(malformed)`` telling the model to
write it again, which the repair ladder sends it; ``FinishChunk.message``
names the reason as the server sent it. A call still open at that finish is
the one the API refused, whatever its text (``CUT``): it does not run
(hermes-agent keeps the reason authoritative over a call in the same answer,
NousResearch/hermes-agent#83886).

Gemini's ``UNEXPECTED_TOOL_CALL`` (the model called a tool when the request
offered none or said to call none, tensorzero/tensorzero#2329, or called one
it was not given, epam/ai-dial-adapter-vertexai#325) came through the same two
fields and was an empty answer the same way (LiteLLM reads it as ``stop``,
BerriAI/litellm#40864). It is read as ``unexpected_call``
(``streamtools.native.UNEXPECTED_CALL``): ``NativeCalls`` makes the call, or
one with no name, a ``CallError(unknown_tool)`` telling the model what it may
call, or to answer in text; a call of that answer never runs.

An in-band error (``data: {"error": …}``, ``event: error``) is read with
``event_error``, worded with ``error_text`` and, when the server calls it
passing (``passing``), asked again by the provider's base (see
``streamtools.providers.openai``, which uses all of these).
"""

from __future__ import annotations

from typing import Any

import msgspec

from streamtools.native import MALFORMED_CALL, UNEXPECTED_CALL
from streamtools.providers.failures import RETRY_STATUSES, failed_generation, upstream_reason

__all__ = [
    "CUT", "error_text", "event_error", "failed_finish", "finish_of", "finish_reason", "passing",
]

_FINISH = {
    "function_call": "tool_calls", "end_turn": "stop", "eos": "stop", "abort": "error",
    "insufficient_system_resource": "error",  # DeepSeek's: broken off (module docstring)
    "model_length": "length",  # Mistral's: the context length ran out (module docstring)
    # Anthropic's and Amazon Bedrock's others (Converse's stopReason), as gateways pass them
    "refusal": "content_filter", "model_context_window_exceeded": "length",
    "guardrail_intervened": "content_filter", "content_filtered": "content_filter",
    "malformed_tool_use": MALFORMED_CALL, "malformed_model_output": "error",
    # other APIs' reasons, as gateways pass them on (read in lower case: Gemini's
    # MAX_TOKENS): Anthropic's, Gemini's, Hugging Face's
    "max_tokens": "length", "tool_use": "tool_calls", "tool_call": "tool_calls",
    "stop_sequence": "stop", "eos_token": "stop", "safety": "content_filter",
    "recitation": "content_filter", "blocklist": "content_filter",
    "prohibited_content": "content_filter", "spii": "content_filter",
    "malformed_function_call": MALFORMED_CALL, "unexpected_tool_call": UNEXPECTED_CALL,
}  # fmt: skip
_OPENAI_REASONS = frozenset({"stop", "length", "tool_calls", "content_filter", "error"})
# finishes that may cut a call short (a call open at one is not complete)
CUT = frozenset({"length", "content_filter", "error", MALFORMED_CALL, UNEXPECTED_CALL})
_REFUSED = {  # the finishes that refuse a call, and what ``failed_finish`` says of them
    MALFORMED_CALL: "it could not read the tool call the model wrote",
    UNEXPECTED_CALL: "the model called a tool that could not be called for this answer",
}
_PASSING = frozenset(
    {"server_error", "api_error", "overloaded_error", "rate_limit_error", "rate_limit_exceeded"}
)


def finish_reason(sent: str) -> str:
    """A finish reason as OpenAI's (see ``_FINISH``); one it has no word for, as sent."""
    reason = _FINISH.get(sent)
    if reason is None:
        lower = sent.lower()
        reason = _FINISH.get(lower, lower if lower in _OPENAI_REASONS else sent)
    return reason


def finish_of(sent: str, native: str | None) -> tuple[str, str]:
    """A choice's finish reason as OpenAI's, and the reason as the server sent
    it: OpenRouter's ``native_finish_reason`` when that one is Gemini's
    ``MALFORMED_FUNCTION_CALL`` or ``UNEXPECTED_TOOL_CALL`` (see the module
    docstring), else ``sent``'s."""
    if native and (reason := finish_reason(native)) in _REFUSED:
        return reason, native
    return finish_reason(sent), sent


def failed_finish(sent: str | None, name: str) -> str | None:
    """What an ``error`` finish says (see ``streamtools.providers.openai``), and
    one the API ended for a call it refused, else None."""
    reason = finish_reason(sent or "")
    if reason in _REFUSED:
        return f"{name} ended the answer with finish_reason {sent!r}: {_REFUSED[reason]}"
    if reason != "error":
        return None
    return f"{name} ended the answer with finish_reason {sent!r}"


def event_error(data: str) -> Any:
    """An ``event: error``'s error: its JSON error object (llama.cpp's
    ``error:`` line, mended to one), else the data as sent."""
    try:
        sent = msgspec.json.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return data
    return sent.get("error", sent) if isinstance(sent, dict) else data


def passing(error: Any) -> bool:
    """Whether an in-band error is one the server calls passing: a status code
    that is retried (OpenRouter's ``code: 502``), or a type or code that says
    so (``server_error``, ``rate_limit_exceeded``…)."""
    if not isinstance(error, dict):
        return False
    code = error.get("code")
    if isinstance(code, str) and code.isdigit():
        code = int(code)
    if isinstance(code, int) and not isinstance(code, bool):
        return code in RETRY_STATUSES
    kind = error.get("type")
    return any(isinstance(v, str) and v in _PASSING for v in (kind, code))


def error_text(error: Any) -> str:
    """An in-band error's words: its message and code, and what it says of the
    upstream provider that failed (``failures.upstream_reason``)."""
    if isinstance(error, dict):
        msg = error.get("message") or error.get("error") or error
        code = error.get("code")
        said = f"{msg} (code {code})" if code is not None else str(msg)
        upstream = upstream_reason(error)
        return (f"{said}: {upstream}" if upstream else said) + failed_generation(error)
    return str(error)
