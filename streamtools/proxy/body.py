"""A proxy request's body: read within its limit, decompressed, decoded as JSON.

Every failure is a ``RequestError`` that says what is wrong with the body (413
past ``max_body``, before or after decompressing; 415 for a coding the standard
library cannot undo; 400 for bytes that are not UTF-8 or JSON), so the client
is told what to fix rather than "not valid JSON".
"""

from __future__ import annotations

import zlib
from typing import Any

import msgspec
from starlette.requests import Request

from streamtools.proxy.request import RequestError
from streamtools.results import decode_json

__all__ = ["read_body"]

_decode_json = msgspec.json.Decoder().decode


async def read_body(request: Request, limit: int) -> Any:
    codings = _content_codings(request.headers.get("content-encoding", ""))
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    received = bytearray()
    async for piece in request.stream():
        received += piece
        if len(received) > limit:
            raise _too_large(limit)
    data = bytes(received)
    for coding in reversed(codings):  # applied in the order listed: undone the other way
        data = _decompressed(data, coding, limit)
    try:
        # a lone surrogate escape is read as U+FFFD; when the body is broken
        # otherwise too, the error is the one found past it
        return decode_json(_decode_json, data)
    except RecursionError:
        # deeper than msgspec goes (about a thousand levels): no API's request is
        raise RequestError("the request body is nested too deeply") from None
    except UnicodeDecodeError as exc:  # msgspec's error for bytes in a string that are not UTF-8
        raise _not_utf8(exc) from None
    except msgspec.ValidationError as exc:
        # valid JSON, but a number past what is read exactly: an integer of over
        # 4300 digits (Python's guard against its quadratic int parsing, which the
        # stdlib's json keeps too) or beyond a float's range. Saying "not valid
        # JSON" sent the client looking for a syntax error.
        raise RequestError(
            "the request body holds a number too large to read (an integer of over "
            f"4300 digits, or beyond a float's range; send it as a string): {exc}"
        ) from None
    except msgspec.DecodeError as exc:
        raise RequestError(f"the request body is not valid JSON: {exc}") from exc


def _too_large(limit: int) -> RequestError:
    return RequestError(f"request body exceeds {limit} bytes", status=413, kind="too_large")


# zlib's window bits for each content coding the standard library decodes
_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


def _content_codings(header: str) -> list[str]:
    """The codings of a ``Content-Encoding`` header, in the order they were
    applied. A compressed body was read as JSON, and the client told only that
    its body was "not valid JSON/UTF-8"; a coding the standard library cannot
    undo (``zstd``, which the pi coding agent sends, or ``br``) is a 415 that
    names it, before the body is read."""
    codings = [c.strip().lower() for c in header.split(",")]
    for coding in codings:
        if coding and coding != "identity" and coding not in _WBITS:
            raise RequestError(
                f"the request body's Content-Encoding {coding!r} is not supported: "
                "send it uncompressed, or as gzip or deflate",
                status=415,
            )
    return [c for c in codings if c in _WBITS]


def _decompressed(data: bytes, coding: str, limit: int) -> bytes:
    """``data`` decoded from ``coding`` (gzip or deflate), at most ``limit``
    bytes of it: the body limit holds for what the body decodes to, and no more
    than that is ever decompressed (a small body of zeros can decode to
    gigabytes). ``deflate`` is the zlib format, or raw deflate as some clients
    send it."""
    try:
        return _inflate(data, _WBITS[coding], limit)
    except zlib.error as exc:
        if coding == "deflate":
            try:
                return _inflate(data, -zlib.MAX_WBITS, limit)
            except zlib.error:
                pass
        raise RequestError(f"the request body is not valid {coding}: {exc}") from None


def _inflate(data: bytes, wbits: int, limit: int) -> bytes:
    inflater = zlib.decompressobj(wbits)
    out = inflater.decompress(data, limit + 1)
    if len(out) > limit:
        raise _too_large(limit)
    if not inflater.eof:
        raise zlib.error("the compressed data ends early")
    return out


def _not_utf8(exc: UnicodeDecodeError) -> RequestError:
    return RequestError(f"the request body is not valid UTF-8: {exc.reason}")
