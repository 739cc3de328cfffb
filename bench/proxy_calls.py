"""The proxy's own work per request and per chunk, counted in one process.

    python bench/proxy_calls.py [--requests 50]

``bench/proxy.py`` measures latency and CPU with real sockets on a shared
machine, where the figures swing with outside load. This script counts work
instead: the proxy app (``create_app``) is driven in-process through
``httpx.ASGITransport``, its upstream an ``OpenAIChat`` over
``httpx.MockTransport`` streaming a fixed reply (text chunks, then one am_xml
call), and cProfile counts the Python function calls of each request. The count
is the same on every run of the same code, so it shows a change's cost where the
latency bench cannot (a function call costs some 50-100 ns here). Printed side by
side: calls per request for a 1-chunk and a 101-chunk reply, the calls each more
chunk costs (their difference / 100), and the best CPU time per request of each.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx

from streamtools.providers import OpenAIChat
from streamtools.proxy import ProxyConfig, create_app

CALL = '<am:tool_call name="search"><query>cats</query></am:tool_call>'
REQUEST = {
    "model": "m",
    "stream": True,
    "messages": [{"role": "user", "content": "find cats"}],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "search",
                "description": "Search the web.",
                "parameters": {
                    "type": "object",
                    "properties": {"query": {"type": "string"}},
                    "required": ["query"],
                },
            },
        }
    ],
}


def _event(delta: dict[str, Any], finish: str | None = None) -> bytes:
    chunk = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def _reply(chunks: int) -> list[bytes]:
    """The upstream's SSE events: the role, ``chunks`` text pieces, the call, the end."""
    events = [_event({"role": "assistant", "content": ""})]
    events += [_event({"content": f"word{i} "}) for i in range(chunks)]
    events += [_event({"content": CALL}), _event({}, "stop"), b"data: [DONE]\n\n"]
    return events


class _Body(httpx.AsyncByteStream):
    def __init__(self, events: list[bytes]) -> None:
        self.events = events

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for event in self.events:
            yield event


def _app(chunks: int) -> Any:
    events = _reply(chunks)

    def upstream(request: httpx.Request) -> httpx.Response:
        sse = {"content-type": "text/event-stream"}
        return httpx.Response(200, headers=sse, stream=_Body(events))

    def factory(model: str, key: str | None) -> OpenAIChat:
        client = httpx.AsyncClient(transport=httpx.MockTransport(upstream))
        return OpenAIChat(model, base_url="http://upstream/v1", api_key="k", client=client)

    return create_app(ProxyConfig(upstream="http://upstream/v1"), model_factory=factory)


async def _measure(chunks: int, requests: int) -> tuple[float, float]:
    """Function calls per request, and the best CPU seconds of one request."""
    transport = httpx.ASGITransport(app=_app(chunks))
    async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as client:

        async def one() -> None:
            async with client.stream("POST", "/v1/chat/completions", json=REQUEST) as response:
                assert response.status_code == 200
                async for _ in response.aiter_bytes():
                    pass

        for _ in range(5):  # warm: imports, caches
            await one()
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(requests):
            await one()
        profile.disable()
        calls = pstats.Stats(profile).total_calls / requests  # type: ignore[attr-defined]
        best = float("inf")
        for _ in range(requests):
            start = time.process_time()
            await one()
            best = min(best, time.process_time() - start)
    return calls, best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50)
    args = parser.parse_args()
    short_calls, short_cpu = anyio.run(_measure, 1, args.requests)
    long_calls, long_cpu = anyio.run(_measure, 101, args.requests)
    per_chunk = (long_calls - short_calls) / 100
    print("proxy work, in process (am_xml, OpenAIChat upstream over MockTransport)")
    print(f"{'reply':>24} | {'function calls':>14} | {'best CPU':>9}")
    print(f"{'1 text chunk + call':>24} | {short_calls:>14,.0f} | {short_cpu * 1e6:>6,.0f} µs")
    print(f"{'101 text chunks + call':>24} | {long_calls:>14,.0f} | {long_cpu * 1e6:>6,.0f} µs")
    cpu_per_chunk = (long_cpu - short_cpu) / 100 * 1e6
    print(f"each more chunk: {per_chunk:,.1f} function calls, {cpu_per_chunk:,.1f} µs CPU")


if __name__ == "__main__":
    main()
