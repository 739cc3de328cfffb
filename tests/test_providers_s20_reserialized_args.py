"""Gateways that stream a call's arguments, then send them once more, whole,
written anew (elizaOS/eliza#16973: the consolidated tool-call chunk carries
the arguments re-serialized, `{"command": "ls"}` then `{"command":"ls"}`). The
text is not the text so far, so it was appended: invalid JSON, and the model
told to fix arguments it wrote right. A delta that comes once the call's
arguments are whole and is itself that same JSON value is a resend: the call
keeps its arguments, once. Other text there still fails the call
(MockTransport and FakeServer)."""

from __future__ import annotations

from typing import Any

import pytest
from provider_support import DONE, read_sse, sse

from streamtools.events import CallEnd, CallError, ParserEvent
from streamtools.model import CallChunk, FinishChunk
from streamtools.native import NativeCalls

pytestmark = pytest.mark.anyio
TRANSPORTS = pytest.mark.parametrize("transport", ["mock", "http"])


def _delta(args: str, *, head: bool = False) -> dict[str, Any]:
    call: dict[str, Any] = {"index": 0, "function": {"arguments": args}}
    if head:
        call["id"], call["type"], call["function"]["name"] = "call_1", "function", "shell"
    return {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]}


def _body(*pieces: dict[str, Any]) -> str:
    end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    return sse(*pieces, end, DONE)


async def _events(body: str, transport: str) -> tuple[list[ParserEvent], str]:
    chunks = await read_sse(body, transport)
    finish = chunks[-1]
    assert isinstance(finish, FinishChunk) and finish.reason == "tool_calls"
    native = NativeCalls(["shell"])
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    deltas = "".join(c.arguments for c in chunks if isinstance(c, CallChunk))
    return events + native.end(finish.reason), deltas


STREAMED = [_delta("", head=True), _delta('{"command": '), _delta('"ls -la", "cwd": [1, 2]}')]


@TRANSPORTS
@pytest.mark.parametrize("again", [
    _delta('{"command":"ls -la","cwd":[1,2]}', head=True),  # the consolidated chunk
    _delta('{"cwd": [1, 2], "command": "ls -la"}'),  # the keys in another order
    _delta('\n{"command":"ls -la","cwd":[1,2]}\n'),
], ids=["consolidated", "reordered", "blanks"])
async def test_the_arguments_written_anew_are_taken_once(
    anyio_backend: str, transport: str, again: dict[str, Any]
) -> None:
    events, deltas = await _events(_body(*STREAMED, again), transport)
    ends = [e for e in events if isinstance(e, CallEnd)]
    assert not [e for e in events if isinstance(e, CallError)]
    assert [(e.name, e.arguments) for e in ends] == [
        ("shell", {"command": "ls -la", "cwd": [1, 2]})
    ]
    assert deltas == ends[0].raw == '{"command": "ls -la", "cwd": [1, 2]}'  # each piece once


@TRANSPORTS
async def test_another_value_after_the_whole_arguments_still_fails(
    anyio_backend: str, transport: str
) -> None:
    events, _ = await _events(_body(*STREAMED, _delta('{"command":"rm -rf /"}')), transport)
    assert not [e for e in events if isinstance(e, CallEnd)]
    assert [e.reason for e in events if isinstance(e, CallError)] == ["invalid_json"]
