"""The proxy's upstream HTTP pools.

Theory of operation
-------------------
The proxy's clients share its upstream connection pools (see ``app``). An httpx
client keeps the cookies its responses set and sends them with later requests,
so one client's upstream cookie (a session, a sticky route) would travel with
every other client's requests: ``upstream_client`` builds a pool whose jar
refuses every cookie. Everything else is httpx's own transport.

(An earlier version wrapped httpcore's network backend to coalesce writes and
skip its per-read wrappers. It reached into httpx and httpcore private
attributes for a gain the bench on a shared 2-core machine could not separate
from noise, so it was taken out; the per-chunk profile is in the issue note.)
"""

from __future__ import annotations

from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any

import httpx

__all__ = ["upstream_client"]


def upstream_client(limits: httpx.Limits, verify: Any, timeout: float) -> httpx.AsyncClient:
    """One of the proxy's upstream pools: httpx's transport, and no cookies."""
    jar = CookieJar(DefaultCookiePolicy(allowed_domains=[]))
    return httpx.AsyncClient(limits=limits, verify=verify, timeout=timeout, cookies=jar)
