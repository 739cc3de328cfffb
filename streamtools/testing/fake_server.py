"""``FakeServer``: a real HTTP model server on 127.0.0.1 that plays scripted replies.

Theory of operation
-------------------
A ``ThreadingHTTPServer`` bound to 127.0.0.1 on a random port runs in a
background thread, so one server serves sync tests, asyncio and trio alike
(``with FakeServer(...)`` or ``async with FakeServer(...)``). Each POST
takes the next scripted reply and streams it in one provider's exact wire
format, one event per HTTP chunk:

* ``wire="openai"``: ``/v1/chat/completions`` SSE (``base_url`` ends in
  ``/v1``), with a leading ``: OPENROUTER PROCESSING`` comment, token-like
  ``delta.content`` pieces, ``reasoning_content``, ``tool_calls`` deltas, a
  finish chunk, a usage chunk with empty ``choices`` when asked, ``[DONE]``;
* ``wire="anthropic"``: ``/v1/messages`` SSE with ``message_start``, a
  ``ping``, ``thinking`` / ``text`` / ``tool_use`` content blocks and their
  deltas, ``message_delta`` (``stop_reason``, ``stop_sequence``),
  ``message_stop``;
* ``wire="ollama"``: ``/api/chat`` NDJSON with ``message.content`` /
  ``message.thinking`` pieces, whole tool calls (object arguments, no id) and a
  final ``done`` line with ``done_reason`` and token counts.

Like a real server, a plain-text reply honours the request's stop strings: the
text ends before the earliest one, which is not sent (Anthropic also names it
in ``stop_sequence``). ``reject_stop=True`` plays a model that refuses the
``stop`` parameter with a 400.

A reply is a string (streamed as token-like deltas), a ``Reply`` (text,
reasoning, native calls, finish, and faults: an error status with body and
``retry-after``, a cut mid-stream, an in-band error event, slow chunks, a
stall, or raw bytes sent verbatim), or a sequence of ``Chunk`` objects (a
recorded reply, encoded as given). Every request's path, headers and JSON body
are kept in ``received`` (bodies also in ``requests``). Running out of replies
answers 500 with a message saying so. ``stop()`` wakes stalled handlers, closes
open connections and joins the thread.
"""

from __future__ import annotations

import json
import re
import socket
import socketserver
import threading
from collections import deque
from collections.abc import Iterable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal

import anyio
import msgspec

from streamtools.model import (
    CallChunk,
    Chunk,
    FinishChunk,
    ReasoningChunk,
    TextChunk,
    UsageChunk,
)

__all__ = ["FakeCall", "FakeServer", "Received", "Reply", "token_pieces"]

Wire = Literal["openai", "anthropic", "ollama"]
_PIECE = re.compile(r"\s*\S{1,4}|\s+")


def token_pieces(text: str) -> list[str]:
    """Split text the way a tokenizer streams it: short pieces with leading spaces."""
    return _PIECE.findall(text)


class FakeCall(msgspec.Struct, frozen=True, kw_only=True):
    """A native tool call in a scripted reply; ``id`` defaults per wire format."""

    name: str
    arguments: dict[str, Any] | str = {}
    id: str | None = None


class Reply(msgspec.Struct, frozen=True, kw_only=True):
    """One scripted answer, and the faults to inject while sending it.

    ``status`` >= 400 answers with that status, ``body`` (default: the wire's
    JSON error shape) and ``retry_after`` seconds. ``cut_after=n`` sends n events
    then half of the next and drops the connection; ``error_after=n`` sends an
    in-band error event after n events; ``stall_after=n`` sends n events then
    nothing for ``stall`` seconds (then goes on; ``FakeServer.resume`` or the
    server stopping ends it), ``stall_before=text`` the same before the first
    event that contains ``text``; ``delay`` sleeps before each event. ``raw``
    is sent verbatim with ``content_type``.
    ``index_zero`` (openai) puts every parallel call on index 0, differing by id.
    """

    text: str = ""
    reasoning: str = ""
    calls: tuple[FakeCall, ...] = ()
    finish: str | None = None
    status: int = 200
    body: str | None = None
    retry_after: float | None = None
    headers: dict[str, str] = {}
    content_type: str | None = None
    raw: bytes | None = None
    cut_after: int | None = None
    error_after: int | None = None
    stall_after: int | None = None
    stall_before: str | None = None
    stall: float = 30.0
    delay: float = 0.0
    index_zero: bool = False


