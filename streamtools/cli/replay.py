"""``streamtools replay FILE [--json]``: print the events of a recording.

Theory of operation
-------------------
Each model call in the recording (a segment: header, then timed chunks, and
an error line if the call raised) is decoded on its own, instantly, with the
same decoders the agent uses: text through the ``Parser`` of ``--dialect``
(with no tool list, so every call name is accepted: a recording is shown as it
was, not judged), native call deltas through ``NativeCalls`` (likewise with no
tool list). No tool runs. A
call that raised shows as a ``StreamError`` with its message, then an errored
finish; so does one whose stream ended with an error finish (a cut connection,
a recording cut while it was written), as the agent shows it.

Without ``--dialect``, the dialect is the recording's own, read from the
system prompt of its requests (``recorded_dialect``): each dialect's prompt
shows the model the form of a call (``<am:tool_call name="``, ``<tool_call>``,
a ``json action`` fence, an ``@tool`` line, ``{"final": {"content":``,
``{"tool": …, "arguments":``), and a prompt that shows exactly one of them
names its dialect; a session recorded with ``streamtools chat --dialect
hermes`` was shown in ``am_xml``, its calls as plain text. A recording whose
prompts show none or several (native tools, a prompt of one's own) is shown
in ``am_xml``, as before.

Output: one line per event. The default is for people: the segment's turn,
the chunk's recorded time offset, the event type and its fields. ``--json``
writes each event as the same JSON the rest of streamtools uses
(``encode_events``), bracketed by ``turn_start``/``turn_end`` events, for
other programs. A ``turn_end`` says how the turn ended in the agent's words,
from the call's own events (the finish reason is its ``finish`` event's):
``error`` for a failed call, ``tool_calls`` for a reply with calls, ``retry``
for one with only malformed calls, ``final`` otherwise. With no tool list an
unknown tool's call is a call, and a refusal the agent asked again looks final.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any, TextIO

import msgspec

from streamtools.events import (
    CallEnd,
    CallError,
    Event,
    Finish,
    ParserEvent,
    ReasoningDelta,
    StreamError,
    TurnEnd,
    TurnEndReason,
    TurnStart,
    Usage,
    encode_events,
)
from streamtools.model import CallChunk, FinishChunk, ReasoningChunk, TextChunk, UsageChunk
from streamtools.parser import DIALECTS
from streamtools.runtime.decoders import NativeDecoder, PromptDecoder
from streamtools.runtime.recording import Segment
from streamtools.runtime.turn import unfinished_stream

__all__ = ["print_recording", "recorded_dialect", "register", "segment_events"]


def segment_events(segment: Segment, dialect: str) -> list[tuple[float, Event]]:
    """The events one recorded model call decodes to, each with its chunk's offset."""
    turn = segment.header.turn
    prompt = PromptDecoder(dialect, None, (), id_prefix=f"call_{turn}_")
    native: NativeDecoder | None = None
    out: list[tuple[float, Event]] = [(0.0, TurnStart(turn=turn))]
    finish: FinishChunk | None = None
    last = 0.0
    for timed in segment.chunks:
        last = timed.t
        events: list[Event] = []
        match timed.chunk:
            case TextChunk(text=text):
                events = list(prompt.text(text))
            case ReasoningChunk(text=text):
                # a chunk that only signs a thinking block carries no text
                events = [ReasoningDelta(text=text)] if text else []
            case CallChunk():
                native = native or NativeDecoder(None, id_prefix=f"native_{turn}_")
                events = list(native.call(timed.chunk))
            case UsageChunk():
                events = [Usage.of(timed.chunk)]  # the cache counts too
            case FinishChunk():
                finish = timed.chunk
        out.extend((last, e) for e in events)
    failure = segment.failure
    if failure is not None:
        # the call raised (an HTTP 401, a cut connection): shown, and the stream
        # ends as an errored one, open calls unterminated
        status = f" (HTTP {failure.status})" if failure.status is not None else ""
        last = max(last, failure.t)
        out.append((last, StreamError(kind="provider", message=failure.message + status)))
        finish = finish or FinishChunk(reason="error", message=failure.message)
    else:
        # a stream that ended with an error finish (a connection cut, a recording
        # cut while it was written) says why, as the agent does
        unfinished = unfinished_stream(finish)
        if unfinished is not None:
            out.append((last, StreamError(kind=unfinished[0], message=unfinished[1])))
    failed = finish is None or finish.reason == "error" or failure is not None
    tail: list[ParserEvent] = []
    if native is not None:
        tail += [e for e in native.end(finish) if not isinstance(e, Finish)]
    tail += prompt.end(finish)
    out.extend((last, e) for e in tail)
    # the agent's words for how the turn ended (the finish reason is the Finish's)
    reason: TurnEndReason
    if failed:
        reason = "error"
    elif any(isinstance(e, CallEnd) for _, e in out):
        reason = "tool_calls"
    elif any(isinstance(e, CallError) for _, e in out):
        reason = "retry"  # a malformed call, sent back to be fixed
    else:
        reason = "final"
    out.append((last, TurnEnd(turn=turn, reason=reason)))
    return out


