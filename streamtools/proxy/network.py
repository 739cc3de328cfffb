"""The socket layer under the proxy's upstream pools: httpcore's anyio backend, writes coalesced.

Theory of operation
-------------------
httpcore sends an HTTP/1.1 request in two writes, the head and then the body,
and only then reads the response. On loopback or a LAN each ``send`` system
call is costly for the proxy (the kernel does the receiver's TCP work and
wakes it inside the sender's call), and the proxy sends one request per client
request, so the second write was a fixed cost per request.

``CorkedBackend`` wraps ``httpcore.AnyIOBackend`` (anyio only: it runs on
asyncio and trio alike) and gives each connection a ``CorkedStream``: writes
are held in a buffer and go out in one ``send`` just before the next read,
which for HTTP/1.1 is right after the request is complete. The buffer is also
sent at once beyond ``high_water`` bytes, so a large request body is streamed
rather than gathered. Nothing is reordered: the bytes leave in the order
written, and always before the connection waits for an answer. The write
timeout applies to the deferred send as it did to the writes. TLS upstreams
keep the corking after the handshake (the wrapped stream is corked again).

Reads go straight to the anyio byte stream under httpcore's (when it is one):
httpcore's read enters two generator-based context managers per call (its
exception mapping and ``anyio.fail_after``), about a quarter of the proxy's
CPU per paced chunk. The same mapping is written out here with a bare
``CancelScope`` for the timeout: end of stream reads as ``b""``, a broken or
closed stream raises ``httpcore.ReadError``, the deadline
``httpcore.ReadTimeout``. ``get_extra_info("is_readable")``, asked of every
pooled connection whenever a request starts or ends, polls the cached socket
instead of rebuilding anyio's attribute table.

``upstream_client`` builds one pool over this transport with a cookie jar that
refuses every cookie: the pools are shared by all of the proxy's clients.
"""

# httpcore's stream interface takes per-call timeouts, hence the parameters
# ruff: noqa: ASYNC109

from __future__ import annotations

import select
import socket
from collections.abc import Iterable
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any

import anyio
import anyio.abc
import httpcore
import httpx

__all__ = ["CorkedBackend", "CorkedStream", "corked_transport", "upstream_client"]


class CorkedStream(httpcore.AsyncNetworkStream):
    """A network stream whose writes leave together before the next read."""

    def __init__(self, stream: httpcore.AsyncNetworkStream, *, high_water: int = 64 * 1024):
        self._stream = stream
        self._pending: list[bytes] = []
        self._size = 0
        self._timeout: float | None = None
        self._high_water = high_water
        # httpcore's anyio stream, read directly (see ``read``) when it is one
        raw = getattr(stream, "_stream", None)
        self._raw: anyio.abc.ByteStream | None = (
            raw if isinstance(raw, anyio.abc.ByteStream) else None
        )
        self._socket: socket.socket | None = None

    async def _send(self) -> None:
        data = b"".join(self._pending) if len(self._pending) > 1 else self._pending[0]
        self._pending.clear()
        self._size = 0
        await self._stream.write(data, self._timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        self._pending.append(buffer)
        self._size += len(buffer)
        self._timeout = timeout
        if self._size >= self._high_water:
            await self._send()

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._pending:
            await self._send()
        raw = self._raw
        if raw is None:
            return await self._stream.read(max_bytes, timeout)
        # httpcore's own read wraps each receive in two generator-based context
        # managers (exception mapping, fail_after): a quarter of the proxy's CPU
        # per paced chunk. The same mapping, written out, with a bare scope.
        try:
            if timeout is None:
                return await raw.receive(max_bytes)
            with anyio.CancelScope(deadline=anyio.current_time() + timeout):
                return await raw.receive(max_bytes)
        except anyio.EndOfStream:
            return b""
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise httpcore.ReadError(str(exc)) from exc
        # only reached when the deadline cancelled the receive
        raise httpcore.ReadTimeout(f"no data within {timeout} s")

    async def aclose(self) -> None:
        self._pending.clear()  # a request abandoned before its answer: nothing to send
        await self._stream.aclose()

    async def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        if self._pending:
            await self._send()
        stream = await self._stream.start_tls(ssl_context, server_hostname, timeout)
        return CorkedStream(stream, high_water=self._high_water)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable" and self._raw is not None:
            # asked for every pooled connection each time a request starts or
            # ends; httpcore's answer rebuilds anyio's attribute table each time
            if self._socket is None:
                self._socket = self._stream.get_extra_info("socket")
            return _readable(self._socket)
        return self._stream.get_extra_info(info)


def _readable(sock: socket.socket | None) -> bool:
    """True when an idle connection has something to read: data, or its end
    (the server closed it); such a connection is not reused."""
    if sock is None or sock.fileno() == -1:
        return True
    if not hasattr(select, "poll"):
        return bool(select.select([sock], [], [], 0)[0])
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


class CorkedBackend(httpcore.AsyncNetworkBackend):
    """``httpcore.AnyIOBackend`` whose streams are ``CorkedStream``."""

    def __init__(self) -> None:
        self._backend = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        stream = await self._backend.connect_tcp(host, port, timeout, local_address, socket_options)
        return CorkedStream(stream)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        stream = await self._backend.connect_unix_socket(path, timeout, socket_options)
        return CorkedStream(stream)

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


def corked_transport(limits: httpx.Limits, verify: Any) -> httpx.AsyncHTTPTransport:
    """An httpx transport over ``CorkedBackend``, otherwise as httpx builds it."""
    transport = httpx.AsyncHTTPTransport(limits=limits, verify=verify)
    # httpx offers no way to pass a network backend to the httpcore pool it
    # builds (its only backend-specific part); it is set on that pool instead
    transport._pool._network_backend = CorkedBackend()
    return transport


def upstream_client(limits: httpx.Limits, verify: Any, timeout: float) -> httpx.AsyncClient:
    """One of the proxy's upstream pools: ``corked_transport``, and no cookies.

    An httpx client keeps the cookies its responses set and sends them with
    later requests; the proxy's clients share these pools, so one client's
    upstream cookie (a session, a sticky route) would travel with every other
    client's requests. The jar refuses every cookie."""
    jar = CookieJar(DefaultCookiePolicy(allowed_domains=[]))
    return httpx.AsyncClient(
        transport=corked_transport(limits, verify), timeout=timeout, cookies=jar
    )
