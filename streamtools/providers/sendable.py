"""What a provider's options must be for a request to carry them: the base
URL and header values, checked when the provider is made.

Theory of operation
-------------------
A base URL or header value that no request can carry used to fail only at
the first request, and not as the ``UsageError`` it is (see each function);
``HTTPProvider.__init__`` checks them with these, once.
"""

from __future__ import annotations

import re

import httpx

from streamtools.errors import UsageError

__all__ = ["check_header", "checked_url", "sendable_header"]


def checked_url(url: str) -> str:
    """``url``, if a request can be sent to it; else ``UsageError`` at once. A
    malformed base URL failed only at the first request, and not as a
    ``ProviderError``: a missing scheme was a "transport error" retried with
    backoff, ``http://[::1`` or a trailing newline a raw ``httpx.InvalidURL``,
    and a port past 65535 an ``OverflowError`` from the socket layer."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        problem = str(exc)
    else:
        if parsed.scheme not in ("http", "https") or not parsed.host:
            problem = "expected an http:// or https:// URL with a host"
        elif parsed.port is not None and not 0 < parsed.port < 65536:
            problem = f"port {parsed.port} is not between 1 and 65535"
        else:
            return url
    raise UsageError(f"invalid base_url {url!r}: {problem}")


_HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")  # what httpx and HTTP/1.1 can send


def sendable_header(value: str) -> bool:
    """Whether a request can carry ``value`` in a header (tabs and printable
    ASCII only: no line break, control or non-ASCII character)."""
    return _HEADER_VALUE.fullmatch(value) is not None


def check_header(name: str, value: str) -> None:
    """``UsageError`` for a header value no request can carry (a key pasted with
    a "…", a newline inside): it was a raw ``UnicodeEncodeError``, or a retried
    transport error quoting the whole value, the secret key included."""
    if not sendable_header(value):
        raise UsageError(
            f"{name} holds a character an HTTP header cannot carry (a line break, a "
            "control character or a non-ASCII one): check it for a pasted extra character"
        )
