"""Ollama ``/api/chat`` over NDJSON.

Theory of operation
-------------------
``POST {base_url}/api/chat`` with ``stream: true`` answers one JSON object
per line (``application/x-ndjson``), each decoded by one
``msgspec.json.Decoder``:

* ``message.content`` is text, ``message.thinking`` reasoning (models run with
  ``think``). The first ``ReasoningChunk`` of a reply says where it came from
  (``ReasoningOrigin``: field ``thinking``, this server and model), and a
  past reply's reasoning goes back to that server and model as its assistant
  message's ``thinking``, beside its content and ``tool_calls``, as Ollama's
  tool-calling guide sends it back (a thinking model then keeps the reasoning
  that led to its call). It was dropped from every request. Another server
  or model gets none of it, as ``OpenAIChat`` does.
* ``message.tool_calls`` arrive whole: ``function.name`` and ``arguments`` as
  a JSON *object*, and, from Ollama 0.12.10 on, the call's ``id``. Each
  becomes one ``CallChunk`` with the arguments re-encoded as JSON text, a
  fresh ``index`` (counting calls in the reply), so ``NativeCalls`` sees
  distinct calls, its id when Ollama sent one (``NativeCalls`` names the
  others; Ollama's own was dropped, so a trace or a client of the proxy saw
  another id than Ollama's log), and ``done``: a whole call is complete on
  arrival.
* The last line has ``done: true``, ``done_reason`` and the token counts
  (``prompt_eval_count``, ``eval_count``). Ollama says ``stop`` even when it
  answered with tool calls; the finish is reported as ``tool_calls`` when any
  were seen, as other providers do. Ollama does not say which stop string
  ended the text (``stop_sequence`` stays None).
* A line ``{"error": "..."}`` (the runner crashed, the model was unloaded)
  ends the stream with an error finish. So does ``done_reason`` ``load`` or
  ``unload``: Ollama only (un)loaded the model and generated nothing, as it
  does for a request with no user turn (only system messages); it passed as
  a finish no consumer knew, an empty final answer.
* A UTF-8 byte-order mark before the first line (a server whose text writer
  puts one first) is dropped: the sniffer of mislabelled streams (``providers.mislabelled``)
  already looked past it and took the body for NDJSON, and the first line
  then failed as malformed JSON, whatever its label.
* Lines end at ``\n`` only (``_lines``): Go's JSON encoder leaves U+0085,
  U+2028 and U+2029 raw inside strings, and httpx's ``aiter_lines`` would split
  a line there, as ``str.splitlines`` does.
* A line that is only the start of a JSON object (``{``) is joined with the
  lines after it until the object ends (``_Joined``): a proxy or gateway that
  ignores ``stream: true`` and pretty-prints the whole answer (one object over
  many lines) ended in an error at its first line, "malformed JSON". A line
  that cannot begin a value is malformed as before; one that is a whole
  value is decoded alone, so an NDJSON stream pays nothing for this.
* An answer labelled ``text/event-stream`` is read too (Ollama-compatible
  servers and proxies label NDJSON so, and some wrap each line in an SSE
  event): it was refused ("expected application/x-ndjson") before any of it
  was read. Lines are read as ever; a ``data:`` line is its data, and the
  other SSE lines (``event:``, ``id:``, ``retry:``, ``:`` comments, a
  ``data: [DONE]``) carry nothing (``_unframed``). Neither does a ``data:``
  line whose data is no JSON object (``data: ping``, ``data: "ping"``): Ollama
  itself never frames lines so (it writes NDJSON, and an error after the first
  line is an ``{"error": …}`` line), but the SSE gateways and proxies that do
  send such heartbeats between events, and the first one ended the answer as
  malformed JSON (a ``data: ping`` even swallowed the lines after it as a
  value written over several). They are skipped on the decoder's slow path, as
  ``OpenAIChat`` skips them; a stream that ends without ``done`` after one
  quotes the last (a gateway giving up in plain words). Data that begins as
  an object and is malformed is still malformed.

Request: sampling and ``stop`` go in ``options`` (``num_predict`` is the token
limit); native calls are sent back with object arguments and their ``id``, and
tool results as ``tool`` messages with ``tool_name`` and ``tool_call_id``, the
fields of Ollama's ``api.ToolCall`` and ``api.Message`` since 0.12.10: the ids
were dropped, so two results of one tool in a turn (the same tool called twice)
could be told apart by their order only. An older Ollama ignores both fields.
Ollama has no ``tool_choice``; it is not sent. Pass ``think``, ``keep_alive``,
``format`` or more ``options`` (``num_ctx``: Ollama's default context is short
for a prompt with many tools) through
``extra_body={"options": {"num_ctx": 16384}}``; they are merged in.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import httpx
import msgspec

from streamtools.model import (
    CallChunk,
    ChatMessage,
    Chunk,
    FinishChunk,
    ModelRequest,
    ReasoningChunk,
    ReasoningOrigin,
    TextChunk,
    UsageChunk,
    sampling,
)
from streamtools.parser.jsonscan import ValueScanner
from streamtools.providers.base import HTTPProvider, record_limit
from streamtools.providers.bodies import (
    function_tools,
    json_schema_of,
    reasoning_server,
    with_call_texts,
)
from streamtools.providers.toolschema import OLLAMA

__all__ = ["OllamaChat"]


class _Function(msgspec.Struct):
    name: str = ""
    arguments: dict[str, Any] | str | None = None


class _Call(msgspec.Struct):
    function: _Function | None = None
    id: str | None = None  # Ollama 0.12.10 and later


class _Message(msgspec.Struct):
    content: str | None = None
    thinking: str | None = None
    tool_calls: list[_Call] | None = None


class _Line(msgspec.Struct):
    message: _Message | None = None
    done: bool = False
    done_reason: str | None = None
    prompt_eval_count: int | None = None
    eval_count: int | None = None
    error: str | None = None


_decoder = msgspec.json.Decoder(_Line)
_encoder = msgspec.json.Encoder()


def _message(msg: ChatMessage, names: dict[str, str], server: str) -> dict[str, Any]:
    """One message. ``arguments`` must be an object: a call whose arguments are
    text that is not one (``NativeCall``) has ``{}`` and its text at the end of
    the content, so the model still reads what it wrote. A reply's ``thinking``
    goes back to the server and model that streamed it (see the module
    docstring)."""
    out: dict[str, Any] = {"role": msg.role, "content": with_call_texts(msg)}
    if msg.reasoning and msg.reasoning_origin == ReasoningOrigin(field=_THINKING, server=server):
        out["thinking"] = msg.reasoning
    if msg.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "function": {"name": c.name, "arguments": c.arguments}}
            if c.id
            else {"function": {"name": c.name, "arguments": c.arguments}}
            for c in msg.tool_calls
        ]
    if msg.role == "tool":
        name = msg.name or names.get(msg.tool_call_id or "")
        if name:
            out["tool_name"] = name
        if msg.tool_call_id:
            out["tool_call_id"] = msg.tool_call_id
    return out


_THINKING = "thinking"  # the ``ReasoningOrigin.field`` of Ollama's ``message.thinking``

# done_reasons that mean Ollama only (un)loaded the model: nothing was generated
_NOTHING_DONE = {
    why: (
        f"Ollama ended with done_reason {why!r}: it {why}ed the model and generated nothing, "
        "as it does for a request without a user message to answer"
    )
    for why in ("load", "unload")
}


class OllamaChat(HTTPProvider):
    """A model served by Ollama's native chat API."""

    _name = "Ollama"
    _content_types = ("application/x-ndjson", "application/json", "text/event-stream")
    _line_records = True

    default_base_url = "http://127.0.0.1:11434"
    default_timeout = 300.0  # a local model may load for minutes before its first token

    def _url(self) -> str:
        return f"{self.base_url}/api/chat"

    def _headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def _events(self, response: httpx.Response) -> AsyncIterator[bytes]:
        return _lines(response)

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        names = {c.id: c.name for m in request.messages for c in m.tool_calls}
        server = reasoning_server(self.base_url, self.model)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [_message(m, names, server) for m in request.messages],
            "stream": True,
        }
        options: dict[str, Any] = {}
        if request.stop and self.supports_stop:
            options["stop"] = list(request.stop)
        if request.temperature is not None:
            options["temperature"] = request.temperature
        if request.max_tokens is not None:
            options["num_predict"] = request.max_tokens
        options.update(sampling(request))  # Ollama's options take all of them by these names
        if options:
            body["options"] = options
        if request.tools:
            body["tools"] = function_tools(request.tools, OLLAMA)  # ``providers.toolschema``
        if request.response_format is not None:
            schema = json_schema_of(request.response_format)
            body["format"] = "json" if schema is None else schema
        return body

    async def _decode(
        self, events: AsyncIterator[bytes], request: ModelRequest
    ) -> AsyncGenerator[Chunk, None]:
        calls = 0
        origin: ReasoningOrigin | None = None  # said once, on the first thinking
        beats: list[bytes] = []  # the last SSE data that was no JSON object
        records = _records(events, beats)  # closed here; the guard finishes ``events``
        try:
            async for data in records:
                if data.error is not None:
                    yield FinishChunk(reason="error", message=f"Ollama error: {data.error}")
                    return
                msg = data.message
                if msg is not None:
                    if msg.thinking:
                        if origin is None:
                            server = reasoning_server(self.base_url, self.model)
                            origin = ReasoningOrigin(field=_THINKING, server=server)
                            yield ReasoningChunk(text=msg.thinking, origin=origin)
                        else:
                            yield ReasoningChunk(text=msg.thinking)
                    if msg.content:
                        yield TextChunk(text=msg.content)
                    for call in msg.tool_calls or ():
                        yield _call_chunk(call, calls)
                        calls += 1
                if data.done:
                    if data.prompt_eval_count is not None or data.eval_count is not None:
                        yield UsageChunk(
                            input_tokens=data.prompt_eval_count, output_tokens=data.eval_count
                        )
                    reason = data.done_reason or "stop"
                    if calls and reason == "stop":
                        reason = "tool_calls"
                    if reason in _NOTHING_DONE:
                        yield FinishChunk(reason="error", message=_NOTHING_DONE[reason])
                        return
                    yield FinishChunk(reason=reason)
                    return
        finally:
            await records.aclose()
        if beats:  # no ``done``: the last words may say why
            said = " ".join(beats[0].decode(errors="replace").split())[:300]
            message = f"{self._name} stream ended before the answer was complete; "
            yield FinishChunk(reason="error", message=f"{message}its last data was: {said}")


