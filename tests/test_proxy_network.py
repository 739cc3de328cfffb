"""The corked upstream socket layer: a request leaves in one send, bytes in order."""

from __future__ import annotations

from typing import Any

import anyio
import httpcore
import httpx
import pytest

from streamtools.proxy.network import (
    CorkedBackend,
    CorkedStream,
    corked_transport,
    upstream_client,
)

pytestmark = pytest.mark.anyio


class Recording(httpcore.AsyncNetworkStream):
    """A stand-in socket: records each send, answers reads from a script."""

    def __init__(self, replies: list[bytes]) -> None:
        self.sent: list[bytes] = []
        self.replies = replies
        self.closed = False

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        return self.replies.pop(0)[:max_bytes] if self.replies else b""

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        self.sent.append(buffer)

    async def aclose(self) -> None:
        self.closed = True

    def get_extra_info(self, info: str) -> Any:
        return None


async def test_writes_leave_together_before_the_read() -> None:
    raw = Recording([b"HTTP/1.1 200 OK\r\n"])
    stream = CorkedStream(raw)
    await stream.write(b"POST / HTTP/1.1\r\n\r\n")
    await stream.write(b"")
    await stream.write(b'{"a": 1}')
    assert raw.sent == []
    assert await stream.read(100) == b"HTTP/1.1 200 OK\r\n"
    assert raw.sent == [b'POST / HTTP/1.1\r\n\r\n{"a": 1}']
    await stream.read(100)
    assert len(raw.sent) == 1  # nothing pending: no empty send


async def test_large_bodies_stream_past_high_water() -> None:
    raw = Recording([])
    stream = CorkedStream(raw, high_water=10)
    await stream.write(b"12345")
    await stream.write(b"678901")
    await stream.write(b"x")
    assert raw.sent == [b"12345678901"]
    await stream.aclose()  # abandoned: the pending byte is dropped, the socket closed
    assert raw.closed and raw.sent == [b"12345678901"]


async def test_real_requests_through_the_corked_transport() -> None:
    received: list[bytes] = []

    async def serve(client: Any) -> None:
        async with client:
            data = b""
            while b"\r\n\r\n" not in data or not data.endswith(b"hello"):
                piece = await client.receive()
                data += piece
            received.append(data)
            await client.send(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    limits = httpx.Limits(max_connections=2)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, serve)
        transport = corked_transport(limits, True)
        with anyio.fail_after(10):
            async with httpx.AsyncClient(transport=transport) as client:
                response = await client.post(f"http://127.0.0.1:{port}/x", content=b"hello")
        assert response.status_code == 200 and response.text == "ok"
        assert received[0].startswith(b"POST /x HTTP/1.1\r\n") and received[0].endswith(b"hello")
        tg.cancel_scope.cancel()


async def test_direct_reads_map_timeouts_eof_and_readability() -> None:
    async def serve(client: Any) -> None:
        async with client:
            assert await client.receive() == b"ping"
            await client.send(b"pong")
            await anyio.sleep(0.3)  # silent past the client's read timeout, then closes

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, serve)
        with anyio.fail_after(10):
            stream = await CorkedBackend().connect_tcp("127.0.0.1", port)
            assert isinstance(stream, CorkedStream) and stream._raw is not None
            assert stream.get_extra_info("is_readable") is False  # idle, open
            await stream.write(b"ping")
            assert await stream.read(100, timeout=5) == b"pong"
            with pytest.raises(httpcore.ReadTimeout):
                await stream.read(100, timeout=0.05)
            await anyio.sleep(0.5)  # the server has closed its end
            assert stream.get_extra_info("is_readable") is True
            assert await stream.read(100, timeout=5) == b""
            await stream.aclose()
            with pytest.raises(httpcore.ReadError):
                await stream.read(100)
        tg.cancel_scope.cancel()


async def test_upstream_pools_keep_no_cookies() -> None:
    """One client's upstream cookie must not travel with another client's request."""
    received: list[bytes] = []

    async def serve(client: Any) -> None:
        async with client:
            for _ in range(2):  # two requests on the kept-alive connection
                data = b""
                while b"\r\n\r\n" not in data:
                    data += await client.receive()
                received.append(data)
                await client.send(
                    b"HTTP/1.1 200 OK\r\nset-cookie: session=alice; Path=/\r\n"
                    b"content-length: 2\r\n\r\nok"
                )

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, serve)
        with anyio.fail_after(10):
            async with upstream_client(httpx.Limits(max_connections=1), True, 5.0) as client:
                for _ in range(2):
                    response = await client.get(f"http://127.0.0.1:{port}/")
                    assert response.status_code == 200
        assert len(received) == 2 and b"alice" not in received[1].lower()
        tg.cancel_scope.cancel()
