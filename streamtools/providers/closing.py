"""Closing an answer's response: the one way a provider lets go of a body.

httpx reads a streamed body through nested async generators, and closing the
response alone leaves them suspended (see ``release``). Every provider closes
an answer through ``release``, from ``streamtools.providers.base``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx

__all__ = ["exhaust", "release"]

_GRACE = 0.25  # seconds to read the end of a finished body before closing it
_CLEANUP_BOUND = 2.0  # cleanup never blocks longer than this, even when cancelled


async def release(response: httpx.Response, source: AsyncIterator[Any], *, graceful: bool) -> None:
    """Close the response and finish the generator chain reading it.

    httpx reads a body through nested async generators; leaving one suspended
    makes trio warn when it is garbage collected, and ``aclose()`` on the
    outer one leaves the inner ones suspended. Advancing the chain after the
    connection is closed raises through every level, which finishes them all.
    After a complete answer the rest of the body (usually just its end) is read
    first, briefly, so that an injected client can reuse the connection.
    """
    with anyio.move_on_after(_CLEANUP_BOUND, shield=True):
        if graceful:
            with anyio.move_on_after(_GRACE):
                await exhaust(source)
        await response.aclose()
        await exhaust(source)


async def exhaust(source: AsyncIterator[Any]) -> None:
    try:
        async for _ in source:
            pass
    except Exception:  # a closed stream fails in many ways; all of them mean "done"
        pass
