"""Chunks a server ends with one newline instead of the blank line SSE
requires (observed streaming GLM-4.7's and Kimi K2.5's tool calls:
rexxars/eventsource-parser#31): httpx-sse reads the run as one event whose
data is ``{...}\\n{...}``, and the answer ended in an error ("malformed JSON:
trailing characters") at the first run. Such data is read as the events it
holds; a value written over several ``data:`` lines, as the spec allows, is
read whole as before."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_support import DONE, read_sse, sse, text_of

from streamtools.events import CallEnd
from streamtools.model import CallChunk, Chunk, FinishChunk
from streamtools.native import NativeCalls

pytestmark = pytest.mark.anyio


def _chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    event = {"id": "c1", "object": "chat.completion.chunk", "model": "glm-4.7",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return json.dumps(event)


def _call(index: int, args: str, call_id: str | None = None, name: str | None = None,
          ) -> dict[str, Any]:
    call: dict[str, Any] = {"index": index, "function": {"arguments": args}}
    if call_id is not None:
        call |= {"id": call_id, "type": "function"}
        call["function"]["name"] = name
    return {"tool_calls": [call]}


CHUNKS = [
    _chunk({"role": "assistant", "reasoning_content": "Two files."}),
    _chunk({"content": "Reading both."}),
    _chunk(_call(0, "", "call_a", "read")),
    _chunk(_call(0, '{"path": ')),
    _chunk(_call(0, '"a.md"}')),
    _chunk(_call(1, "", "call_b", "read")),
    _chunk(_call(1, '{"path": "b.md"}')),
    _chunk({}, "tool_calls"),
]


def _ends(chunks: list[Chunk]) -> list[tuple[str, Any, str]]:
    native = NativeCalls()
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    ends = [e for e in [*events, *native.end("tool_calls")] if isinstance(e, CallEnd)]
    return [(e.name, e.arguments, e.id) for e in ends]


WANT = [("read", {"path": "a.md"}, "call_a"), ("read", {"path": "b.md"}, "call_b")]


@pytest.mark.parametrize("transport", ["mock", "http"])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
async def test_chunks_ended_with_one_newline(
    anyio_backend: str, transport: str, newline: str
) -> None:
    # every chunk ended with one newline; the server's [DONE] with a blank line,
    # and once with none at all
    body = "".join(f"data: {c}{newline}" for c in CHUNKS) + newline + DONE
    for done in (DONE, ""):
        chunks = await read_sse(body.removesuffix(DONE) + done, transport)
        assert text_of(chunks) == "Reading both."
        assert _ends(chunks) == WANT
        assert chunks[-1] == FinishChunk(reason="tool_calls")


async def test_runs_among_whole_events(anyio_backend: str) -> None:
    # some chunks written as the spec says, some run together, [DONE] in a run
    runs = [CHUNKS[:2], CHUNKS[2:3], CHUNKS[3:6], CHUNKS[6:], ["[DONE]"]]
    body = "".join("".join(f"data: {c}\n" for c in run) + "\n" for run in runs)
    chunks = await read_sse(body, "mock")
    assert text_of(chunks) == "Reading both."
    assert _ends(chunks) == WANT
    assert chunks[-1] == FinishChunk(reason="tool_calls")


async def test_a_value_over_several_data_lines_is_one_event(anyio_backend: str) -> None:
    pretty = json.dumps(json.loads(_chunk({"content": "Hi {there}"})), indent=1)
    body = "".join(f"data: {line}\n" for line in pretty.split("\n")) + "\n"
    body += sse(json.loads(_chunk({}, "stop")), DONE)
    chunks = await read_sse(body, "mock")
    assert text_of(chunks) == "Hi {there}"
    assert chunks[-1] == FinishChunk(reason="stop")


async def test_malformed_data_is_still_malformed(anyio_backend: str) -> None:
    body = f"data: {CHUNKS[1]}\ndata: {{\"choices\": [\n\n" + DONE
    chunks = await read_sse(body, "mock")
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and last.reason == "error"
    assert "malformed JSON" in (last.message or "")
