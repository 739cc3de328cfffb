"""The proxy's lean SSE reader against httpx-sse's decoder, and its buffering."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import anyio.abc
import httpx
import pytest
from httpx_sse import ServerSentEvent
from httpx_sse._decoders import SSEDecoder
from hypothesis import given, settings
from hypothesis import strategies as st

from streamtools.proxy.upstream import SSESource, parse_block

pytestmark = pytest.mark.anyio


def reference(stream: bytes) -> list[tuple[str, str, str, int | None]]:
    """httpx-sse's reading of a whole stream (its line splitting is str.splitlines)."""
    decoder = SSEDecoder()
    out: list[tuple[str, str, str, int | None]] = []
    text = stream.decode()
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for line in lines[:-1]:  # the unfinished last line is not a line yet
        event = decoder.decode(line)
        if event is not None:
            out.append(key(event))
    return out


def key(event: ServerSentEvent) -> tuple[str, str, str, int | None]:
    return (event.event, event.data, event.id, event.retry)


def lean(pieces: list[bytes]) -> list[tuple[str, str, str, int | None]]:
    async def read() -> list[tuple[str, str, str, int | None]]:
        response = httpx.Response(200, content=ByteStream(pieces))
        return [key(event) async for event in SSESource(response)]

    return anyio.run(read)


class ByteStream(httpx.AsyncByteStream):
    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            yield piece


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces, last = [], 0
    for point in points:
        pieces.append(data[last:point])
        last = point
    pieces.append(data[last:])
    return pieces


def test_common_blocks() -> None:
    assert key(parse_block(b'data: {"a": 1}') or ServerSentEvent()) == (
        "message",
        '{"a": 1}',
        "",
        None,
    )
    event = parse_block(b"event: error\ndata: one\ndata:two\n: comment\nid: 7\nretry: 10")
    assert event is not None and key(event) == ("error", "one\ntwo", "7", 10)
    assert parse_block(b": only a comment") is None
    assert parse_block(b"unknown: field") is None


def test_events_split_anywhere_match_one_read() -> None:
    stream = b'data: {"x": "\xc3\xa9"}\r\n\r\nevent: ping\ndata: 1\n\ndata: [DONE]\r\r'
    whole = lean([stream])
    assert whole == [("message", '{"x": "é"}', "", None), ("ping", "1", "", None)] + [
        ("message", "[DONE]", "", None)
    ]
    for cut in range(len(stream) + 1):
        assert lean([stream[:cut], stream[cut:]]) == whole, cut


def test_unfinished_last_block_is_held() -> None:
    source = SSESource(httpx.Response(200))
    source.feed(b"data: one\n\ndata: tw")
    assert source.buffered == 1
    source.feed(b"o\n\n")
    assert source.buffered == 2


line = st.one_of(
    st.builds(lambda v: f"data: {v}", st.text('ab {}"é:', max_size=8)),
    st.builds(lambda v: f"data:{v}", st.text("ab ", max_size=4)),
    st.builds(lambda v: f"event: {v}", st.sampled_from(["ping", "error", "message_start"])),
    st.builds(lambda v: f"retry: {v}", st.integers(0, 999)),
    st.just(": keep-alive"),
    st.just(""),
)


# (no "id" lines: httpx-sse keeps the last id for later events, the lean reader
# does not; the providers never read ids)
@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(line, max_size=14),
    newline=st.sampled_from(["\n", "\r\n", "\r"]),
    cuts=st.lists(st.integers(0, 400), max_size=5),
)
def test_same_events_as_httpx_sse(lines: list[str], newline: str, cuts: list[int]) -> None:
    stream = (newline.join(lines) + newline * 2).encode()
    expected = reference(stream)
    assert lean(split(stream, cuts)) == expected
