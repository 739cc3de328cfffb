"""Ollama's own call ids (0.12.10 and later send ``id`` on each of
``message.tool_calls``) are the calls' ids (MockTransport and a real server on 127.0.0.1)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_support import collect, mock

from streamtools.events import CallEnd, CallStart
from streamtools.model import CallChunk
from streamtools.native import NativeCalls
from streamtools.providers import OllamaChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio


def ollama_lines(*objs: dict[str, Any]) -> str:
    return "".join(json.dumps(o) + "\n" for o in objs)


@pytest.mark.parametrize("transport", ["mock", "http"])
async def test_ollama_s_own_call_ids_are_used(anyio_backend: str, transport: str) -> None:
    """Ollama 0.12.10 and later name each call (``call_lyywui55``); the id was
    dropped and ``NativeCalls`` named the calls ``call_0``, ``call_1``."""
    calls = [
        {"id": "call_lyywui55", "function": {"name": "search", "arguments": {"q": "Paris"}}},
        {"function": {"name": "search", "arguments": {"q": "Rome"}}},  # an older Ollama's
    ]
    body = ollama_lines(
        {"message": {"role": "assistant", "content": "", "tool_calls": calls}, "done": False},
        {"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"},
    )
    if transport == "mock":
        client = mock(body, stream_ctype="application/x-ndjson")
        chunks = await collect(OllamaChat("qwen3", client=client))
    else:
        reply = Reply(raw=body.encode(), content_type="application/x-ndjson")
        async with FakeServer([reply], wire="ollama") as server:
            chunks = await collect(OllamaChat("qwen3", base_url=server.base_url))
    call_chunks = [c for c in chunks if isinstance(c, CallChunk)]
    assert [c.id for c in call_chunks] == ["call_lyywui55", None]
    native = NativeCalls(["search"])
    events = [e for c in call_chunks for e in native.feed(c)] + native.end("tool_calls")
    starts = [e.id for e in events if isinstance(e, CallStart)]
    ends = [e.id for e in events if isinstance(e, CallEnd)]
    assert starts[0] == "call_lyywui55" and ends == starts
    assert starts[1] != "call_lyywui55"
