"""A consumer of the event stream matches the events' codes exhaustively: each
is a Literal, so a code the library adds is a type error here, not a silent
fall-through (``reason: str`` made ``assert_never`` impossible)."""

from __future__ import annotations

from typing import assert_never

from streamtools import CallError, Event, Retry, StreamError, ToolFailed, TurnEnd


def advice(event: CallError) -> str:
    match event.reason:
        case "invalid_json" | "malformed" | "unterminated":
            return "the model wrote the call wrong"
        case "unknown_tool":
            return "the model called a tool it was not given"
        case "invalid_arguments":
            return "the arguments do not fit the tool's schema"
        case _:
            assert_never(event.reason)


def failed(event: ToolFailed) -> bool:
    """Whether the tool itself failed (not the call, nor the runtime's refusal)."""
    match event.kind:
        case "exception" | "timeout" | "unencodable_result":
            return True
        case "invalid_arguments" | "unknown_tool" | "refused":
            return False
        case _:
            assert_never(event.kind)


def ended(event: TurnEnd) -> bool:
    match event.reason:
        case "final" | "error":
            return True
        case "tool_calls" | "retry":
            return False
        case _:
            assert_never(event.reason)


def line(event: Event) -> str:
    match event:
        case Retry(reason="refusal" | "missing_call"):
            return "asking the model again to call a tool"
        case Retry():
            return f"asking the model again ({event.reason})"
        case StreamError(kind="rate_limit" | "overloaded"):
            return "the upstream is busy: try again"
        case CallError():
            return advice(event)
        case _:
            return ""


def wrong_codes() -> None:
    """A code the library never emits is an error (an unused ignore, were it ``str``)."""
    TurnEnd(turn=1, reason="finished")  # type: ignore[arg-type]
    ToolFailed(index=0, id="c", name="t", kind="crash", message="m")  # type: ignore[arg-type]
