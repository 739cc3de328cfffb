"""``FakeServer``: a real HTTP model server on 127.0.0.1 that plays scripted replies.

Theory of operation
-------------------
A ``ThreadingHTTPServer`` bound to 127.0.0.1 on a random port runs in a
background thread, so one server serves sync tests, asyncio and trio alike
(``with FakeServer(...)`` or ``async with FakeServer(...)``). Each POST
takes the next scripted reply and streams it in one provider's exact wire
format (``streamtools.testing.fake_wire``), one event per HTTP chunk:
``wire="openai"`` answers ``/v1/chat/completions`` (``base_url`` ends in
``/v1``), ``"anthropic"`` ``/v1/messages``, ``"ollama"`` ``/api/chat``. An
``"anthropic"`` server also answers ``/v1/messages/count_tokens``, counting the
request's text in ``token_pieces`` (``fake_wire.prompt_tokens``), without taking
a scripted reply. ``tokenizer="vllm"`` or ``"llama.cpp"`` gives an ``"openai"``
server the tokenizer endpoints of that server at its root (``/tokenize``, and
llama-server's ``/apply-template``), counting the ``token_pieces`` of the
request's messages as ``fake_wire.chat_template`` lays them out; without one
those paths answer 404, as OpenAI's would.

A request that does not ask for a stream (OpenAI and Anthropic: no ``"stream":
true``; Ollama: ``"stream": false``) gets the same reply as one JSON answer, the
wire's whole object (``fake_whole``), as a real server sends it to the SDKs'
non-streaming calls.

An ``"openai"`` server streams reasoning in ``delta.reasoning_content`` (as
DeepSeek and vLLM do); ``reasoning_field="reasoning"`` plays Ollama's OpenAI
endpoint or Groq, and ``"reasoning_details"`` OpenRouter, which sends the text
in ``reasoning`` and again in ``reasoning_details`` (signed and redacted blocks
too), which a client must send back with the reply's tool calls.

Like a real server, a plain-text reply honours the request's stop strings: the
text ends before the earliest one, which is not sent (Anthropic also names it
in ``stop_sequence``). ``reject_stop=True`` plays a model that refuses the
``stop`` parameter with a 400.

A reply is a string (streamed as token-like deltas), a ``Reply`` (text,
reasoning, native calls, finish, and faults: an error status with body and
``retry-after``, a cut mid-stream, an in-band error event, slow chunks, a stall,
raw bytes sent verbatim, or a connection closed with no response), a sequence
of ``Chunk`` objects (a recorded reply, encoded as given), or a function of the
request's JSON body that returns one of those, called (in the server's thread)
when the request comes: a reply that depends on what was sent. A function that
raises is answered 500 with its error, as a script's mistake is. Every request's path,
headers and JSON body are kept in ``received`` (bodies also in ``requests``).
``GET /v1/models`` (and ``/v1/models/{id}``; Ollama's ``GET /api/tags``) lists
``models`` in the wire's shape, as a client listing models at start-up (or the
proxy passing a list on) expects; such a GET is kept in ``received`` (method
``GET``, no body), not in ``requests``.
Other paths answer 404 (a provider pointed at the wrong wire is told so).
Running out of replies answers 500 with a message saying so, and
``x-should-retry: false``, the header by which OpenAI's and Anthropic's servers
tell their SDKs not to ask again: the script's mistake is not a server's passing
fault (the SDKs retried it, each retry one more request in ``received``, with
their backoff between); so does a reply function that raised. A request a real
server would refuse (a body that is not a JSON object, a field the fake reads of
the wrong type, a bad ``content-length``) is answered 400 in the wire's error
shape without taking a reply; a chunked request body is read like any other. A test can wait for
a stall (``wait_stalled``) and end it (``resume``), to act at a known point of a
reply. ``stop()`` wakes stalled handlers, closes open connections and joins the
thread, and returns once every handler has closed its connection.
"""

from __future__ import annotations

import json
import socket
import socketserver
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal
from urllib.parse import unquote

import anyio
import msgspec

from streamtools.model import Chunk, FinishChunk
from streamtools.testing.fake_whole import streams, whole
from streamtools.testing.fake_wire import (
    CONTENT_TYPES,
    REASONING_FIELDS,
    TOKENIZER_PATHS,
    WIRES,
    FakeCall,
    ReasoningField,
    Reply,
    Wire,
    chat_template,
    encode,
    error_body,
    inband_error,
    prompt_tokens,
    reply_chunks,
    request_problem,
    request_stops,
    token_pieces,
)

