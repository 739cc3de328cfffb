"""SSEReader: the providers' SSE event-stream reader, and what it fixes over HTTP."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from provider_support import collect, mock

from streamtools.model import FinishChunk, TextChunk
from streamtools.providers import OpenAIChat
from streamtools.providers.sse import SSEReader


def read(parts: list[bytes]) -> list[tuple[str, str]]:
    reader = SSEReader()
    events = [e for part in parts for e in reader.feed(part)] + reader.end()
    return [(e.event, e.data) for e in events]


STREAM = (
    "\ufeffdata: first\r\n\r\n"
    ": keep-alive\n\n"
    "event: message_start\ndata: {\"a\": 1}\n\n"
    "data:no space\rdata:  two spaces\r\r"
    "id: 7\nretry: 100\ndata: é😀\n\n"
    "error: {\"message\": \"boom\"}\n\n"
    "event: error\n\n"
    "data: [DONE]"
).encode()
EVENTS = [
    ("message", "first"),
    ("message_start", '{"a": 1}'),
    ("message", "no space\n two spaces"),
    ("message", "é😀"),
    ("error", '{"message": "boom"}'),
    ("error", ""),
    ("message", "[DONE]"),
]


def test_events_of_a_whole_stream() -> None:
    assert read([STREAM]) == EVENTS


@settings(max_examples=200, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_split_of_the_bytes_gives_the_same_events(cuts: list[int]) -> None:
    """Parts cut anywhere (inside a \\r\\n, a UTF-8 character, the byte-order mark)."""
    bounds = [0, *sorted(cuts), len(STREAM)]
    assert read([STREAM[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]) == EVENTS


def test_only_a_leading_byte_order_mark_is_dropped() -> None:
    assert read([b"data: a\n\n\xef\xbb\xbfdata: b\n\n"]) == [("message", "a")]
    assert read([b"\xef", b"\xbb", b"\xbfdata: a\n\n"]) == [("message", "a")]


@pytest.mark.anyio
async def test_llama_cpp_error_line_ends_the_answer_in_an_error(anyio_backend: str) -> None:
    """llama.cpp's server (until September 2025) sends a failure mid-answer as an
    ``error:`` line, then ``data: [DONE]``: it was ignored and the answer looked
    complete (``stop``)."""
    body = (
        'data: {"choices":[{"index":0,"delta":{"content":"Partial"}}]}\n\n'
        'error: {"code":500,"message":"the model crashed","type":"server_error"}\n\n'
        "data: [DONE]\n\n"
    )
    chunks = await collect(OpenAIChat("m", client=mock(body)))
    assert chunks[0] == TextChunk(text="Partial")
    assert isinstance(chunks[-1], FinishChunk) and chunks[-1].reason == "error"
    assert "the model crashed" in (chunks[-1].message or "")


@pytest.mark.anyio
async def test_a_byte_order_mark_or_a_capitalised_content_type_loses_nothing(
    anyio_backend: str,
) -> None:
    event = '{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}'
    body = f"\ufeffdata: {event}\n\n"
    for ctype in ("text/event-stream", "Text/Event-Stream; charset=UTF-8"):
        chunks = await collect(OpenAIChat("m", client=mock(body, ctype=ctype)))
        assert chunks == [TextChunk(text="Hi"), FinishChunk(reason="stop")]
