"""An Anthropic Messages request's messages, as ``AnthropicMessages`` sends them.

System messages are joined into the top-level ``system`` (``messages`` returns
it apart); an assistant message's signed ``thinking`` blocks go back as they
came, each in its place among its ``tool_use`` blocks, and the reasoning of a
server that signs none as one unsigned block to that server and model only;
tool results become ``tool_result`` blocks in a user message; consecutive
messages of one role are merged; blank text is left out. See
``streamtools.providers.anthropic``'s module docstring for why each is so.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from streamtools.model import ChatMessage, ReasoningOrigin, Thinking
from streamtools.providers.bodies import answerable_only

__all__ = ["THINKING", "messages", "readable"]

THINKING = "thinking"  # the ``ReasoningOrigin.field`` of a thinking block's text


def _thinking(block: Thinking) -> dict[str, Any]:
    if block.redacted is not None:
        return {"type": "redacted_thinking", "data": block.redacted}
    return {"type": "thinking", "thinking": block.text, "signature": block.signature}


def readable(text: str | None) -> bool:
    """Text the API takes in a text block: not empty, not only whitespace."""
    return bool(text and not text.isspace())


_NOT_IN_ID = re.compile(r"[^a-zA-Z0-9_-]")


def _tool_id(call_id: str | None) -> str | None:
    """A call's id as the API takes one (``^[a-zA-Z0-9_-]+$``): another provider's
    (Kimi's ``functions.search:0``, an id joined with ``|``) would have every
    request of the conversation refused (400). Other characters become ``_``,
    and a digest of the id keeps two ids apart that differ only in them; its
    ``tool_use`` and ``tool_result`` get the same one, so they stay paired."""
    if call_id is None or (call_id and _NOT_IN_ID.search(call_id) is None):
        return call_id
    digest = hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{_NOT_IN_ID.sub('_', call_id)}_{digest}"


def _unsigned(msg: ChatMessage, server: str) -> list[dict[str, Any]]:
    """A reply's reasoning as one unsigned thinking block, for the server and
    model that streamed it unsigned (see ``providers.anthropic``), else none: a
    reply with signed blocks sends those. Only with calls, which is where
    those servers ask for it: a gateway that drops the signatures of
    Anthropic's own blocks has the API refuse an unsigned one ("Invalid
    `signature` in `thinking` block"), and a reply without calls needs none."""
    if msg.role != "assistant" or msg.thinking or not msg.reasoning or not msg.tool_calls:
        return []
    if msg.reasoning_origin != ReasoningOrigin(field=THINKING, server=server):
        return []
    return [{"type": "thinking", "thinking": msg.reasoning, "signature": ""}]


def _blocks(msg: ChatMessage, server: str = "") -> list[dict[str, Any]]:
    """A message's content blocks. An assistant message's thinking blocks go in
    their places among its tool_use blocks (``Thinking.calls``; the ones
    before any call first, then the text), as interleaved thinking wrote them:
    the API refuses them moved. A block placed after more calls than the
    message carries (a call that failed is not sent back) goes last. A call
    whose arguments are text that is not a JSON object (``NativeCall``) has
    ``input`` ``{}``, which is all the API takes, and its text in a text block
    just before it, so the model still reads what it wrote."""
    if msg.role == "tool":
        use_id = _tool_id(msg.tool_call_id)
        result = {"type": "tool_result", "tool_use_id": use_id, "content": msg.content}
        return [{**result, "is_error": True} if msg.is_error else result]
    thinking = msg.thinking if msg.role == "assistant" else ()
    blocks = [_thinking(t) for t in thinking if t.calls <= 0] or _unsigned(msg, server)
    if readable(msg.content):  # the API refuses blank text blocks
        blocks.append({"type": "text", "text": msg.content})
    for n, call in enumerate(msg.tool_calls):
        if n:
            blocks.extend(_thinking(t) for t in thinking if t.calls == n)
        if readable(call.arguments_text):  # ``input`` must be an object: the text before it
            blocks.append({"type": "text", "text": call.arguments_text})
        use = {"type": "tool_use", "id": _tool_id(call.id), "name": call.name}
        blocks.append({**use, "input": call.arguments})
    last = max(len(msg.tool_calls), 1)
    blocks.extend(_thinking(t) for t in thinking if t.calls >= last)
    return blocks


def messages(
    messages: tuple[ChatMessage, ...], server: str = ""
) -> tuple[str | None, list[dict[str, Any]]]:
    system = [m.content for m in messages if m.role == "system"]
    out: list[dict[str, Any]] = []
    for msg in answerable_only(messages):
        if msg.role == "system":
            continue
        role = "assistant" if msg.role == "assistant" else "user"
        simple = msg.role != "tool" and not msg.tool_calls and not msg.thinking
        if simple and not readable(msg.content):
            continue  # the API refuses blank messages; a blank reply carries nothing
        if out and out[-1]["role"] == role:
            prev = out[-1]
            if isinstance(prev["content"], str):
                prev["content"] = (
                    [{"type": "text", "text": prev["content"]}] if prev["content"] else []
                )
            prev["content"].extend(_blocks(msg, server))
        elif simple:
            out.append({"role": role, "content": msg.content})
        else:
            out.append({"role": role, "content": _blocks(msg, server)})
    return ("\n\n".join(system) if system else None), out
