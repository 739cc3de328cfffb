"""How provider failures are named: one mapping each for transport errors and error answers.

Theory of operation
-------------------
Everything that can go wrong before a provider's answer starts ends up as one
``ProviderError``, built here and only here:

* ``transport_error`` maps every httpx exception (refused connection,
  timeouts, a cut connection) with where it happened; failures before a
  response are retryable, failures while streaming never are. A timeout
  waiting for the server (to connect, to send, to answer) is a
  ``ProviderTimeout``, which a gateway answers with 504, not 502.
* ``status_error`` turns an answer that is not a stream (an error status, or
  a 2xx with the wrong content type) into a message that quotes the API's own
  error message (or a snippet of an HTML page), keeps the whole ``body``
  (capped by the caller), marks 408/409/429/5xx retryable and carries the
  server's ``retry-after``, parsed by ``retry_after_seconds`` (seconds,
  ``retry-after-ms``, or an HTTP date). An error status with
  ``x-should-retry`` (``true`` or ``false``, the header OpenAI's and
  Anthropic's servers send and their SDKs obey over the status) is retryable
  as it says: a 500 that says ``false`` was asked again ``max_retries``
  times, each after its backoff. A redirect is not followed (a POST
  sent on to another address, the key with it, is the user's call, and a
  301 or 302 would turn it into a GET): its message names the ``location``,
  which is what to put in ``base_url`` (``http://`` to ``https://``, a
  missing path prefix); it said only "answered HTTP 308".
* ``still_loading`` tells a server that is still loading its model (a 503
  whose message says loading: llama-server's ``{"error": {"code": 503,
  "message": "Loading model", "type": "unavailable_error"}}``, which it answers
  for tens of seconds after it starts, a big model for minutes; Hugging Face
  TGI's ``Model … is currently loading``) from one that failed: ``LoadWait``
  has it asked again, outside ``max_retries``, until ``load_wait`` seconds
  after its first such answer (300 by default, the bound Ollama puts on a
  model load, ``OLLAMA_LOAD_TIMEOUT``), polling every two seconds at most
  (sooner at first, from ``retry_base``; a ``retry-after`` is taken as it is),
  then fails saying it was still loading. The first such answer is logged, a
  warning on the ``streamtools.providers`` logger (shown with no logging set
  up, as in ``streamtools chat``), so the wait is not silent.
* ``StartWait``: a server still starting up that accepts no connection yet
  (vLLM and SGLang open their port only once the model is loaded, minutes
  for a big one: vllm-project/vllm#38820's log, "Starting vLLM server on
  http://0.0.0.0:8000" after the warmup) cannot be told from a wrong
  address (a port nothing will ever listen on) by the refusal itself. So it
  is waited for only when asked: ``connect_wait`` seconds (0 by default: a
  wrong URL fails at once, after the usual retries, as it did), from the
  first refused connection, and only before the server has answered once
  (``HTTPProvider``): a refusal after that is a server gone, not one
  starting. Refusals only (``refused``): a name that does not resolve, a TLS
  failure, a timeout fail as before. The wait is logged at its start, as the
  load wait is, and its end says that nothing accepted a connection.
* ``undecodable`` names a ``content-encoding`` httpx has no decoder for
  (``br`` without the brotli package, ``zstd`` without zstandard: httpx asks
  only for what it can decode, but a proxy or CDN may compress all the
  same). httpx then passes the compressed bytes on as they came, so a stream
  ended in "malformed JSON" or "an unreadable stream" and an error body was
  quoted as mojibake; ``status_error`` says which coding it was and what to
  install instead, and quotes none of the bytes.

Sans-IO apart from reading already-received headers: nothing here sends or
reads the network.
"""

from __future__ import annotations

import email.utils
import importlib.util
import logging
import math
import re
import time
from collections.abc import Mapping
from typing import Any

import httpx
import msgspec

from streamtools.errors import ProviderError

__all__ = [
    "RETRY_STATUSES", "LoadWait", "ProviderTimeout", "failed_generation", "retry_after_seconds",
    "status_error", "still_loading", "transport_error", "undecodable", "unread",
    "upstream_reason",
]


class ProviderTimeout(ProviderError):
    """The server did not connect, take the request or answer in time, before
    any response: what a gateway reports as 504 Gateway Timeout (nginx,
    Envoy and load balancers do), where a refused or cut connection is 502."""

