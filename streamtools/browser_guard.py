"""Keeping the web pages a user opens away from a server on 127.0.0.1.

Theory of operation
-------------------
``streamtools ui`` and ``streamtools proxy`` listen on 127.0.0.1 with the
user's tools and API keys behind them. Any page the user opens can make the
browser send requests there: an ``<img>`` or a link to a GET, a ``no-cors``
POST of JSON as ``text/plain`` (a simple request: no preflight). The browser
hides the answer from that page, but the agent ran, or the upstream was paid.
A page on a name whose DNS an attacker points at 127.0.0.1 (DNS rebinding)
is even same-origin for the browser, and reads the answers.

Two checks, on the headers alone, before anything runs:

* ``foreign_site``: browsers say where a request comes from,
  ``Sec-Fetch-Site`` (``same-origin``; ``none`` for an address the user
  typed) or, in older ones, ``Origin``, compared with the request's own host.
  A request from another site is served only if its ``Origin`` is one of the
  ``sites`` named (``*``: any). Clients that are not browsers (curl, httpx,
  the SDKs) send neither header and are served.
* ``strange_host``: a server on a loopback address is reached by its own
  names (``LOOPBACK_NAMES``); a request whose ``Host`` names another is one
  a rebound name sent.

``refusal`` runs both and gives the status to answer with: 421 for the host,
403 for the site.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

__all__ = ["LOOPBACK_NAMES", "foreign_site", "is_loopback", "refusal", "strange_host"]

# the names a server on a loopback address is reached by
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    """Whether an address to bind (``--host``) is a loopback one: the server is
    then reached by ``LOOPBACK_NAMES`` only. A name, or ``0.0.0.0``, asks to be
    reached by others and is not."""
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def foreign_site(headers: Mapping[str, str], sites: Sequence[str], fix: str) -> str | None:
    """Why a request with ``headers`` is refused as sent by a page of another
    site, or None (see the module docstring). ``fix``: how to name a site that
    may call, said in the refusal."""
    if "*" in sites:
        return None
    origin = headers.get("origin")
    site = headers.get("sec-fetch-site")
    if site is not None:
        ours = site in ("same-origin", "none")
    elif origin is not None:
        # the host only: behind a proxy that ends TLS the page is https, the request http
        ours = urlsplit(origin).netloc.lower() == headers.get("host", "").lower()
    else:
        return None  # not a browser
    if ours or (origin is not None and origin in sites):
        return None
    return f"a page of another site ({origin or 'no origin given'}) may not call this server; {fix}"


def strange_host(headers: Mapping[str, str], hosts: Sequence[str]) -> str | None:
    """Why a request with ``headers`` is refused for its ``Host``, or None.
    ``hosts``: the names it may give, without port."""
    host = headers.get("host", "")
    if host.startswith("["):  # an IPv6 address: [::1]:8500
        name = host[1 : host.find("]")] if "]" in host else host
    else:
        name = host.rpartition(":")[0] if ":" in host else host
    if name.lower() in {h.strip("[]").lower() for h in hosts}:
        return None
    return f"this server does not answer to the host name {host!r}"


def refusal(
    headers: Mapping[str, str],
    *,
    hosts: Sequence[str] | None,
    sites: Sequence[str] | None,
    fix: str,
) -> tuple[int, str] | None:
    """The status and message to refuse a request with, or None to serve it.
    ``hosts`` None: any host; ``sites`` None: no check of the site."""
    if hosts is not None and (why := strange_host(headers, hosts)) is not None:
        return 421, why
    if sites is not None and (why := foreign_site(headers, sites, fix)) is not None:
        return 403, why
    return None
