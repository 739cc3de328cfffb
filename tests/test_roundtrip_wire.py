"""Chunks through a wire and back: what ``FakeServer`` sends for a list of chunks (a
recording), read by the provider of that wire, makes the same text, reasoning,
calls and finish, on every wire, whichever provider the chunks came from."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from provider_support import PROVIDERS, collect, mock

from streamtools.events import CallEnd, CallError
from streamtools.model import (
    CallChunk,
    Chunk,
    FinishChunk,
    ModelRequest,
    ReasoningChunk,
    TextChunk,
)
from streamtools.native import NativeCalls
from streamtools.testing.fake_wire import CONTENT_TYPES, WIRES, Wire, encode

pytestmark = pytest.mark.anyio

_PIECES = ["a", " b", "ü", "😀", "\n", "\r\n", "\\", '"', "\u2028", "data: x", "\n\n", "{}", "\t"]
_text = st.lists(st.sampled_from(_PIECES), min_size=1, max_size=4).map("".join)
_arguments = st.dictionaries(_text, _text | st.integers() | st.booleans(), max_size=3)


@st.composite
def _reply(draw: st.DrawFn) -> list[Chunk]:
    """A reply as some provider yields it: reasoning, text, then calls whose id,
    name and arguments come in one of the shapes the providers give them."""
    out: list[Chunk] = [ReasoningChunk(text=t) for t in draw(st.lists(_text, max_size=2))]
    out += [TextChunk(text=t) for t in draw(st.lists(_text, max_size=3))]
    for n, arguments in enumerate(draw(st.lists(_arguments, max_size=3))):
        text = _json(arguments)
        cut = draw(st.integers(0, len(text)))
        shape = draw(st.sampled_from(["openai", "anthropic", "ollama", "fake"]))
        head, tail = text[:cut], text[cut:]
        call_id, name = f"c{n}", f"t{n}"
        if shape == "openai":  # OpenAIChat: the id alone, the name with the arguments
            out.append(CallChunk(index=n, id=call_id))
            out.append(CallChunk(index=n, name=name, arguments=head))
            out += [CallChunk(index=n, arguments=tail), CallChunk(index=n, done=True)]
        elif shape == "anthropic":  # AnthropicMessages: named at the block's start
            out.append(CallChunk(index=n, id=call_id, name=name))
            out.append(CallChunk(index=n, arguments=head))
            out += [CallChunk(index=n, arguments=tail), CallChunk(index=n, done=True)]
        elif shape == "ollama":  # OllamaChat: one whole call, no id
            out.append(CallChunk(index=n, name=name, arguments=text, done=True))
        else:  # FakeServer's own FakeCall
            out.append(CallChunk(index=n, id=call_id, name=name))
            out.append(CallChunk(index=n, arguments=text))
        if draw(st.booleans()):  # a completion mark said again, which NativeCalls ignores
            out.append(CallChunk(index=n, done=True))
    calls = any(isinstance(c, CallChunk) for c in out)
    out.append(FinishChunk(reason="tool_calls" if calls else "stop"))
    return out


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _summary(chunks: list[Chunk]) -> tuple[Any, ...]:
    calls = NativeCalls()
    events = [e for c in chunks if isinstance(c, CallChunk) for e in calls.feed(c)]
    events += calls.end("tool_calls")
    return (
        "".join(c.text for c in chunks if isinstance(c, TextChunk)),
        "".join(c.text for c in chunks if isinstance(c, ReasoningChunk)),
        # in the order the calls began (a call may complete sooner on one wire)
        sorted(
            (e.index, type(e).__name__, e.name, getattr(e, "arguments", None))
            for e in events
            if isinstance(e, CallEnd | CallError)
        ),
        [c.reason for c in chunks if isinstance(c, FinishChunk)],
    )


async def _played(wire: Wire, chunks: list[Chunk]) -> list[Chunk]:
    request = ModelRequest(messages=())
    body = b"".join(encode(wire, chunks, {"model": "m"}))
    provider = PROVIDERS[wire]("m", client=mock(body, stream_ctype=CONTENT_TYPES[wire]))
    return await collect(provider, request)


@pytest.mark.parametrize("wire", WIRES)
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(chunks=_reply())
async def test_a_reply_reads_back_the_same_on_every_wire(
    anyio_backend: str, wire: Wire, chunks: list[Chunk]
) -> None:
    assert _summary(await _played(wire, chunks)) == _summary(chunks)
