"""What every HTTP provider shares: opening the request, retrying, and failing clearly.

Theory of operation
-------------------
A provider turns a ``ModelRequest`` into one HTTP POST and the streamed answer
into ``Chunk`` objects. Everything that is not specific to a wire format lives
here, in ``HTTPProvider``:

* **Opening** (``_open``). The request is sent with ``stream=True``; the status
  is checked *before* the body is read as an event stream, so an API's own JSON
  (or HTML) error body reaches the user inside ``ProviderError``. A 200 with the
  wrong content type is an error too (a proxy's login page is not an SSE stream),
  and so is a body in a coding httpx cannot decode (``failures.undecodable``).
* **A whole answer.** Some servers and gateways ignore ``stream: true`` and
  answer 200 with the whole answer as JSON (``application/json``); others
  label the stream itself so, or ``text/plain``, ``application/x-ndjson``,
  ``application/octet-stream`` or nothing (``streamtools.providers.mislabelled``). Where the
  wire has a whole form (``_whole``: OpenAI's ``chat.completion``, Anthropic's
  ``message``), it is read (up to ``_RECORD_LIMIT``) and turned into the
  stream the wire would have sent, which is then read as any stream. Other
  JSON (an ``{"error": …}`` sent with 200) is a ``ProviderError`` as before.
* **Retry.** 408, 409, 429, 5xx and transport failures before any response
  (refused connection, connect/read timeout while waiting for headers) are
  retried up to ``max_retries`` times with exponential backoff (``retry_base``,
  doubled per attempt, capped at ``retry_max_wait``). A ``retry-after`` header
  (seconds or HTTP date) replaces the computed wait; if it asks for longer than
  ``retry_max_wait`` the error is raised at once with ``retryable=True``
  rather than waiting less than the server asked; ``ProviderError.retry_after``
  carries the server's figure to the caller either way. A server that says it
  is still loading the model is waited for up to ``load_wait`` seconds instead
  (``failures.LoadWait``). Once a 2xx response is
  accepted, a streamed answer that has started is never silently restarted
  (the consumer may have shown or acted on it), with one exception: an answer
  that fails in-band before any chunk of it came, with an error the server
  calls passing (Anthropic's ``overloaded_error`` event after a 200, as the API
  reports overload when streaming; OpenRouter's ``{"error": {"code": 502}}``),
  raises ``TransientStreamError`` in the decoder and is asked again within
  the same ``max_retries`` and backoff (``_asked``, from the generator the
  consumer reads, so a chunk passes through no other), one budget with the
  refusals before it: it ended the run, though
  nothing of it had been seen. (A request that fails when asked again ends
  the stream in an error finish.) Apart from
  ``max_retries``, a request whose connection broke before any response (a
  kept-alive connection the server closed just as it was reused, the classic
  "server disconnected without sending a response") is sent again once, at once:
  with ``max_retries=0`` (the proxy) it would otherwise fail for the pool's sake.
* **Failing mid-stream.** After the first byte, failures are data: a cut
  connection, a read timeout (a server that stops sending), malformed JSON in an
  event (JSON nested past the decoder's depth limit included: it raises
  ``RecursionError``) or an in-band error event end the stream with
  ``FinishChunk(reason="error", message=...)``. A stream that ends without the
  wire format's own end marker ends the same way. So a consumer always sees
  exactly one ``FinishChunk``, last, within ``timeout`` of the last byte.
* **A stall behind keep-alives.** httpx's read timeout is per read, so a
  server that sends only keep-alives (SSE comments such as ``: ping``, empty
  events, Anthropic's ``ping``) would hold the stream open for ever.
  ``stall_timeout`` bounds the wait for content (a chunk: text, reasoning, a
  call, usage, the finish): the first read after it has passed, with no chunk
  since the consumer last asked for one, ends the stream in an error. Its
  default is long (600 s, or the read timeout if longer), because the
  wait covers the first token too, and a reasoning model behind a gateway
  that sends keep-alives (OpenRouter's ``: OPENROUTER PROCESSING``) may think
  for minutes before it; a server silent for ``timeout`` is cut by the read
  timeout as before. It is checked per read, not with a timer per chunk
  (which would cost more than decoding the chunk), so the error comes at the
  first keep-alive after the bound.
* **One mapping** from httpx exceptions to ``ProviderError``:
  ``transport_error``. Nothing else in the package catches httpx exceptions.
* **Client-side stop** (``supports_stop=False``): some models reject ``stop``.
  Then no stop is sent, and ``StopCutter`` cuts the text at the first stop
  string exactly as a server would (the stop text is not returned, nothing after
  it is, ``FinishChunk.stop_sequence`` names it) and the response is closed, so
  the caller cannot tell the difference. A provider whose API refuses some
  stop strings only (Anthropic: one that is only whitespace) sends the others
  and cuts at those (``_client_stops``).
* **Reading SSE** is httpx-sse's, from a view of the accepted response
  (``_Body``) that mends what servers send beside the spec: a content type
  with capitals (``Text/Event-Stream``: media types are case-insensitive, but
  httpx-sse compares exactly, and refused the stream once it had started), a
  leading byte-order mark (which the spec drops and httpx-sse read as part of
  the first field's name, losing the first event), and llama.cpp's mid-answer
  failure (see ``SSEMend``).

Providers never spawn tasks: the chunk iterator runs in the consumer's task and
the response is closed when the consumer leaves the ``stream`` block. With no
injected client a fresh ``httpx.AsyncClient`` is made per request (safe across
event loops and backends); inject one to pool connections.
"""