log = logging.getLogger("streamtools.providers")

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 520, 522, 524, 529})
# the package httpx decodes each optional coding with (its ``brotli`` or ``zstd`` extra)
_CODING_PACKAGES = {"br": ("brotli", "brotlicffi"), "zstd": ("zstandard",)}
_DECODED = frozenset({"identity", "gzip", "deflate"}) | {
    coding
    for coding, packages in _CODING_PACKAGES.items()
    if any(importlib.util.find_spec(package) for package in packages)
}


def undecodable(response: httpx.Response) -> str | None:
    """The ``content-encoding`` of ``response`` if httpx cannot decode it (see
    the module docstring), else None."""
    sent = response.headers.get("content-encoding")
    if not sent:
        return None
    codings = [c.strip().lower() for c in sent.split(",") if c.strip()]
    return sent.strip() if any(c not in _DECODED for c in codings) else None


def transport_error(exc: httpx.HTTPError, *, streaming: bool = False) -> ProviderError:
    """Map an httpx exception to ``ProviderError``: the one place that does.

    Failures before a response (connect errors, timeouts) are retryable, but
    for a request httpx refuses to send; ``streaming`` marks a failure after
    the answer started, which never is.
    """
    where = "while streaming the answer" if streaming else "before a response"
    # a request httpx refuses to send (an illegal header name, no http(s) scheme) fails
    # the same way every time: retrying it only delays the error
    local = isinstance(exc, (httpx.LocalProtocolError, httpx.UnsupportedProtocol))
    if isinstance(exc, httpx.TimeoutException):
        kind = {
            httpx.ConnectTimeout: "connect timeout",
            httpx.ReadTimeout: "read timeout: the server stopped sending",
            httpx.WriteTimeout: "write timeout",
            httpx.PoolTimeout: "connection pool timeout",
        }.get(type(exc), "timeout")
    elif isinstance(exc, httpx.RemoteProtocolError):
        kind = "connection cut by the server"
    elif isinstance(exc, httpx.ConnectError):
        kind = "cannot connect"
    elif isinstance(exc, httpx.TransportError):
        kind = "transport error"
    else:
        kind = "HTTP error"
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectError) and refused(exc):  # anyio says only "failed"
        detail += (
            " (connection refused: nothing listens there yet; a server still loading its "
            "model may open its port only then, which connect_wait waits for)"
        )
    url = ""
    try:
        url = f" ({exc.request.url})"
    except RuntimeError:  # an exception raised outside a request has no .request
        pass
    if _bad_redirect(exc):  # an answer, the same every time: not retried
        message = f"the server answered with a redirect{url}: {detail} (check base_url)"
        return ProviderError(message, retryable=False)
    message = f"{kind} {where}{url}: {detail}"
    timeout = isinstance(exc, httpx.TimeoutException) and not isinstance(exc, httpx.PoolTimeout)
    error = ProviderTimeout if timeout and not streaming else ProviderError
    return error(message, retryable=not (streaming or local))


def unread(head: bytes) -> str:
    """What to add to "the stream ended before the answer was complete" when
    no part of an answer came: the start of what the server sent (``head``), or
    that it sent nothing. A body of no events, such as a JSON error sent as
    ``text/event-stream`` or an event without the wire's fields
    (``data: {"code": 429, "msg": …}``), ended so without a word of what it
    said."""
    if not head:
        return ", with no part of it: the body was empty"
    text = " ".join(head.decode("utf-8", "replace").split())
    return f", with no part of it; the body began: {text[:200]}"


def stale_connection(exc: httpx.HTTPError) -> bool:
    """The connection broke before any response: most often a kept-alive
    connection the server closed just as the pool reused it. The request reached
    no handler that answered, so sending it again once, at once, is safe."""
    stale = isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError))
    return stale and not _bad_redirect(exc)


def _bad_redirect(exc: httpx.HTTPError) -> bool:
    """httpx reads every redirect's ``location``, followed or not, and raises
    ``RemoteProtocolError`` for one that is no URL: an answer, not a broken
    connection, which was sent again and retried as one."""
    return isinstance(exc, httpx.RemoteProtocolError) and str(exc).startswith(
        "Invalid URL in location header"
    )