def _call_chunk(call: _Call, index: int) -> CallChunk:
    """A whole call as its one ``CallChunk``: the arguments object as JSON text."""
    fn = call.function or _Function()
    args = fn.arguments
    text = args if isinstance(args, str) else _encoder.encode(args or {}).decode()
    return CallChunk(
        index=index, id=call.id or None, name=fn.name or None, arguments=text, done=True
    )


class _Joined:
    """The lines of one JSON value written over several (see the module
    docstring), scanned as they come, each once, so the wait for its end is
    linear; bounded as one record is (``record_limit``)."""

    def __init__(self, first: bytes) -> None:
        self._scan = ValueScanner()
        self._lines: list[bytes] = []
        self._tail = ""  # a token cut at a line's end, offered again
        self._size = 0
        self.add(first)

    @property
    def error(self) -> str | None:
        return self._scan.error

    @property
    def bad(self) -> bool:
        """The lines so far begin no JSON value, or already hold a whole one
        (then they were no value split over lines)."""
        return self._scan.error is not None or self._scan.done

    def add(self, line: bytes) -> bytes | None:
        """Take the next line: the value's text once it is whole, else None. The
        line break goes before a line, not after it: the last line of a cut
        body has none, and a string cut there is unfinished, not malformed."""
        piece = self._tail + ("\n" if self._lines else "") + line.decode()
        self._lines.append(line)
        self._size += len(line) + 1
        record_limit(self._size, "a JSON value")
        end = self._scan.feed(piece, 0)
        self._tail = piece[end:]
        return b"\n".join(self._lines) if self._scan.done else None


