"""What a finished reply calls for, the checks ``Agent`` runs on it (see
``streamtools.runtime.agent``, "Deciding what comes next"): a request for tools
that grants nothing, an empty reply, a stream that did not finish, the repairs
run out. The wording of what the model is told is in ``streamtools.runtime.repair``.
"""

from __future__ import annotations

from streamtools.errors import ProviderError, RepairExhausted, TurnPaused
from streamtools.events import RetryReason, ToolFailed
from streamtools.runtime.repair import (
    OUT_OF_TOKENS,
    RepairState,
    empty_reply_reprompt,
    exhausted,
)
from streamtools.runtime.turn import Reply, unfinished_stream
from streamtools.tools import ToolRegistry

__all__ = [
    "NATIVE_REMINDER", "RETRIES", "check_exhausted", "check_stream", "empty_answer",
    "not_granted", "reasoning_only",
]


def not_granted(name: str, grantable: ToolRegistry, offered: ToolRegistry) -> str:
    """Why a requested tool is not granted: it is no tool here, or it is already
    the model's to call."""
    if name not in grantable:
        return grantable.unknown_tool_message(name)
    return f"The tool `{name}` is already available to you: call it, do not ask for it."


def empty_answer(
    reply: Reply, repair: RepairState, turn: int, *, max_tokens: int | None = None
) -> tuple[RetryReason, str] | None:
    """None for a reply that is an answer; for one with nothing in it (no text, no
    call; models do that after tool results now and then) the one re-prompt that
    asks for the answer, and ``RepairExhausted(reason="empty_reply")`` when it is
    empty again: a silent ``Final(text="")`` reads as success to a caller.

    One that the output token limit cut (finish ``length``) before any answer
    spent it on reasoning: a reasoning channel's, or ``think_open``'s opening
    reasoning with no ``</think>``, which stays reasoning (unfinished thinking,
    as vLLM's and SGLang's reasoning parsers and llama.cpp return it: reasoning,
    no content, finish ``length``). It is told so once, to think briefly
    (``empty_reply_reprompt(cut=True)``); cut so again, the run ends with
    ``RepairExhausted(reason="max_tokens")``, as a call cut twice does: the
    cause is the limit, not an empty reply, and the message says how much
    reasoning it wrote (kept in the transcript the error carries) and what to
    raise."""
    if reply.visible_text.strip() or reply.errors:  # (errors: ``check_exhausted``)
        return None
    finish = reply.finish.reason if reply.finish is not None else None
    cut = finish in OUT_OF_TOKENS
    if not repair.nudged:
        repair.nudged = True
        return "empty_reply", empty_reply_reprompt(ran=repair.calls_run > 0, cut=cut)
    if cut:
        raise RepairExhausted(_cut_thinking(reply, max_tokens), reason="max_tokens", turns=turn)
    hint = reasoning_only(reply)
    raise RepairExhausted(
        f"the model's reply was empty again after it was asked for its answer{hint}",
        reason="empty_reply",
        turns=turn,
    )


def _cut_thinking(reply: Reply, max_tokens: int | None) -> str:
    """What ``RepairExhausted`` says of a reply the token limit cut before any answer."""
    limit = "max_tokens" if max_tokens is None else f"max_tokens ({max_tokens})"
    thought = len("".join(reply.reasoning))
    spent = (
        f"it was all reasoning ({thought:,} characters, kept in the transcript)"
        if thought
        else "it wrote nothing visible (reasoning the server did not send counts too)"
    )
    return (
        f"the model's reply reached the output token limit before it gave any answer, "
        f"again after it was asked for its answer: {spent}. Raise {limit}, or have the "
        "model reason less"
    )


def reasoning_only(reply: Reply) -> str:
    """Why an empty reply was empty when the server streamed reasoning in its own
    field (``reply.origin``) and nothing else, or "". A reasoning parser that reads
    a reply with thinking turned off as all reasoning puts the answer there too
    (vLLM's with ``enable_thinking: false``, vllm-project/vllm#17357, #19222;
    LocalAI). It is not shown as the answer: it was streamed, and kept, as
    reasoning, and where the server split it right it is the model's thinking."""
    if reply.origin is None or not "".join(reply.reasoning).strip():
        return ""
    return (
        f": the server sent only reasoning, in its `{reply.origin.field}` field. A server "
        "whose reasoning parser reads every reply as reasoning puts the answer there too "
        "(vLLM's --reasoning-parser with enable_thinking false, LocalAI): leave thinking "
        "on, or serve the model without the reasoning parser"
    )


def check_stream(reply: Reply) -> None:
    """Raise ``ProviderError`` when the reply's stream ended with an error, or
    with a turn the server paused (``pause``) that was not continued: its text
    was cut off, it is not the answer (rung 4)."""
    unfinished = unfinished_stream(reply.finish)
    if unfinished is not None:
        kind, message = unfinished
        error = TurnPaused if kind == "pause" else ProviderError
        raise error(message, partial_text=reply.visible_text)


def check_exhausted(reply: Reply, repair: RepairState, turn: int) -> None:
    refused = [
        o.message
        for c in reply.calls
        if isinstance(o := reply.outcomes.get(c.id), ToolFailed) and o.kind == "refused"
    ]
    error = exhausted(
        repair, text=reply.visible_text, errors=reply.errors, refused=refused, turns=turn
    )
    if error is not None:
        raise error


# native mode's repairs: the dialect's text format would teach calls that are not run
NATIVE_REMINDER = (
    "Call the tool through your tool-calling interface (a function call, not text), "
    "with all its arguments as one complete JSON object."
)


# The steps that ask the model again for what its reply lacked (a ``Retry``)
RETRIES = frozenset({"call_error", "refusal", "missing_call", "empty_reply"})