from __future__ import annotations

import math
import ssl
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, TypedDict

import anyio
import httpx
import msgspec
from httpx_sse import EventSource, SSEError

from streamtools.errors import ProviderError, UsageError, describe_json_error
from streamtools.model import Chunk, FinishChunk, ModelRequest, TextChunk
from streamtools.parser.stopcut import StopCutter
from streamtools.providers.closing import release
from streamtools.providers.failures import (
    LoadWait,
    StartWait,
    stale_connection,
    status_error,
    transport_error,
    undecodable,
    unread,
)
from streamtools.providers.mislabelled import relabelled
from streamtools.providers.sendable import check_header, checked_url, sendable_header
from streamtools.providers.ssemend import SSEMend
from streamtools.providers.toolnames import NameRule, WireNames

__all__ = [
    "HTTPProvider", "ProviderOptions", "StopCutter", "TransientStreamError", "answer_field",
    "sendable_header",
]

_BODY_LIMIT = 64 * 1024  # error bodies and side answers: never buffer a runaway one
_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()
_JSON = ("application/json",)
# the labels a 2xx answer's first bytes are looked at under (``mislabelled``): JSON, and
# what servers and proxies put on a stream in place of its own (none, among them)
_SNIFFED = frozenset(
    {"application/json", "text/plain", "application/x-ndjson", "application/octet-stream", ""}
)
# A streamed httpx response and the stream httpx wraps its body in refer to each
# other, so every response would be left to the garbage collector, with its
# request, URL, headers and connection-pool entries: about fifty objects per
# request, which a proxy serving hundreds of streams pays for in full
# collections of tens of milliseconds. Once the response is closed its stream
# is replaced with this empty one, and reference counting frees the rest.
_DONE = httpx.ByteStream(b"")
_STALL = 600.0  # seconds: the default bound on a wait for content (``stall_timeout``)
# what asking a request again takes (``HTTPProvider._asked``): the client, the body,
# the headers, and the retries spent so far
_Again = tuple[httpx.AsyncClient, bytes, dict[str, str], list[int]]


class TransientStreamError(Exception):
    """Raised by a wire's decoder for an in-band error that the server calls
    passing (overloaded, rate limited, a server error), with the chunks it
    still held (``rest``): before any chunk of the answer the request is asked
    again, else the stream ends in an error finish (see the module docstring)."""

    def __init__(self, message: str, rest: list[Chunk] | None = None) -> None:
        super().__init__(message)
        self.rest = rest or []


class _Stalled(Exception):
    """Raised by ``_Body`` when a read comes after ``stall_timeout`` without content."""


class _Oversized(Exception):
    """Raised by ``_Body`` when one record (an SSE event, an NDJSON line) passes
    ``_RECORD_LIMIT`` bytes before it ends."""