def retry_after_seconds(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds asked for by ``retry-after`` (or ``retry-after-ms``), if any.

    Python's ``float`` also reads ``inf``, ``nan`` and ``1e400``; no server
    means those as a wait (and an infinite one cannot be passed on as a
    header's whole seconds), so they count as no ``retry-after``."""
    ms = _number(headers.get("retry-after-ms"))
    if ms is not None:
        return max(0.0, ms / 1000.0)
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return max(0.0, seconds)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _number(value: str | None) -> float | None:
    """``value`` as a finite number, else None."""
    try:
        number = float(value) if value is not None else math.nan
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def status_error(
    name: str, content_types: tuple[str, ...], response: httpx.Response, raw: bytes
) -> ProviderError:
    """The error for an answer that is not a stream: ``raw`` is (the start of) its body."""
    status = response.status_code
    body = raw.decode("utf-8", "replace")
    ctype = response.headers.get("content-type", "") or "no content type"
    should_retry = _SHOULD_RETRY.get(response.headers.get("x-should-retry", "").strip().lower())
    if status < 300:
        want = " or ".join(content_types)
        message = f"{name} answered HTTP {status} with {ctype}, expected {want}"
        retryable = False
    else:
        message = f"{name} answered HTTP {status}"
        # the server's word over the status, as the OpenAI and Anthropic SDKs take it
        retryable = status in RETRY_STATUSES if should_retry is None else should_retry
    location = response.headers.get("location") if 300 <= status < 400 else None
    if location:
        message += f", a redirect to {_target(response, location)} (not followed: point "
        message += "base_url at that address)"
    packed = undecodable(response)
    if packed is not None:
        if status < 300:
            message = f"{name} answered HTTP {status}"
        codings = packed.lower()
        wanted = [p[0] for c, p in _CODING_PACKAGES.items() if c in codings]
        install = f"install {' and '.join(wanted)}, or " if wanted else ""
        body = f"({len(raw)} bytes compressed as {packed})"
        message += (
            f" with a body compressed as {packed}, which this client cannot decode "
            f"({install}have the server or proxy send it uncompressed)"
        )
    detail = "" if packed is not None else _error_detail(body, ctype)
    if detail:
        message += f": {detail}"
    return ProviderError(
        message,
        status=status,
        body=body,
        retryable=retryable,
        retry_after=retry_after_seconds(response.headers),
        should_retry=should_retry,
    )


_SHOULD_RETRY = {"true": True, "false": False}


def _target(response: httpx.Response, location: str) -> str:
    """Where a redirect's ``location`` points, relative to the URL asked; as
    sent (cut short) if it is no URL."""
    try:
        return str(response.request.url.join(location))[:500]
    except (httpx.InvalidURL, RuntimeError):  # RuntimeError: a response without its request
        return location[:500]


def _error_detail(body: str, ctype: str) -> str:
    """A short human summary of an error body: the API's message, or a snippet.
    A byte-order mark before the JSON (``whole``'s module docstring) is no part of it."""
    text = body.strip().removeprefix("\ufeff")
    if not text:
        return ""
    try:
        data = msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError):  # nested too deeply: shown as text
        data = None
    if isinstance(data, list) and len(data) == 1:  # Gemini's OpenAI endpoint: [{"error": …}]
        data = data[0]
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            msg = err.get("message") or err.get("detail") or err.get("error")
            if isinstance(msg, dict) and isinstance(msg.get("detail"), list):
                msg = msg["detail"]  # Mistral's 422: FastAPI's list under "message"
            if isinstance(msg, list):  # FastAPI's 422: a list of {"loc", "msg"}
                msg = "; ".join(_problem(item) for item in msg[:5])
            if isinstance(msg, str) and msg:
                upstream = upstream_reason(err)
                said = f"{msg} ({upstream})" if upstream else msg
                return (said[:500] + failed_generation(err))[:800]
        elif isinstance(err, str):
            return err[:500]
    if "html" in ctype.lower() or text.lstrip().startswith("<"):
        return f"(HTML page) {' '.join(text.split())[:200]}"
    return " ".join(text.split())[:500]


def upstream_reason(error: dict[str, Any]) -> str:
    """What a gateway's error says of the upstream provider that failed, as
    OpenRouter puts it under ``metadata``: its name and its own words (``raw``:
    its error, often as JSON text, whose message is taken), or "". OpenRouter's
    own message is only "Provider returned error"."""
    meta = error.get("metadata")
    if not isinstance(meta, dict):
        return ""
    said = meta.get("raw")
    if isinstance(said, str):
        try:
            said = msgspec.json.decode(said)
        except (msgspec.DecodeError, RecursionError):
            pass
    if isinstance(said, dict):
        inner = said.get("error", said)
        said = inner.get("message") or inner.get("detail") if isinstance(inner, dict) else inner
    said = " ".join(said.split())[:300] if isinstance(said, str) else ""
    name = meta.get("provider_name")
    if isinstance(name, str) and name:
        return f"{name}: {said}" if said else name
    return said


def failed_generation(error: dict[str, Any]) -> str:
    """What the model wrote that the server could not read as a tool call, as
    Groq gives it with ``tool_use_failed`` ("See 'failed_generation' for more
    details", which no message showed), shortened and introduced; or ""."""
    said = error.get("failed_generation")
    if not isinstance(said, str) or not said.strip():
        return ""
    return f" (the model wrote: {' '.join(said.split())[:300]})"


def _problem(item: object) -> str:
    """One of FastAPI's validation problems: its ``msg`` at its ``loc`` path."""
    if not isinstance(item, dict) or not isinstance(item.get("msg"), str):
        return str(item)[:100]
    loc = item.get("loc")
    path = ".".join(str(part) for part in loc) if isinstance(loc, list) else ""
    return f"{item['msg']} at {path}" if path else str(item["msg"])


_LOADING = re.compile(r"\bloading\b", re.IGNORECASE)
_LOAD_POLL = 2.0  # seconds: the longest wait between asking a loading server again


def still_loading(error: ProviderError) -> bool:
    """Whether ``error`` is a server saying it is still loading the model (see
    the module docstring): a 503 that may be retried, whose message (not an
    HTML page's text) says loading."""
    if error.status != 503 or not error.retryable or not error.body:
        return False
    said = _error_detail(error.body, "")
    return not said.startswith("(HTML page)") and _LOADING.search(said[:300]) is not None


class LoadWait:
    """The wait for one request's server to load its model (see the module
    docstring): ``pause`` gives the seconds to wait before asking again, None
    for an error that does not say loading (the usual retries apply), and raises
    once ``bound`` seconds have passed since the first answer that did. Sans-IO:
    the caller passes the time and sleeps."""

    def __init__(self, bound: float, base: float) -> None:
        self.bound = bound
        self.base = base
        self.since: float | None = None  # when the server first said it was loading
        self.polls = 0

    def pause(self, error: ProviderError, now: float) -> float | None:
        if self.bound <= 0 or not still_loading(error):
            return None
        if self.since is None:
            self.since = now
            # a warning, which Python shows with no logging set up (``streamtools
            # chat``): else nothing at all is seen for up to minutes
            log.warning(
                "%s; waiting for the server to load its model, at most %g s (load_wait)",
                error,
                self.bound,
            )
        left = self.since + self.bound - now
        if left <= 0:
            raise ProviderError(
                f"{error}; the server was still loading the model {self.bound:g} s after it "
                f"first said so (load_wait={self.bound:g}): wait until it has loaded "
                "(llama-server's GET /health answers 200 then), or raise load_wait",
                status=error.status,
                body=error.body,
                retryable=True,
                retry_after=error.retry_after,
                should_retry=error.should_retry,
            )
        wait = error.retry_after
        if wait is None:
            wait = min(self.base * 2**self.polls, _LOAD_POLL)
        self.polls += 1
        return min(wait, left)


def refused(exc: BaseException) -> bool:
    """Whether ``exc`` (an httpx ``ConnectError``) is a refused connection:
    nothing listening at the address (the OS error among its causes, or
    among the attempts of a group: trio tries every address the name has)."""
    seen: set[int] = set()
    left: list[BaseException] = [exc]
    while left:
        cause = left.pop()
        if id(cause) in seen:
            continue
        seen.add(id(cause))
        if isinstance(cause, ConnectionRefusedError):
            return True
        if isinstance(cause, BaseExceptionGroup):
            left.extend(cause.exceptions)
        left.extend(c for c in (cause.__cause__, cause.__context__) if c is not None)
    return False


class StartWait:
    """The wait for a server that refuses connections because it is still
    starting (see the module docstring): ``pause`` gives the seconds to wait
    before connecting again, None for a failure that is no refusal (or with
    no wait asked for), and raises once ``bound`` seconds have passed since
    the first refusal. Sans-IO: the caller passes the time and sleeps."""

    def __init__(self, bound: float, base: float, url: str) -> None:
        self.bound = bound
        self.base = base
        self.url = url
        self.since: float | None = None  # when the first connection was refused
        self.polls = 0

    def pause(self, exc: BaseException, error: ProviderError, now: float) -> float | None:
        if self.bound <= 0 or not refused(exc):
            return None
        if self.since is None:
            self.since = now
            log.warning(
                "connection refused at %s; waiting for the server to start, at most %g s "
                "(connect_wait)",
                self.url,
                self.bound,
            )
        left = self.since + self.bound - now
        if left <= 0:
            raise ProviderError(
                f"{error}; nothing accepted a connection at {self.url} for {self.bound:g} s "
                f"(connect_wait={self.bound:g}): is the server running, and is the URL right?",
                retryable=True,
            )
        wait: float = min(self.base * 2**self.polls, _LOAD_POLL)
        self.polls += 1
        return min(wait, left)
