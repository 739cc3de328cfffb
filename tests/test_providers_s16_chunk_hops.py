"""The work ``HTTPProvider`` adds per chunk of a stream, counted: the in-band
retry (de7b2da) put a generator of its own between the consumer and the
stream's guard, one more frame resumed for every chunk of every stream, though
it only matters before the first chunk. Counted as Python calls (generator
resumptions included) into ``providers/base.py``, with ``sys.setprofile``."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from types import FrameType
from typing import Any

import httpx
import pytest
from provider_support import collect, text_of

import streamtools.providers.base as base
from streamtools.model import FinishChunk
from streamtools.providers import OpenAIChat

pytestmark = pytest.mark.anyio


def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return f"data: {json.dumps({'choices': [choice]})}\n\n".encode()


class _Events(httpx.AsyncByteStream):
    """``n`` text events, each its own part of the body, then the finish."""

    def __init__(self, n: int) -> None:
        self.n = n

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for _ in range(self.n):
            yield event({"content": "a"})
        yield event({}, "stop")
        yield b"data: [DONE]\n\n"


async def calls_into_base(n: int, *, builtin_from: str = "") -> int:
    """Python calls into ``providers/base.py`` while a stream of ``n`` chunks is
    read; with ``builtin_from``, the built-in calls made by that function of it."""

    def handler(request: httpx.Request) -> httpx.Response:
        ctype = {"content-type": "text/event-stream"}
        return httpx.Response(200, headers=ctype, stream=_Events(n))

    model = OpenAIChat("m", client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))
    counted = 0
    where = base.__file__

    def profile(frame: FrameType, what: str, arg: Any) -> None:
        nonlocal counted
        if frame.f_code.co_filename != where:
            return
        if what == ("c_call" if builtin_from else "call"):
            if not builtin_from or frame.f_code.co_name == builtin_from:
                counted += 1

    sys.setprofile(profile)
    try:
        chunks = await collect(model)
    finally:
        sys.setprofile(None)
    assert text_of(chunks) == "a" * n and chunks[-1] == FinishChunk(reason="stop")
    return counted


async def test_a_chunk_passes_through_no_retry_generator(anyio_backend: str) -> None:
    """Per chunk: the guard and the body's reader, once each (it was three: the
    retry's generator too). Counted as the difference of 100 and 200 chunks, so
    the work of opening and closing drops out."""
    few, many = await calls_into_base(100), await calls_into_base(200)
    assert (many - few) / 100 <= 2.0, (few, many)


async def test_the_body_reader_s_built_in_calls_per_part(anyio_backend: str) -> None:
    """The body's reader keeps the last bytes of an SSE stream (to quote a stray
    line at its end: 125c4df) with no call per part (a ``len`` was one, on every
    part of every stream): the stall clock, the three blank-line searches, and
    the lengths of the record being read, seven in all."""
    few = await calls_into_base(100, builtin_from="__aiter__")
    many = await calls_into_base(200, builtin_from="__aiter__")
    assert (many - few) / 100 <= 7.0, (few, many)