_RECORD_LIMIT = 16 * 1024 * 1024  # bytes: far above any one event a model's answer needs
_SSE_ENDS = (b"\n\n", b"\r\n\r\n", b"\r\r")  # the blank line that ends an event
_LINE_ENDS = (b"\n",)


def record_limit(size: int, record: str) -> None:
    """``_Oversized`` for a record a wire's reader joins itself, past the limit."""
    if size > _RECORD_LIMIT:
        raise _Oversized(record)


class _Body(httpx.AsyncByteStream):
    """The accepted answer's body as the event reader reads it: ``view()`` is
    a response of its own over these bytes (decoded, mended by ``SSEMend``
    for an SSE stream), with the content type's media type in lower case.
    A read ``stall`` seconds after ``waiting`` (when the consumer last asked
    for a chunk, set by ``_guard``) raises ``_Stalled``. A record (an SSE
    event, an NDJSON line) still open after ``_RECORD_LIMIT`` bytes raises
    ``_Oversized``: the readers keep an unfinished record whole (httpx-sse a
    line and an event's data, ``_lines`` a line), so a server that never ends
    one (a hostile one, or one gone wrong) would take memory without bound,
    and keep-alives would not even come to stop it. Only the last blank line
    (SSE) or newline (NDJSON, and whatever the label with ``lines``: a wire
    read line by line) of each part is looked for, from its end."""

    def __init__(self, response: httpx.Response, stall: float, lines: bool = False) -> None:
        self._response = response
        self._stall = stall
        self.waiting = time.monotonic()
        ctype: str = response.headers.get("content-type", "")
        media, sep, params = ctype.partition(";")
        self._ctype = media.strip().lower() + sep + params
        sse = media.strip().lower() == "text/event-stream" and not lines
        self._mend = SSEMend() if sse else None
        self._ends = _SSE_ENDS if sse else _LINE_ENDS
        self._record = "an event" if sse else "a line"
        self.head = b""  # the body's first bytes: quoted if it held no answer (``unread``)
        self.last = b""  # its last bytes (SSE): a stray line there is quoted (``stray``)

    def stray(self) -> str:
        """The SSE body's last line if it is no SSE field (a bare JSON error that
        a proxy wrote into a stream already begun, which the spec ignores), else
        ""."""
        lines = [line.strip() for line in self.last.splitlines() if line.strip()]
        if not lines or lines[-1].startswith((b"data:", b"event:", b"id:", b"retry:", b":")):
            return ""
        return " ".join(lines[-1].decode("utf-8", "replace").split())[:300]

    def view(self) -> httpx.Response:
        headers = {"content-type": self._ctype}
        return httpx.Response(self._response.status_code, headers=headers, stream=self)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        mend = self._mend
        source = self._response.aiter_bytes()
        open_bytes = 0  # bytes since the last record ended
        tail = b""  # the end of the previous part: a record's end may be split
        async for part in source:
            if time.monotonic() - self.waiting > self._stall:
                await release(self._response, source, graceful=False)  # see ``closing.release``
                raise _Stalled
            if mend is not None:
                part = mend.feed(part)
            if part:
                seen = tail + part
                end = 0
                for mark in self._ends:
                    if (at := seen.rfind(mark)) >= 0:
                        end = max(end, at + len(mark))
                open_bytes = len(seen) - end if end else open_bytes + len(part)
                if open_bytes > _RECORD_LIMIT:
                    await release(self._response, source, graceful=False)
                    raise _Oversized(self._record)
                tail = seen[-4:]
                self.head = self.head or part[:200]
                if mend is not None:
                    self.last = (self.last + part[-400:])[-400:]  # no call: every part pays it
                yield part
        if mend is not None:
            rest = mend.flush()
            if not (tail + rest).endswith(_SSE_ENDS) and (tail or rest):
                rest += b"\n\n"  # the last event's blank line (see ``SSEMend``)
            if rest:
                yield rest


def answer_field(answer: Any, name: str, kind: type, url: str = "") -> Any:
    """``answer[name]`` if ``answer`` (a side endpoint's decoded JSON) is an object
    and that is a ``kind`` (a bool is no int); else None, or, given the ``url``
    asked, a ``ProviderError`` saying the answer lacked it."""
    value = answer.get(name) if isinstance(answer, dict) else None
    if isinstance(value, kind) and not isinstance(value, bool):
        return value
    if url:
        raise ProviderError(f"{url} answered without {name!r}: {answer!r:.200}")
    return None


