"""LocalAI streams a tool call, then the same call again, whole, under the
same id on another ``index`` (mudler/LocalAI#9722: clients merge the entries
by id). Each index began a call, so the tool ran twice, the second time under
an id of ours. A delta on a new index that is an earlier call sent again (its
id, its name or none, and its whole argument text) is that call's: nothing
more. DeepSeek and Zhipu's GLM give one id to distinct parallel calls
(HKUDS/nanobot#3943): a delta with that id and other arguments, or with none
yet, still begins a call of its own (MockTransport and FakeServer)."""

from __future__ import annotations

from typing import Any

import pytest
from provider_support import DONE, read_sse, sse

from streamtools.events import CallEnd, CallError
from streamtools.model import CallChunk, FinishChunk
from streamtools.native import NativeCalls

pytestmark = pytest.mark.anyio


def _calls(*deltas: dict[str, Any], finish: str = "tool_calls") -> str:
    chunks: list[Any] = [
        {"object": "chat.completion.chunk",
         "choices": [{"index": 0, "delta": {"tool_calls": [d]}, "finish_reason": None}]}
        for d in deltas
    ]
    end = {"object": "chat.completion.chunk",
           "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
    return sse(*chunks, end, DONE)


def _call(index: int, args: str | None, name: str | None = "exec",
          call_id: str | None = "LipwoT0p") -> dict[str, Any]:
    function = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    out: dict[str, Any] = {"index": index, "type": "function", "function": function}
    if call_id is not None:
        out["id"] = call_id
    return out


async def _ends(body: str, transport: str) -> list[tuple[str, str, dict[str, Any]]]:
    chunks = await read_sse(body, transport)
    finish = chunks[-1]
    assert isinstance(finish, FinishChunk) and finish.reason == "tool_calls"
    native = NativeCalls(["exec"])
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    events += native.end(finish.reason)
    assert not [e for e in events if isinstance(e, CallError)]
    return [(e.id, e.name, e.arguments) for e in events if isinstance(e, CallEnd)]


TRANSPORTS = pytest.mark.parametrize("transport", ["mock", "http"])


@TRANSPORTS
@pytest.mark.parametrize("again", [
    _call(1, '{"cmd": "ls"}'),
    _call(1, '{"cmd": "ls"}', name=None),
    _call(1, ' {"cmd": "ls"}\n'),
], ids=["whole", "no-name", "blanks"])
async def test_a_call_sent_again_on_another_index_runs_once(
    anyio_backend: str, transport: str, again: dict[str, Any]
) -> None:
    body = _calls(_call(0, '{"cmd": "ls"}'), again)
    assert await _ends(body, transport) == [("LipwoT0p", "exec", {"cmd": "ls"})]


@TRANSPORTS
async def test_one_id_on_distinct_calls_still_makes_two_calls(
    anyio_backend: str, transport: str
) -> None:
    body = _calls(
        _call(0, '{"cmd": "ls"}'),
        _call(1, '{"cmd": "pwd"}'),  # other arguments
        _call(2, ""),  # none yet: they come next, without the id
        _call(2, '{"cmd": "ls"}', name=None, call_id=None),
    )
    ends = await _ends(body, transport)
    assert [(name, args) for _, name, args in ends] == [
        ("exec", {"cmd": "ls"}), ("exec", {"cmd": "pwd"}), ("exec", {"cmd": "ls"}),
    ]
    assert len({call_id for call_id, _, _ in ends}) == 3  # ids of ours for the later two
