"""Writing a model's reply into the transcript (DESIGN §5).

``append_reply`` adds one reply as the agent keeps it (see the module docstring
of ``streamtools.runtime.agent``): the assistant message (in prompt mode the
text as written, with the raw text of failed calls left in place; in native
mode the visible text only), then one result per call, paired by call id, in
call order. A call with no outcome yet (its turn was cut short: the time
budget, the consumer leaving, the model's stream failing) gets a tool error
saying it did not finish and why (``OUT_OF_TIME``, ``STOPPED``, ``FAILED``).
"""

from __future__ import annotations

from streamtools.events import ToolResult
from streamtools.runtime.turn import Reply
from streamtools.transcript import AssistantMessage, ToolCall, ToolResultMessage, Transcript

__all__ = ["FAILED", "OUT_OF_TIME", "STOPPED", "append_reply"]

# What a call still running when its turn was cut short is told, after "did not finish: "
OUT_OF_TIME = "the run's time budget ran out while it ran."
STOPPED = "the run was stopped while it ran."
FAILED = "the model's stream failed while it ran."


def append_reply(
    transcript: Transcript, reply: Reply, *, native: bool, unfinished: str = OUT_OF_TIME
) -> None:
    # each call's place in the text the transcript keeps (native: the visible text)
    offsets = reply.text_offsets if native else reply.offsets
    calls = tuple(
        ToolCall(
            id=c.id,
            name=c.name,
            arguments=c.arguments,
            raw=None if native else c.raw,
            offset=offsets.get(c.id),
            extra=c.extra,
        )
        for c in reply.calls
    )
    # native: the visible text only (see the module docstring)
    text = reply.visible_text if native else "".join(reply.written)
    reasoning = "".join(reply.reasoning)
    thinking = tuple(reply.thinking)
    transcript.add(
        AssistantMessage(
            text=text,
            calls=calls,
            reasoning=reasoning,
            thinking=thinking,
            reasoning_origin=reply.origin,
            unparsed=not native and bool(reply.errors),
        )
    )
    for call in reply.calls:
        outcome = reply.outcomes.get(call.id)
        if outcome is None:  # a turn cut short (the time budget, the consumer leaving)
            content = f"`{call.name}` did not finish: {unfinished}"
            result = ToolResultMessage(
                call_id=call.id, name=call.name, content=content, is_error=True
            )
        elif isinstance(outcome, ToolResult):
            result = ToolResultMessage(call_id=call.id, name=call.name, content=outcome.content)
        else:
            result = ToolResultMessage(
                call_id=call.id, name=call.name, content=outcome.message, is_error=True
            )
        transcript.add(result)