# the form of a call each dialect's system prompt shows the model (its
# instructions and few-shot example), as no other dialect's prompt shows it
_CALL_FORMS = {
    "am_xml": re.compile(r'<am:tool_call name="'),
    "hermes": re.compile(r"<tool_call>\s*\{"),
    "json_action": re.compile(r"```json action\n"),
    "command": re.compile(r"^@tool \S", re.M),
    "json_object": re.compile(r'\{"final": \{"content":'),
    "inline_json": re.compile(r'\{"tool": "[^"\n]*", "arguments":'),
}


def recorded_dialect(segments: list[Segment]) -> str | None:
    """The dialect whose form of a call the first system prompt of the recording
    that shows any shows (see the module docstring); None when none does, or
    when it shows several."""
    for segment in segments:
        request = segment.header.request
        if request is None:
            continue
        system = "\n".join(m.content or "" for m in request.messages if m.role == "system")
        shown = [name for name, form in _CALL_FORMS.items() if form.search(system)]
        if shown:
            return shown[0] if len(shown) == 1 else None
    return None


def _human(t: float, event: Event) -> str:
    fields: dict[str, Any] = msgspec.to_builtins(event)
    kind = fields.pop("type")
    body = " ".join(f"{k}={msgspec.json.encode(v).decode()}" for k, v in fields.items())
    return f"+{t:7.3f}s  {kind:<12} {body}".rstrip()


def print_recording(path: Path, dialect: str | None, *, as_json: bool, out: TextIO) -> int:
    """Print the events of the recording at ``path`` (in ``dialect``; None: the
    recording's own, else ``am_xml``); return how many model calls it
    holds. A file that cannot be read, is not a recording, or holds no model call
    (an empty file) is a ``UsageError``, as ``streamtools demo --fixture`` says it."""
    from streamtools.cli.demo import check_fixture

    segments = check_fixture(path)
    if dialect is None:
        dialect = recorded_dialect(segments) or "am_xml"
    for segment in segments:
        for t, event in segment_events(segment, dialect):
            if as_json:
                out.write(encode_events([event]).decode())
            else:
                out.write(_human(t, event) + "\n")
    return len(segments)


def _run(args: argparse.Namespace) -> int:
    # a wrong FILE is a UsageError, which ``streamtools.cli.main`` says (exit 2);
    # a BrokenPipeError (``| head``) it handles too
    print_recording(args.file, args.dialect, as_json=args.json, out=sys.stdout)
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="print the events of a recording",
        description="Decode a recording (JSONL) and print its events, one per line.",
    )
    parser.add_argument(
        "file", type=Path, help="a recording: record()'s file, or streamtools chat --record FILE's"
    )
    parser.add_argument("--json", action="store_true", help="one JSON event per line")
    parser.add_argument(
        "--dialect",
        default=None,
        choices=sorted(DIALECTS),
        help="text dialect (default: the one the recording's system prompt shows, else am_xml)",
    )
    parser.set_defaults(func=_run)