class ProviderOptions(TypedDict, total=False):
    """The keyword options every HTTP provider takes (see ``HTTPProvider``)."""

    base_url: str
    api_key: str | None
    headers: Mapping[str, str] | None
    timeout: float | httpx.Timeout
    client: httpx.AsyncClient | None
    supports_stop: bool
    max_retries: int
    retry_base: float
    retry_max_wait: float
    extra_body: Mapping[str, Any] | None
    stall_timeout: float | None
    load_wait: float
    connect_wait: float


class HTTPProvider:
    """Base of the HTTP providers; subclasses supply the wire format.

    Options: ``base_url`` (default ``default_base_url``; surrounding blanks
    are dropped, and one no request can be sent to is a ``UsageError``),
    ``api_key``, extra ``headers``, ``timeout`` in seconds (default ``default_timeout``) or an
    ``httpx.Timeout``, an injected ``client``, ``supports_stop`` (False: cut
    at stop strings client-side), ``max_retries``, ``retry_base`` and
    ``retry_max_wait``, ``load_wait`` (300 s; 0: not waited for),
    ``connect_wait`` (0 s: a refused connection before the server has
    answered, a server still starting, waited for: ``failures.StartWait``)
    (see the module docstring), ``extra_body``: fields
    added to every request body (``request_body``), and ``stall_timeout``:
    seconds an answer may go without content while the server sends only
    keep-alives (default: 600, or the read timeout if longer; ``math.inf``
    for no bound; see the module docstring). Subclasses take them as
    ``**options: Unpack[ProviderOptions]`` next to their own.

    Subclasses implement ``_url``, ``_headers``, ``_body`` and ``_decode``
    (an async generator of chunks from an accepted response), and set
    ``_content_types``, ``_name`` and ``default_base_url``.
    """

    _name = "provider"
    _content_types: tuple[str, ...] = ("text/event-stream",)
    _line_records = False  # the wire is read line by line, whatever its label (Ollama)
    _tool_names: NameRule | None = None  # the tool names the API takes (``providers.toolnames``)
    default_base_url = ""
    default_timeout = 60.0

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = None,
        client: httpx.AsyncClient | None = None,
        supports_stop: bool = True,
        max_retries: int = 2,
        retry_base: float = 0.5,
        retry_max_wait: float = 30.0,
        extra_body: Mapping[str, Any] | None = None,
        stall_timeout: float | None = None,
        load_wait: float = 300.0,
        connect_wait: float = 0.0,
    ) -> None:
        self.model = model
        self.base_url = checked_url((base_url or self.default_base_url).strip()).rstrip("/")
        self.api_key = api_key.strip() if api_key else api_key  # a key read from a file
        self.headers = dict(headers or {})
        for name, value in [("api_key", self.api_key or ""), *self.headers.items()]:
            check_header(name, value)
        if not isinstance(timeout, httpx.Timeout):
            timeout = httpx.Timeout(self.default_timeout if timeout is None else timeout)
        self.timeout = timeout
        if stall_timeout is None:
            read = timeout.read
            stall_timeout = math.inf if read is None else max(_STALL, read)
        elif not stall_timeout > 0:  # NaN too
            raise UsageError(f"stall_timeout must be a positive number, not {stall_timeout}")
        self.stall_timeout = stall_timeout
        if not load_wait >= 0:  # NaN too
            raise UsageError(f"load_wait must be a number of seconds >= 0, not {load_wait}")
        self.load_wait = load_wait
        if not connect_wait >= 0:  # NaN too
            raise UsageError(f"connect_wait must be a number of seconds >= 0, not {connect_wait}")
        self.connect_wait = connect_wait
        self._answered = False  # whether the server has answered (``failures.StartWait``)
        self.client = client
        self.supports_stop = supports_stop
        self.max_retries = max_retries
        self.retry_base = retry_base
        self.retry_max_wait = retry_max_wait
        self.extra_body = dict(extra_body or {})
        self._ssl: ssl.SSLContext | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"

    # --- the wire format (subclasses) ---------------------------------------

    def _url(self) -> str:
        raise NotImplementedError

    def _headers(self) -> dict[str, str]:
        return {}

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _events(self, response: httpx.Response) -> AsyncIterator[Any]:
        """The wire's event source: SSE events by default (NDJSON lines for Ollama).
        ``response`` is the accepted answer's ``_Body.view()``."""
        return EventSource(response).aiter_sse()

    def _decode(
        self, events: AsyncIterator[Any], request: ModelRequest
    ) -> AsyncGenerator[Chunk, None]:
        raise NotImplementedError

    def _whole(self, raw: bytes) -> bytes | None:
        """A whole JSON answer (``raw``: a server that ignored ``stream: true``)
        as the wire's stream would have sent it, or None if it is not one."""
        return None

    def _client_stops(self, request: ModelRequest) -> tuple[str, ...]:
        """The stop strings cut here rather than sent (``StopCutter``): all of
        them for a model that refuses ``stop``; a provider adds those its API
        refuses."""
        return () if self.supports_stop else request.stop

    # --- the Model interface ----------------------------------------------------

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body that ``stream`` would POST for ``request``: the wire
        format's, then the provider's ``extra_body``, then ``request.extra``. Each
        is merged one level deep: an object adds to the object of the same name
        (``{"options": {"num_ctx": 8192}}`` keeps Ollama's ``stop``), anything
        else replaces the field. A tool name the API refuses goes as a name it
        takes (``providers.toolnames``), mapped back in the stream."""
        body = self._body(WireNames.of(request, self._tool_names).wire(request))
        for extra in (self.extra_body, request.extra):
            for name, value in extra.items():
                old = body.get(name)
                if isinstance(old, dict) and isinstance(value, Mapping):
                    body[name] = {**old, **value}
                else:
                    body[name] = value
        return body

    def stream(self, request: ModelRequest) -> AbstractAsyncContextManager[AsyncIterator[Chunk]]:
        """Open the request (retrying before the first byte) and stream chunks."""
        return self._stream(request)

    @asynccontextmanager
    async def _stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[Chunk]]:
        content = _encoder.encode(self.request_body(request))
        headers = self._request_headers()
        async with self._client() as client:
            spent = [0]  # retries made, by ``_open`` and ``_guard``: one budget
            opened = [await self._open(client, content, headers, spent=spent)]  # being read
            chunks = self._guard(opened, request, (client, content, headers, spent))
            try:
                yield chunks
            finally:
                with anyio.CancelScope(shield=True):
                    await chunks.aclose()
                    await opened[0].aclose()
                    opened[0].stream = _DONE  # see ``_DONE``

    async def _asked(
        self, failure: str, again: _Again, opened: list[httpx.Response]
    ) -> str | None:
        """Ask the request again after ``opened[0]``'s answer failed in-band
        before any chunk (``TransientStreamError``: see the module docstring),
        within ``max_retries``: the retries ``_open`` made of refused answers
        count (``spent``), so that no request is sent more than ``max_retries
        + 1`` times in all (it was up to their square). None once ``opened[0]``
        is the new answer, else why the stream ends (``failure``, or the new
        request's error)."""
        client, content, headers, spent = again
        response = opened[0]
        with anyio.CancelScope(shield=True):
            await response.aclose()
            response.stream = _DONE
        if spent[0] >= self.max_retries:
            return failure
        await anyio.sleep(min(self.retry_base * 2 ** spent[0], self.retry_max_wait))
        spent[0] += 1
        try:
            opened[0] = await self._open(client, content, headers, spent=spent)
        except ProviderError as exc:  # a stream that began: failures are data
            return str(exc)
        return None

    def _request_headers(self, *last: tuple[str, str]) -> dict[str, str]:
        """A request's headers: JSON content, the wire's, the user's ``headers``,
        then ``last``. A later header replaces an earlier one of the same name in
        any case: names are case-insensitive, and a user's ``Authorization``
        was sent beside the provider's ``authorization`` (two of them, the
        server free to read either)."""
        merged: dict[str, tuple[str, str]] = {}
        pairs = [("content-type", "application/json"), *self._headers().items()]
        for name, value in [*pairs, *self.headers.items(), *last]:
            merged[name.lower()] = (name, value)
        return dict(merged.values())

    @asynccontextmanager
    async def _client(self) -> AsyncIterator[httpx.AsyncClient]:
        """The injected client, or a fresh one closed on the way out."""
        if self.client is not None:
            yield self.client
            return
        if self._ssl is None:
            self._ssl = ssl.create_default_context()
        client = httpx.AsyncClient(timeout=self.timeout, verify=self._ssl)
        try:
            yield client
        finally:
            with anyio.CancelScope(shield=True):  # closing a pool does not block
                await client.aclose()

    async def _post_json(self, url: str, body: dict[str, Any]) -> Any:
        """POST ``body`` to ``url`` and decode the JSON answer, with ``stream``'s
        client, retries and errors: for a wire format's side endpoints
        (``count_tokens`` of ``AnthropicMessages`` and ``OpenAIChat``)."""
        content = _encoder.encode(body)
        headers = self._request_headers(("accept", "application/json"))
        async with self._client() as client:
            response = await self._open(client, content, headers, url, _JSON)
            raw = await self._read_limited(response)
        try:
            return _decoder.decode(raw)
        except (msgspec.DecodeError, RecursionError) as exc:
            raise ProviderError(
                f"{self._name} answered {url} with invalid JSON ({describe_json_error(exc)})",
                status=response.status_code,
                body=raw.decode("utf-8", "replace"),
            ) from None

    async def _open(
        self,
        client: httpx.AsyncClient,
        content: bytes,
        headers: dict[str, str],
        url: str | None = None,
        content_types: tuple[str, ...] | None = None,
        *,
        spent: list[int] | None = None,
    ) -> httpx.Response:
        """POST to ``url`` (default: the wire's ``_url()``) until a 2xx answer
        of one of ``content_types`` (default: the wire's) comes, retrying as
        the module docstring says; else raise ``ProviderError``. ``spent[0]``:
        the retries made so far for this answer, counted on here."""
        accept = content_types or self._content_types
        spent = spent if spent is not None else [0]
        resent = False  # the one immediate resend after a stale connection
        loading = LoadWait(self.load_wait, self.retry_base)
        starting = StartWait(self.connect_wait, self.retry_base, url or self._url())
        while True:
            try:
                req = client.build_request(
                    "POST",
                    url or self._url(),
                    content=content,
                    headers=dict(headers),
                    timeout=self.timeout,
                )
                response = await client.send(req, stream=True)
                self._answered = True
                status = response.status_code
                ctype = _content_type(response)
                readable = undecodable(response) is None  # else ``status_error`` says why
                if status < 300 and ctype in accept and readable:
                    return response
                if status < 300 and ctype in _SNIFFED and content_types is None and readable:
                    # a stream under another label (``providers.mislabelled``)
                    response = await relabelled(response, accept[0], lines=self._line_records)
                    if _content_type(response) in accept:
                        return response
                    raw = await self._read_limited(response, _RECORD_LIMIT)
                    if (stream := self._whole(raw)) is not None:  # the module docstring
                        kind = {"content-type": accept[0]}
                        return httpx.Response(status, headers=kind, content=stream, request=req)
                    raw = raw[:_BODY_LIMIT]
                else:
                    raw = await self._read_limited(response)
            except httpx.HTTPError as exc:
                if not resent and stale_connection(exc):
                    resent = True  # outside max_retries: the server never answered it
                    continue
                error = transport_error(exc)
                now = anyio.current_time()
                start = None if self._answered else starting.pause(exc, error, now)
                if start is not None:  # a server still starting: not one of max_retries
                    await anyio.sleep(start)
                    continue
                wait: float | None = None
            else:
                error = status_error(self._name, accept, response, raw)
                pause = loading.pause(error, anyio.current_time())
                if pause is not None:  # the model still loading: not one of max_retries
                    await anyio.sleep(pause)
                    continue
                wait = error.retry_after
            if not error.retryable or spent[0] >= self.max_retries:
                try:
                    raise error
                finally:
                    del error  # or the error's traceback holds this frame, which holds it
            if wait is None:
                wait = min(self.retry_base * 2 ** spent[0], self.retry_max_wait)
            elif wait > self.retry_max_wait:
                raise error
            spent[0] += 1
            await anyio.sleep(wait)

    async def _read_limited(self, response: httpx.Response, limit: int = _BODY_LIMIT) -> bytes:
        """The body of an answer that is not a stream (an error body, a small JSON
        answer), up to ``limit`` bytes; the response is closed and done with."""
        parts: list[bytes] = []
        size = 0
        source = response.aiter_bytes()
        try:
            async for part in source:
                parts.append(part)
                size += len(part)
                if size >= limit:
                    break
        finally:
            await release(response, source, graceful=False)
            response.stream = _DONE  # see ``_DONE``
        return b"".join(parts)[:limit]

    async def _guard(
        self, opened: list[httpx.Response], request: ModelRequest, again: _Again
    ) -> AsyncGenerator[Chunk, None]:
        """Run the decoder over ``opened[0]``; turn every failure after the first
        byte into a FinishChunk. An in-band failure the server calls passing,
        before any chunk, asks again (``_asked``) in this same generator, so
        that the consumer iterates it without a generator between them."""
        stops = self._client_stops(request)
        names = WireNames.of(request, self._tool_names)  # ``providers.toolnames``
        while True:
            response = opened[0]
            cutter = StopCutter(stops) if stops else None
            body = _Body(response, self.stall_timeout, self._line_records)
            events = self._events(body.view())
            decoder = self._decode(events, request)
            if names.back:  # names given: the real ones back (no cost when none was)
                decoder = names.restored(decoder)
            finished = answered = False
            rest: list[Chunk] = []  # what a decoder held when it failed in-band
            transient: str | None = None  # a passing failure before any chunk: asked again
            try:
                async for chunk in decoder:
                    if isinstance(chunk, FinishChunk):
                        finished = True
                        if cutter is not None and (held := cutter.flush()):
                            yield TextChunk(text=held)
                        yield chunk
                        return
                    if cutter is not None and isinstance(chunk, TextChunk):
                        text = cutter.feed(chunk.text)
                        if text:
                            yield TextChunk(text=text)
                        if cutter.hit is not None:
                            finished = True
                            yield FinishChunk(reason="stop", stop_sequence=cutter.hit)
                            return
                    else:
                        yield chunk
                    body.waiting = time.monotonic()  # the consumer's own time is no stall
                    answered = True
            except TransientStreamError as exc:
                if answered:
                    message, rest = str(exc), exc.rest
                else:
                    message = transient = str(exc)
            except _Stalled:
                message = (
                    f"{self._name} sent no content for over {self.stall_timeout:g} s "
                    "(stall_timeout)"
                )
            except _Oversized as exc:
                message = f"{self._name} sent {exc} longer than {_RECORD_LIMIT} bytes"
            except httpx.HTTPError as exc:
                message = str(transport_error(exc, streaming=True))
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                message = f"{self._name} sent malformed JSON in the stream: {exc}"
            except RecursionError:  # what a JSON decoder raises past its nesting limit
                message = f"{self._name} sent JSON nested too deeply in the stream"
            except (SSEError, UnicodeDecodeError) as exc:
                message = f"{self._name} sent an unreadable stream: {exc}"
            else:
                message = f"{self._name} stream ended before the answer was complete"
                message += "" if answered else unread(body.head)
                if answered and (stray := body.stray()):
                    message += f"; it ended with: {stray}"
            finally:
                await release(response, events, graceful=finished)
                await decoder.aclose()
            if transient is not None:
                ended = await self._asked(transient, again, opened)
                if ended is None:
                    continue  # the new answer, read from its start
                yield FinishChunk(reason="error", message=ended)
                return
            if not finished:
                if cutter is not None and (held := cutter.flush()):
                    yield TextChunk(text=held)  # held for a stop string that never came
                for chunk in rest:
                    yield chunk
                yield FinishChunk(reason="error", message=message)
            return


def _content_type(response: httpx.Response) -> str:
    ctype: str = response.headers.get("content-type", "")
    return ctype.split(";")[0].strip().lower()
