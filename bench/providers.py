"""Chunks per second decoded from one fast local OpenAI-compatible stream.

Run: ``python bench/providers.py [--chunks N] [--rounds R]``

One server on 127.0.0.1 answers every POST with the same precomputed SSE
stream (N ``chat.completion.chunk`` events of a few characters each, a usage
chunk, ``[DONE]``), written in 64 KiB HTTP chunks so that the server costs
next to nothing and the clients' decoding is what is measured. Three clients
read that same stream, interleaved, R rounds each, best round reported:

* ``streamtools OpenAIChat``: our adapter, yielding ``Chunk`` objects;
* ``bare httpx-sse loop``: ``aconnect_sse`` + ``json.loads`` per event, taking
  the delta text: the least a hand-written client does;
* ``openai SDK``: the official ``AsyncOpenAI`` streaming client.

Targets (issue 5): ours within 1.5x of the bare loop's time, and faster than
the SDK. The script prints the figures and whether each target is met.
"""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from collections.abc import Awaitable, Callable

import anyio
import httpx
from httpx_sse import aconnect_sse

from streamtools.model import ChatMessage, ModelRequest, TextChunk
from streamtools.providers import OpenAIChat


def make_stream(n: int) -> bytes:
    base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    words = ["The", " quick", " brown", " fox", " jumps", " over", " the", " lazy", " dog", "."]
    parts = []
    for i in range(n):
        choice = {"index": 0, "delta": {"content": words[i % 10]}, "finish_reason": None}
        parts.append(f"data: {json.dumps({**base, 'choices': [choice]})}\n\n")
    last = {"index": 0, "delta": {}, "finish_reason": "stop"}
    parts.append(f"data: {json.dumps({**base, 'choices': [last]})}\n\n")
    usage = {"prompt_tokens": 5, "completion_tokens": n, "total_tokens": n + 5}
    parts.append(f"data: {json.dumps({**base, 'choices': [], 'usage': usage})}\n\n")
    parts.append("data: [DONE]\n\n")
    return "".join(parts).encode()


class FastServer:
    """Answers every request with ``body`` as a chunked SSE response; one thread per connection."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.running = True
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while self.running:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            buf = b""
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, _, rest = buf.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                while len(rest) < length:
                    rest += conn.recv(65536)
                buf = rest[length:]
                out = [
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    b"transfer-encoding: chunked\r\n\r\n"
                ]
                for i in range(0, len(self.body), 65536):
                    piece = self.body[i : i + 65536]
                    out.append(b"%x\r\n%s\r\n" % (len(piece), piece))
                out.append(b"0\r\n\r\n")
                conn.sendall(b"".join(out))

    def close(self) -> None:
        self.running = False
        self.sock.close()


async def ours(url: str, client: httpx.AsyncClient) -> int:
    provider = OpenAIChat("m", base_url=url, api_key="x", client=client)
    request = ModelRequest(messages=(ChatMessage(role="user", content="hi"),))
    n = 0
    async with provider.stream(request) as chunks:
        async for chunk in chunks:
            if isinstance(chunk, TextChunk):
                n += 1
    return n


async def bare(url: str, client: httpx.AsyncClient) -> int:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    n = 0
    async with aconnect_sse(client, "POST", f"{url}/chat/completions", json=body) as source:
        async for sse in source.aiter_sse():
            if sse.data == "[DONE]":
                break
            data = json.loads(sse.data)
            if data["choices"] and data["choices"][0]["delta"].get("content"):
                n += 1
    return n


def sdk_client(url: str) -> Callable[[], Awaitable[int]]:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=url, api_key="x")

    async def run() -> int:
        n = 0
        stream = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                n += 1
        return n

    return run


async def bench(chunks: int, rounds: int) -> None:
    server = FastServer(make_stream(chunks))
    url = f"http://127.0.0.1:{server.port}/v1"
    try:
        async with httpx.AsyncClient(timeout=60.0) as client:
            sdk = sdk_client(url)
            runners: dict[str, Callable[[], Awaitable[int]]] = {
                "streamtools OpenAIChat": lambda: ours(url, client),
                "bare httpx-sse loop": lambda: bare(url, client),
                "openai SDK": sdk,
            }
            best: dict[str, float] = {name: float("inf") for name in runners}
            for name, run in runners.items():  # warm-up: imports, connections
                assert await run() == chunks, name
            for _ in range(rounds):
                for name, run in runners.items():
                    start = time.perf_counter()
                    got = await run()
                    elapsed = time.perf_counter() - start
                    assert got == chunks, (name, got)
                    best[name] = min(best[name], elapsed)
    finally:
        server.close()
    print(f"{chunks} chunks per stream, best of {rounds} rounds, asyncio backend")
    print(f"{'client':<24} {'seconds':>9} {'chunks/s':>12} {'vs bare':>8}")
    for name, seconds in best.items():
        ratio = seconds / best["bare httpx-sse loop"]
        print(f"{name:<24} {seconds:>9.4f} {chunks / seconds:>12,.0f} {ratio:>7.2f}x")
    ours_t, bare_t, sdk_t = best.values()
    print(
        f"target: within 1.5x of bare loop: {'met' if ours_t <= 1.5 * bare_t else 'NOT met'}"
        f" ({ours_t / bare_t:.2f}x)"
    )
    print(
        f"target: faster than openai SDK:   {'met' if ours_t < sdk_t else 'NOT met'}"
        f" ({sdk_t / ours_t:.2f}x faster)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--chunks", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    anyio.run(bench, args.chunks, args.rounds)


if __name__ == "__main__":
    main()