async def _records(
    lines: AsyncIterator[bytes], beats: list[bytes]
) -> AsyncGenerator[_Line, None]:
    """The decoded lines, a value written over several lines joined (``_Joined``);
    the last SSE data that was no JSON object goes to ``beats`` (see the module
    docstring)."""
    joined: _Joined | None = None
    async for raw in lines:
        if joined is not None:
            if (value := joined.add(raw)) is not None:
                joined = None
                yield _decoder.decode(value)
            elif joined.bad:  # at the mistake: the lines after it are not swallowed
                raise msgspec.DecodeError(f"a JSON value over lines is malformed: {joined.error}")
            continue
        line = _unframed(raw)
        if not line or line.isspace():
            continue
        try:
            data = _decoder.decode(line)
        except msgspec.DecodeError:
            if raw.startswith(b"data:") and not line.startswith(b"{"):
                beats[:] = [line]  # a heartbeat, or a gateway's words: no record
                continue
            joined = _Joined(line)
            if joined.bad:
                raise  # no start of a value: malformed, as it says
            continue
        yield data


_SSE_FIELDS = (b"event:", b"id:", b"retry:", b":")
_BOM = b"\xef\xbb\xbf"


def _unframed(line: bytes) -> bytes:
    """A line as NDJSON: an SSE ``data:`` line's data, b"" for the other SSE
    lines (see the module docstring); a JSON line as it is."""
    if line[:1] in (b"{", b""):  # the usual line: nothing to look at
        return line
    if line.startswith(_BOM):  # before the first line (see the module docstring)
        return _unframed(line[len(_BOM) :])
    if line.startswith(b"data:"):
        data = line[5:].strip()
        return b"" if data == b"[DONE]" else data
    return b"" if line.startswith(_SSE_FIELDS) else line


async def _lines(response: httpx.Response) -> AsyncGenerator[bytes, None]:
    """The body's lines, split at ``\n`` only (see the module docstring); the
    JSON decoder takes bytes and checks their UTF-8 itself."""
    pending: list[bytes] = []  # the start of a line that spans parts
    async for part in response.aiter_bytes():
        start = 0
        while (end := part.find(b"\n", start)) >= 0:
            if pending:
                pending.append(part[start:end])
                yield b"".join(pending)
                pending.clear()
            else:
                yield part[start:end]
            start = end + 1
        if start < len(part):
            pending.append(part[start:])
    if pending:
        yield b"".join(pending)
