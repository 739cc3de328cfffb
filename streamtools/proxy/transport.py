"""A cheaper network layer under httpx for the proxy's plain-HTTP upstreams.

Theory of operation
-------------------
Profiling a paced proxy (one upstream chunk every few milliseconds per stream)
showed a quarter of its CPU in the socket layer under httpcore, not in HTTP:
anyio's stream resumes reading before each ``receive`` and pauses it after
(two ``epoll_ctl`` system calls per chunk), and httpcore wraps each read in
``anyio.fail_after`` (a cancel scope and a timer per chunk).

``FastBackend`` is an ``httpcore.AsyncNetworkBackend`` whose streams are an
asyncio ``Protocol``: the socket stays registered for reading (reading is
paused only when ``_HIGH_WATER`` bytes are waiting unread, which is the
backpressure), received bytes are queued, and ``read`` takes what is queued or
waits on one future, whose read timeout is one ``call_later`` timer. Errors are
httpcore's (``ReadError``, ``ReadTimeout``, ``WriteError``, ``ConnectError``,
``ConnectTimeout``), so httpx maps them as usual. Cancellation (anyio cancel
scopes cancel the task) interrupts the wait like any await.

This is the proxy's one use of asyncio directly, on purpose and contained: the
backend is only used when the running loop is asyncio (Uvicorn's), and for
anything else (trio, Unix sockets) it hands over to httpcore's anyio backend.
``fast_transport`` puts it under an ``httpx.AsyncHTTPTransport`` for a
plain ``http://`` upstream (local model servers). TLS upstreams keep the stock
backend: their handshake and record layer are handled by anyio, untouched.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections import deque
from collections.abc import Iterable
from typing import Any, cast

import httpcore
import httpx
import sniffio

__all__ = ["FastBackend", "fast_transport"]

_HIGH_WATER = 256 * 1024  # unread bytes beyond which the socket is paused


class _Protocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.eof = False
        self.error: BaseException | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.writable: asyncio.Future[None] | None = None
        self.transport: asyncio.Transport | None = None
        self.paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # (uvloop's transports implement asyncio.Transport without subclassing it)
        self.transport = cast(asyncio.Transport, transport)

    def _wake(self) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.size += len(data)
        if self.size >= _HIGH_WATER and self.transport is not None and not self.paused:
            self.paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self._wake()
        writable, self.writable = self.writable, None
        if writable is not None and not writable.done():
            writable.set_result(None)

    def pause_writing(self) -> None:
        if self.writable is None:
            self.writable = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        writable, self.writable = self.writable, None
        if writable is not None and not writable.done():
            writable.set_result(None)


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(httpcore.ReadTimeout("timed out reading from the upstream"))


class _Stream(httpcore.AsyncNetworkStream):
    def __init__(self, transport: asyncio.Transport, protocol: _Protocol) -> None:
        self._transport = transport
        self._protocol = protocol

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109 (httpcore's interface)
        protocol = self._protocol
        if not protocol.chunks:
            if protocol.eof:
                if protocol.error is not None:
                    raise httpcore.ReadError(str(protocol.error))
                return b""
            loop = asyncio.get_running_loop()
            waiter: asyncio.Future[None] = loop.create_future()
            protocol.waiter = waiter
            timer = loop.call_later(timeout, _expire, waiter) if timeout is not None else None
            try:
                await waiter
            finally:
                protocol.waiter = None
                if timer is not None:
                    timer.cancel()
            if not protocol.chunks:
                return await self.read(max_bytes, timeout)  # eof or error
        chunk = protocol.chunks.popleft()
        if len(chunk) > max_bytes:
            chunk, rest = chunk[:max_bytes], chunk[max_bytes:]
            protocol.chunks.appendleft(rest)
        protocol.size -= len(chunk)
        if protocol.paused and protocol.size < _HIGH_WATER // 2:
            protocol.paused = False
            self._transport.resume_reading()
        return chunk

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109 (httpcore's interface)
        if not buffer:
            return
        if self._transport.is_closing():
            raise httpcore.WriteError("the upstream connection is closed")
        self._transport.write(buffer)
        writable = self._protocol.writable
        if writable is not None:
            try:
                await asyncio.wait_for(asyncio.shield(writable), timeout)
            except TimeoutError as exc:
                raise httpcore.WriteTimeout("timed out writing to the upstream") from exc

    async def aclose(self) -> None:
        self._transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("FastBackend serves plain-HTTP upstreams only")

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":  # an idle pooled connection the server closed
            return bool(self._protocol.chunks) or self._protocol.eof
        if info == "socket":
            return self._transport.get_extra_info("socket")
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        return None


class FastBackend(httpcore.AsyncNetworkBackend):
    """Protocol-based streams on asyncio; httpcore's anyio backend otherwise."""

    def __init__(self) -> None:
        self._fallback = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        if sniffio.current_async_library() != "asyncio":
            return await self._fallback.connect_tcp(
                host, port, timeout, local_address, socket_options
            )
        loop = asyncio.get_running_loop()
        local = (local_address, 0) if local_address else None
        try:
            transport, protocol = await asyncio.wait_for(
                loop.create_connection(_Protocol, host, port, local_addr=local), timeout
            )
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"connecting to {host}:{port} timed out") from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for option in socket_options or ():
                sock.setsockopt(*option)
        return _Stream(transport, protocol)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        return await self._fallback.connect_unix_socket(path, timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        await self._fallback.sleep(seconds)


def fast_transport(limits: httpx.Limits, tls: ssl.SSLContext) -> httpx.AsyncHTTPTransport:
    """An httpx transport for plain-HTTP upstreams over ``FastBackend``.

    ``tls`` is unused by plain HTTP, but without it httpx loads the CA bundle
    again for each transport (tens of milliseconds each)."""
    transport = httpx.AsyncHTTPTransport(limits=limits, verify=tls)
    # httpx builds its httpcore pool without a way to pass a network backend;
    # the same pool, built with one, replaces it
    transport._pool = httpcore.AsyncConnectionPool(
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=FastBackend(),
    )
    return transport