__all__ = [
    "FakeCall",
    "FakeServer",
    "Received",
    "Reply",
    "ScriptItem",
    "Scripted",
    "Wire",
    "token_pieces",
]


class Received(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    headers: dict[str, str]
    body: Any
    method: str = "POST"  # a GET (the model list) has no body: it is not in ``requests``


# an error answer no retry can mend (the script's own mistake): said so to the SDKs
_FINAL = {"x-should-retry": "false"}
Scripted = str | Reply | Sequence[Chunk]
ScriptItem = Scripted | Callable[[dict[str, Any]], Scripted]
Tokenizer = Literal["vllm", "llama.cpp"]
_ENDPOINTS: dict[Wire, tuple[str, ...]] = {  # what each wire answers, under any prefix
    "openai": ("/chat/completions",),
    "anthropic": ("/messages", "/messages/count_tokens"),
    "ollama": ("/api/chat",),
}


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, fake: FakeServer) -> None:
        self.fake = fake
        super().__init__(("127.0.0.1", 0), _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host name (a DNS lookup); not needed here.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = "127.0.0.1", self.server_address[1]

    def shutdown_request(self, request: Any) -> None:
        # a handler's connection is done with once closed here (``FakeServer.stop``
        # waits for that), not at its handler's ``finish``, which comes before
        super().shutdown_request(request)
        self.fake._track(request, add=False)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client dropping an idle keep-alive connection is normal, not worth a
        # traceback in the user's test output; anything else is still reported.
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer
    timeout = 10.0  # an idle keep-alive connection does not pin a thread for long

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def setup(self) -> None:
        super().setup()
        self.server.fake._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        """The model list each wire has (``FakeServer(models=...)``): OpenAI's
        ``GET /v1/models`` and ``/v1/models/{id}``, Anthropic's the same under its
        shape, Ollama's ``GET /api/tags``; other paths answer 404."""
        fake = self.server.fake
        headers = {k.lower(): v for k, v in self.headers.items()}
        fake._record(Received(path=self.path, headers=headers, body=None, method="GET"))
        path = self.path.split("?")[0]
        status, text = _model_list(fake.wire, fake.models, path)
        self._send(status, text)

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        fake = self.server.fake
        wire = fake.wire
        raw = self._read_body()
        if raw is None:
            self.close_connection = True  # the body's end is unknown: nothing more can be read
            self._send(400, error_body(wire, 400, "bad content-length or chunked body"))
            return
        try:
            body: Any = json.loads(raw)
        except (ValueError, RecursionError):  # nesting too deep is bad JSON too
            body = raw.decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in self.headers.items()}
        fake._record(Received(path=self.path, headers=headers, body=body))
        path = self.path.split("?")[0]
        if not (path.endswith(_ENDPOINTS[wire]) or path in TOKENIZER_PATHS and wire == "openai"):
            # A provider pointed at the wrong wire (or base_url) is told so, as a
            # real server's 404 would, instead of getting a stream it cannot read.
            message = f"FakeServer(wire={wire!r}) has no endpoint POST {path}"
            self._send(404, error_body(wire, 404, message))
            return
        if not isinstance(body, dict):
            self._send(400, error_body(wire, 400, "request body is not a JSON object"))
            return
        problem = request_problem(wire, path, body)
        if problem is not None:
            self._send(400, error_body(wire, 400, problem))
            return
        if wire == "anthropic" and path.endswith("/messages/count_tokens"):
            count = {"input_tokens": prompt_tokens(body)}  # no scripted reply taken
            self._send(200, json.dumps(count))
            return
        if path in TOKENIZER_PATHS and wire == "openai":
            self._tokenizer(fake.tokenizer, body)  # no scripted reply taken
            return
        if fake.reject_stop and request_stops(wire, body):
            message = "Unsupported parameter: 'stop' is not supported with this model."
            self._send(400, error_body(wire, 400, message))
            return
        scripted = fake._next()
        if scripted is None:
            message = "FakeServer: no scripted reply left (more requests than replies scripted)"
            self._send(500, error_body(wire, 500, message), headers=_FINAL)
            return
        try:
            item = scripted(body) if callable(scripted) else scripted
        except Exception as exc:  # noqa: BLE001 - the script's mistake, told to the client
            message = f"FakeServer: the scripted reply function raised {exc!r}"
            self._send(500, error_body(wire, 500, message), headers=_FINAL)
            return
        reply = Reply(text=item) if isinstance(item, str) else item
        if isinstance(reply, Reply) and reply.drop:
            self.close_connection = True  # no status line at all: the client sees a cut
            return
        answer: tuple[int, str] | None = None  # a whole answer: no stream was asked for
        try:
            if not isinstance(reply, Reply):
                chunks = list(reply)
                if not any(isinstance(c, FinishChunk) for c in chunks):
                    chunks.append(FinishChunk(reason="stop"))
                reply = Reply()
            elif reply.status >= 400:
                self._error(reply)
                return
            elif reply.raw is not None:
                chunks = None  # the scripted bytes, verbatim, streamed or not
            else:
                chunks = reply_chunks(reply, wire, body)
            if chunks is not None and not streams(wire, body):
                answer = whole(wire, chunks, body, reasoning_field=fake.reasoning_field)
            elif chunks is not None:
                frames = encode(wire, chunks, body, reasoning_field=fake.reasoning_field)
            else:
                frames = reply.raw.splitlines(keepends=True) if reply.raw is not None else []
        except Exception as exc:  # noqa: BLE001 - the script's mistake, told to the client
            # Nothing is sent yet: a reply the wire cannot carry (Ollama call
            # arguments that are not JSON, an argument msgspec cannot encode) is
            # a 500 that names the problem, not a dropped connection.
            message = f"FakeServer cannot send this scripted reply: {exc}"
            self._send(500, error_body(wire, 500, message))
            return
        if answer is not None:
            self._whole(*answer, reply)
            return
        self._stream(frames, reply.content_type or CONTENT_TYPES[wire], reply)

    def _whole(self, status: int, text: str, reply: Reply) -> None:
        """A whole JSON answer (``fake_whole``), with the reply's faults that can
        apply to one: a stall or delay before it, a body cut halfway."""
        fake = self.server.fake
        if reply.stall_after is not None or reply.stall_before is not None:
            if fake._stall(reply.stall):
                self.close_connection = True
                return
        if reply.delay and fake._stopping.wait(reply.delay):
            self.close_connection = True
            return
        if reply.error_after is not None:  # a generation that failed: no answer to give
            status, text = 500, error_body(fake.wire, 500, "generation failed")
        data = text.encode()
        self.send_response(status)
        self.send_header("content-type", reply.content_type or "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()
        if reply.cut_after is not None:
            self.wfile.write(data[: len(data) // 2])
            self.close_connection = True  # fewer bytes than content-length: a cut body
            return
        self.wfile.write(data)

    def _error(self, reply: Reply) -> None:
        """A scripted error answer: its status, body, ``retry-after`` and headers."""
        wire = self.server.fake.wire
        text = reply.body if reply.body is not None else error_body(wire, reply.status, "fake")
        extra = dict(reply.headers)
        if reply.retry_after is not None:
            extra["retry-after"] = f"{reply.retry_after:g}"
        ctype = reply.content_type or (
            "text/html" if text.lstrip().startswith("<") else "application/json"
        )
        self._send(reply.status, text, ctype, extra)

    def _read_body(self) -> bytes | None:
        """The request body, by ``content-length`` or chunked transfer encoding
        (as httpx sends a streamed upload); None when the framing is invalid."""
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            parts: list[bytes] = []
            while True:
                size = self.rfile.readline(1024).split(b";")[0].strip()
                try:
                    n = int(size, 16)
                except ValueError:
                    return None
                if n < 0:
                    return None
                if n == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass  # trailer fields, up to the blank line
                    return b"".join(parts)
                parts.append(self.rfile.read(n))
                self.rfile.readline(1024)  # the CRLF after the chunk
        length = (self.headers.get("content-length") or "0").strip()
        if not (length.isascii() and length.isdigit()):
            return None
        return self.rfile.read(int(length))

    def _tokenizer(self, kind: Tokenizer | None, body: dict[str, Any]) -> None:
        """vLLM's ``/tokenize`` (chat messages in, ``count`` out) or llama-server's
        ``/apply-template`` and ``/tokenize`` (``content`` in, ``tokens`` out)."""
        answer: dict[str, Any]
        if kind == "vllm" and self.path == "/tokenize" and "messages" in body:
            count = len(token_pieces(chat_template(body["messages"])))
            answer = {"count": count, "max_model_len": 32768, "tokens": list(range(count))}
        elif kind == "llama.cpp" and self.path == "/apply-template":
            answer = {"prompt": chat_template(body.get("messages"))}
        elif kind == "llama.cpp":  # /tokenize: ``content`` only, as llama-server reads it
            content = body.get("content")
            answer = {"tokens": list(range(len(token_pieces(content)))) if content else []}
        else:
            self._send(404, json.dumps({"detail": "Not Found"}))
            return
        self._send(200, json.dumps(answer))

    def _send(
        self,
        status: int,
        text: str,
        ctype: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, frames: list[bytes], ctype: str, reply: Reply) -> None:
        stopping = self.server.fake._stopping
        self.send_response(reply.status)
        self.send_header("content-type", ctype)
        self.send_header("transfer-encoding", "chunked")
        self.send_header("cache-control", "no-cache")
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()
        try:
            marker = reply.stall_before.encode() if reply.stall_before is not None else None
            for n, frame in enumerate(frames):
                at_marker = marker is not None and marker in frame
                if (reply.stall_after == n or at_marker) and self.server.fake._stall(reply.stall):
                    self.close_connection = True  # stopped while stalled: drop the body
                    return
                if at_marker:
                    marker = None  # stall once
                if reply.error_after == n:
                    self._chunk(inband_error(self.server.fake.wire))
                    break
                if reply.cut_after == n:
                    self._chunk(frame[: len(frame) // 2])
                    self.close_connection = True  # no terminating chunk: the body is cut
                    return
                if reply.delay and stopping.wait(reply.delay):
                    self.close_connection = True
                    return
                self._chunk(frame)
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away (e.g. cut at a stop marker)

    def _chunk(self, data: bytes) -> None:
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))


def _model_list(wire: Wire, models: Sequence[str], path: str) -> tuple[int, str]:
    """A model list request's status and body, in ``wire``'s shape."""
    if wire == "ollama":
        if not path.endswith("/api/tags"):
            return 404, error_body(wire, 404, f"FakeServer has no endpoint GET {path}")
        listed = [{"name": m, "model": m, "modified_at": _STAMP, "size": 0} for m in models]
        return 200, json.dumps({"models": listed})
    head, _, one = path.partition("/models")
    if not (head.endswith("/v1") or head == "") or (one and not one.startswith("/")):
        return 404, error_body(wire, 404, f"FakeServer has no endpoint GET {path}")

    def entry(model: str) -> dict[str, Any]:
        if wire == "anthropic":
            return {"type": "model", "id": model, "display_name": model, "created_at": _STAMP}
        return {"id": model, "object": "model", "created": 0, "owned_by": "fakeserver"}

    if one:
        wanted = unquote(one[1:])
        if wanted not in models:
            return 404, error_body(wire, 404, f"model {wanted!r} not found")
        return 200, json.dumps(entry(wanted))
    data = [entry(m) for m in models]
    if wire == "anthropic":
        first, last = (models[0], models[-1]) if models else (None, None)
        page = {"data": data, "has_more": False, "first_id": first, "last_id": last}
        return 200, json.dumps(page)
    return 200, json.dumps({"object": "list", "data": data})


_STAMP = "2026-01-01T00:00:00Z"


class FakeServer:
    """A scripted model server on 127.0.0.1 (random port), in a background thread.

    ``with FakeServer(["Hello!"], wire="openai") as server:`` then point a
    provider at ``server.base_url``. ``async with`` works too (stopping runs in
    a worker thread so the event loop is not blocked).
    """

    # declared, not left to inference, which pyright widens to ``str | None``
    tokenizer: Tokenizer | None

    def __init__(
        self,
        replies: Iterable[ScriptItem] = (),
        *,
        wire: Wire = "openai",
        reject_stop: bool = False,
        tokenizer: Tokenizer | None = None,
        models: Sequence[str] = ("fake",),
        reasoning_field: ReasoningField = "reasoning_content",
    ) -> None:
        # a str is iterable: each character would be a reply (a model) of its own
        if isinstance(replies, str | bytes):
            raise ValueError(
                "FakeServer takes a list of replies, one per request, not one text: "
                f"FakeServer([{replies[:40]!r}])"
            )
        if isinstance(models, str):
            raise ValueError(f"models is a list of names: models=[{models!r}]")
        if wire not in WIRES:
            raise ValueError(f"unknown wire format {wire!r}; expected one of {sorted(WIRES)}")
        if reasoning_field not in REASONING_FIELDS:
            raise ValueError(
                f"unknown reasoning_field {reasoning_field!r}; expected one of {REASONING_FIELDS}"
            )
        if tokenizer not in (None, "vllm", "llama.cpp"):
            raise ValueError(f"unknown tokenizer {tokenizer!r}; expected 'vllm' or 'llama.cpp'")
        self.wire: Wire = wire
        self.reject_stop = reject_stop
        self.tokenizer = tokenizer
        self.models = tuple(models)  # what GET /v1/models (/api/tags) lists
        self.reasoning_field: ReasoningField = reasoning_field  # (the openai wire's)
        self.received: list[Received] = []
        self._replies: deque[ScriptItem] = deque(replies)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._wake = threading.Event()  # ends a stall early (resume or stop)
        self._stalled = threading.Condition(self._lock)
        self._stalls = 0  # handlers stalled right now
        self._conns: set[socket.socket] = set()  # accepted and not yet closed
        self._closed = threading.Condition(self._lock)  # one of ``_conns`` was closed
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        if self._httpd is None:
            # read after the block, often: "use it as a context manager" read as wrong there
            raise RuntimeError(
                "FakeServer is not running: it serves only inside its `with` (or `async with`) "
                "block, which has not begun or has ended; read its url inside the block"
            )
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The server root, ``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """What to pass as a provider's ``base_url`` for this wire format."""
        return f"{self.url}/v1" if self.wire == "openai" else self.url

    @property
    def requests(self) -> list[Any]:
        """The JSON bodies received, in order."""
        with self._lock:
            return [r.body for r in self.received if r.method == "POST"]

    @property
    def remaining(self) -> int:
        """Scripted replies not yet served (as ``ScriptedModel.remaining`` and
        ``Replay.remaining`` count theirs)."""
        with self._lock:
            return len(self._replies)

    @property
    def open_connections(self) -> int:
        """Connections accepted and not yet closed (a client that left a response
        unread and its connection open shows here until it closes it; while the
        reply is stalled, until the stall ends: the server sees the close when it
        next reads or writes)."""
        with self._lock:
            return len(self._conns)

    def wait_stalled(self, timeout: float) -> bool:
        """Block until a reply is stalled (True) or ``timeout`` seconds pass (False)."""
        with self._stalled:
            return self._stalled.wait_for(lambda: self._stalls > 0, timeout)

    def resume(self) -> None:
        """End the stall under way now (or else the next one) early."""
        self._wake.set()

    def push(self, *replies: ScriptItem) -> None:
        """Append replies to the script (also while running)."""
        with self._lock:
            self._replies.extend(replies)

    def start(self) -> FakeServer:
        if self._httpd is None:
            self._stopping.clear()
            self._wake.clear()
            self._httpd = _HTTPServer(self)
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"FakeServer-{self.wire}",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        httpd, thread = self._httpd, self._thread
        if httpd is None or thread is None:
            return
        self._stopping.set()
        self._wake.set()
        httpd.shutdown()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        httpd.server_close()
        thread.join(timeout=5.0)
        # handler threads are daemons, not joined by ``server_close``: wait until
        # each has closed its connection, else one closed a moment after ``stop``
        # returned (a test's client saw it half-closed, CLOSE_WAIT, still open)
        with self._closed:
            self._closed.wait_for(lambda: not self._conns, timeout=5.0)
        self._httpd = self._thread = None

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> FakeServer:
        return self.start()

    async def __aexit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await anyio.to_thread.run_sync(self.stop)

    def _stall(self, seconds: float) -> bool:
        """Send nothing for ``seconds`` or until resumed; True when the server is stopping."""
        with self._stalled:
            self._stalls += 1
            self._stalled.notify_all()
        try:
            self._wake.wait(seconds)
        finally:
            with self._lock:
                self._stalls -= 1
        if self._stopping.is_set():
            return True
        self._wake.clear()
        return False

    def _next(self) -> ScriptItem | None:
        with self._lock:
            return self._replies.popleft() if self._replies else None

    def _record(self, received: Received) -> None:
        with self._lock:
            self.received.append(received)

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._conns.add(conn)
            else:
                self._conns.discard(conn)
                self._closed.notify_all()