class Received(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    headers: dict[str, str]
    body: Any


ScriptItem = str | Reply | Sequence[Chunk]


def _stops(wire: Wire, body: dict[str, Any]) -> list[str]:
    if wire == "openai":
        stop = body.get("stop")
    elif wire == "anthropic":
        stop = body.get("stop_sequences")
    else:
        stop = (body.get("options") or {}).get("stop")
    if isinstance(stop, str):
        return [stop]
    return [s for s in stop or () if isinstance(s, str) and s]


def _chunks(reply: Reply, wire: Wire, body: dict[str, Any]) -> list[Chunk]:
    """The reply as provider-neutral chunks, with the request's stop honoured."""
    text, calls, stop_hit = reply.text, reply.calls, None
    for stop in _stops(wire, body):
        pos = text.find(stop)
        if pos >= 0:
            text, stop_hit, calls = text[:pos], stop, ()
    out: list[Chunk] = [ReasoningChunk(text=p) for p in token_pieces(reply.reasoning)]
    out += [TextChunk(text=p) for p in token_pieces(text)]
    for n, call in enumerate(calls):
        args = call.arguments
        args_text = args if isinstance(args, str) else msgspec.json.encode(args).decode()
        prefix = "toolu_fake_" if wire == "anthropic" else "call_fake_"
        index = 0 if reply.index_zero else n
        out.append(CallChunk(index=index, id=call.id or f"{prefix}{n}", name=call.name))
        out += [CallChunk(index=index, arguments=p) for p in token_pieces(args_text)]
    reason = reply.finish or ("tool_calls" if calls else "stop")
    out.append(UsageChunk(input_tokens=len(json.dumps(body)) // 4, output_tokens=len(out)))
    out.append(FinishChunk(reason=reason, stop_sequence=stop_hit))
    return out


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _openai_frames(chunks: Sequence[Chunk], body: dict[str, Any]) -> list[bytes]:
    model = body.get("model", "fake")
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model}
    want_usage = bool((body.get("stream_options") or {}).get("include_usage"))

    def frame(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _sse({**base, "choices": [choice]})

    frames = [b": OPENROUTER PROCESSING\n\n", frame({"role": "assistant", "content": ""})]
    usage = None
    for c in chunks:
        if isinstance(c, TextChunk):
            frames.append(frame({"content": c.text}))
        elif isinstance(c, ReasoningChunk):
            frames.append(frame({"reasoning_content": c.text}))
        elif isinstance(c, CallChunk):
            call: dict[str, Any] = {"index": c.index, "function": {"arguments": c.arguments}}
            if c.id is not None:
                call["id"], call["type"] = c.id, "function"
            if c.name is not None:
                call["function"]["name"] = c.name
            frames.append(frame({"tool_calls": [call]}))
        elif isinstance(c, UsageChunk):
            usage = {
                "prompt_tokens": c.input_tokens or 0,
                "completion_tokens": c.output_tokens or 0,
            }
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        else:
            frames.append(frame({}, c.reason))
    if want_usage and usage is not None:
        frames.append(_sse({**base, "choices": [], "usage": usage}))
    frames.append(b"data: [DONE]\n\n")
    return frames


_ANTHROPIC_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


def _event(kind: str, **fields: Any) -> bytes:
    """One Anthropic event: the SSE event name repeats the JSON ``type``."""
    return _sse({"type": kind, **fields}, kind)


def _anthropic_frames(chunks: Sequence[Chunk], body: dict[str, Any]) -> list[bytes]:
    usage = next((c for c in chunks if isinstance(c, UsageChunk)), UsageChunk())
    message: dict[str, Any] = {"id": "msg_fake", "type": "message", "role": "assistant"}
    message["content"] = []
    message |= {"model": body.get("model", "fake"), "stop_reason": None, "stop_sequence": None}
    message["usage"] = {"input_tokens": usage.input_tokens or 0, "output_tokens": 1}
    frames = [_event("message_start", message=message), _event("ping")]
    block, kind = -1, ""  # the open content block: its index and what it holds

    def close() -> None:
        if kind == "thinking":  # a thinking block ends with its signature
            delta = {"type": "signature_delta", "signature": "fake-signature"}
            frames.append(_event("content_block_delta", index=block, delta=delta))
        if kind:
            frames.append(_event("content_block_stop", index=block))

    def open_block(new: str, content: dict[str, Any]) -> None:
        nonlocal block, kind
        close()
        block, kind = block + 1, new
        frames.append(_event("content_block_start", index=block, content_block=content))

    for c in chunks:
        if isinstance(c, TextChunk | ReasoningChunk):
            new, field = ("text", "text") if isinstance(c, TextChunk) else ("thinking", "thinking")
            if kind != new:
                open_block(new, {"type": new, field: ""})
            delta = {"type": f"{new}_delta", field: c.text}
            frames.append(_event("content_block_delta", index=block, delta=delta))
        elif isinstance(c, CallChunk):
            if c.name is not None or kind != f"tool{c.index}":
                tool = {"type": "tool_use", "id": c.id or f"toolu_{c.index}", "name": c.name or ""}
                open_block(f"tool{c.index}", {**tool, "input": {}})
            if c.arguments:
                delta = {"type": "input_json_delta", "partial_json": c.arguments}
                frames.append(_event("content_block_delta", index=block, delta=delta))
        elif isinstance(c, FinishChunk):
            close()
            kind = ""
            reason = "stop_sequence" if c.stop_sequence else _ANTHROPIC_STOP.get(c.reason, c.reason)
            end = {"stop_reason": reason, "stop_sequence": c.stop_sequence}
            out = {"output_tokens": usage.output_tokens or 0}
            frames += [_event("message_delta", delta=end, usage=out), _event("message_stop")]
    return frames


def _ollama_frames(chunks: Sequence[Chunk], body: dict[str, Any]) -> list[bytes]:
    model = body.get("model", "fake")
    stamp = "2026-01-01T00:00:00Z"

    def line(message: dict[str, Any], **extra: Any) -> bytes:
        data = {"model": model, "created_at": stamp, "message": message, "done": False, **extra}
        return (json.dumps(data, ensure_ascii=False) + "\n").encode()

    frames: list[bytes] = []
    calls: list[tuple[int, str, list[str]]] = []  # (index, name, argument pieces)
    usage = UsageChunk()
    for c in chunks:
        if isinstance(c, TextChunk):
            frames.append(line({"role": "assistant", "content": c.text}))
        elif isinstance(c, ReasoningChunk):
            frames.append(line({"role": "assistant", "content": "", "thinking": c.text}))
        elif isinstance(c, CallChunk):
            if c.name is not None or not calls or calls[-1][0] != c.index:
                calls.append((c.index, c.name or "", []))
            calls[-1][2].append(c.arguments)
        elif isinstance(c, UsageChunk):
            usage = c
        else:
            for _, name, parts in calls:
                call = {"function": {"name": name, "arguments": json.loads("".join(parts) or "{}")}}
                frames.append(line({"role": "assistant", "content": "", "tool_calls": [call]}))
            reason = "length" if c.reason == "length" else "stop"  # ollama never says tool_calls
            frames.append(
                line(
                    {"role": "assistant", "content": ""},
                    done=True,
                    done_reason=reason,
                    total_duration=1000,
                    prompt_eval_count=usage.input_tokens or 0,
                    eval_count=usage.output_tokens or 0,
                )
            )
    return frames


_FRAMES = {"openai": _openai_frames, "anthropic": _anthropic_frames, "ollama": _ollama_frames}
_CTYPE = {
    "openai": "text/event-stream",
    "anthropic": "text/event-stream",
    "ollama": "application/x-ndjson",
}


def _error_body(wire: Wire, status: int, message: str) -> str:
    if wire == "openai":
        data: Any = {"error": {"message": message, "type": "fake_error", "code": status}}
    elif wire == "anthropic":
        data = {"type": "error", "error": {"type": "fake_error", "message": message}}
    else:
        data = {"error": message}
    return json.dumps(data)


def _inband_error(wire: Wire) -> bytes:
    if wire == "openai":
        return _sse({"error": {"message": "upstream failed mid-answer", "code": 502}})
    if wire == "anthropic":
        return _event("error", error={"type": "overloaded_error", "message": "Overloaded"})
    return b'{"error":"model runner stopped unexpectedly"}\n'


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, fake: FakeServer) -> None:
        self.fake = fake
        super().__init__(("127.0.0.1", 0), _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host name (a DNS lookup); not needed here.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = "127.0.0.1", self.server_address[1]


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
        self.server.fake._track(self.connection, add=False)
        try:
            super().finish()
        except OSError:
            pass

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        fake = self.server.fake
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in self.headers.items()}
        fake._record(Received(path=self.path, headers=headers, body=body))
        wire = fake.wire
        if not isinstance(body, dict):
            self._send(400, _error_body(wire, 400, "request body is not a JSON object"))
            return
        if fake.reject_stop and _stops(wire, body):
            message = "Unsupported parameter: 'stop' is not supported with this model."
            self._send(400, _error_body(wire, 400, message))
            return
        item = fake._next()
        if item is None:
            self._send(500, _error_body(wire, 500, "FakeServer: no scripted reply left"))
            return
        reply = Reply(text=item) if isinstance(item, str) else item
        if not isinstance(reply, Reply):
            chunks = list(reply)
            if not any(isinstance(c, FinishChunk) for c in chunks):
                chunks.append(FinishChunk(reason="stop"))
            self._stream(_FRAMES[wire](chunks, body), _CTYPE[wire], Reply())
            return
        if reply.status >= 400:
            text = reply.body if reply.body is not None else _error_body(wire, reply.status, "fake")
            extra = dict(reply.headers)
            if reply.retry_after is not None:
                extra["retry-after"] = f"{reply.retry_after:g}"
            ctype = reply.content_type or (
                "text/html" if text.lstrip().startswith("<") else "application/json"
            )
            self._send(reply.status, text, ctype, extra)
            return
        if reply.raw is not None:
            frames = reply.raw.splitlines(keepends=True)
        else:
            frames = _FRAMES[wire](_chunks(reply, wire, body), body)
        self._stream(frames, reply.content_type or _CTYPE[wire], reply)

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
                    self._chunk(_inband_error(self.server.fake.wire))
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


class FakeServer:
    """A scripted model server on 127.0.0.1 (random port), in a background thread.

    ``with FakeServer(["Hello!"], wire="openai") as server:`` then point a
    provider at ``server.base_url``. ``async with`` works too (stopping runs in
    a worker thread so the event loop is not blocked).
    """

    def __init__(
        self,
        replies: Iterable[ScriptItem] = (),
        *,
        wire: Wire = "openai",
        reject_stop: bool = False,
    ) -> None:
        if wire not in _FRAMES:
            raise ValueError(f"unknown wire format {wire!r}; expected one of {sorted(_FRAMES)}")
        self.wire: Wire = wire
        self.reject_stop = reject_stop
        self.received: list[Received] = []
        self._replies: deque[ScriptItem] = deque(replies)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._wake = threading.Event()  # ends a stall early (resume or stop)
        self._stalled = threading.Condition(self._lock)
        self._stalls = 0  # handlers stalled right now
        self._conns: set[socket.socket] = set()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("FakeServer is not running; use it as a context manager")
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
            return [r.body for r in self.received]

    @property
    def pending(self) -> int:
        """Scripted replies not yet served."""
        with self._lock:
            return len(self._replies)

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
