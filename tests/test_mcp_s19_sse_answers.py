"""A call over streamable HTTP that the server answers as an SSE stream, on
asyncio and trio.

The SDK's server answers a request with plain JSON unless the handler sends a
notification first (progress, a log line) or runs past 15 s; then the answer is
an SSE stream. The SDK's client reads that stream up to the answer and returns
from inside its ``async for``, leaving httpx2's async generators (the event
source and the byte streams under it) suspended; trio's finalizer warns about
each such generator when it is collected (asyncio's closes them quietly). Under
``filterwarnings = error`` that warning failed whatever trio test ran into it:
every call whose tool reports progress, and, on a loaded machine where a
listing took more than 15 s, test_mcp_agent's plain HTTP test. The response
itself is closed before the return, so no connection is left (the socket guard
still checks that); conftest ignores that one warning of the SDK's.
"""

from __future__ import annotations

import anyio
import pytest
from mcp_servers.harness import PROGRESS_SERVER, http_server_processes

from streamtools.mcp import mcp_tools

pytestmark = pytest.mark.anyio


async def test_a_call_answered_as_an_sse_stream_returns_its_result() -> None:
    with http_server_processes(PROGRESS_SERVER) as (url, spawn, _unlisten):
        spawn()
        async with mcp_tools(url) as registry:
            build = registry.get("build")
            assert build is not None
            with anyio.fail_after(60):
                # progress notifications before the answer: the server streams SSE
                assert await build.invoke({"seconds": 0.2}) == "built"
