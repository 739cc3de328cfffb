"""The proxy's upstream HTTP clients: no cookies, one connection each.

Theory of operation
-------------------
The proxy's clients share its upstream connection pools (see ``app``). An httpx
client keeps the cookies its responses set and sends them with later requests,
so one client's upstream cookie (a session, a sticky route) would travel with
every other client's requests: ``upstream_client`` builds a pool whose jar
refuses every cookie. Everything else is httpx's own transport.

Each upstream connection has an ``httpx.AsyncClient`` of its own (a pool of
one), made the first time the proxy needs one more connection and kept until
the app shuts down, up to ``max_connections``. A request takes the idle client
freed last (its connection is the warmest: no new TLS handshake, no expired
keep-alive), or makes one. One shared pool would do, but httpcore scans its
pooled connections each time a request starts or ends, polling every idle
one's socket and, for each idle one, counting the idle ones again. With pools
of eight that scan was an eighth of the proxy's profile; in a loop of short
streams, pools of one cost about a tenth less CPU per request. When all
``max_connections`` clients are busy, a request waits in httpx's queue of the
least loaded one. ``GET /v1/models`` takes a client the same way, so it never
waits behind a stream. The clients are made and closed by the ASGI lifespan
(``app``).

(An earlier version wrapped httpcore's network backend to coalesce writes and
skip its per-read wrappers. It reached into httpx and httpcore private
attributes for a gain the bench on a shared 2-core machine could not separate
from noise, so it was taken out; the per-chunk profile is in the issue note.)
"""

from __future__ import annotations

from collections.abc import Callable
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any

import httpx

__all__ = ["Upstreams", "upstream_client"]


def upstream_client(limits: httpx.Limits, verify: Any, timeout: float) -> httpx.AsyncClient:
    """One of the proxy's upstream pools: httpx's transport, and no cookies."""
    jar = CookieJar(DefaultCookiePolicy(allowed_domains=[]))
    return httpx.AsyncClient(limits=limits, verify=verify, timeout=timeout, cookies=jar)


class Upstreams:
    """The upstream clients, one connection each, made as needed (see the module
    docstring), at most ``limit``."""

    def __init__(self, make: Callable[[], httpx.AsyncClient], limit: int) -> None:
        self._make = make
        self._limit = max(1, limit)
        self.clients: list[httpx.AsyncClient] = []
        self.load: list[int] = []  # requests on each client
        self._idle: list[int] = []  # clients with none, the last freed on top

    def acquire(self) -> int:
        if self._idle:
            index = self._idle.pop()
        elif len(self.clients) < self._limit:
            index = len(self.clients)
            self.clients.append(self._make())
            self.load.append(0)
        else:  # all busy: httpx queues the request on the least loaded one
            index = min(range(len(self.load)), key=self.load.__getitem__)
        self.load[index] += 1
        return index

    def release(self, index: int) -> None:
        self.load[index] -= 1
        if not self.load[index]:
            self._idle.append(index)

    async def aclose(self) -> None:
        for client in self.clients:
            await client.aclose()
