"""Anthropic Messages API over SSE.

Theory of operation
-------------------
``POST {base_url}/v1/messages`` with ``stream: true``. The answer is a
sequence of named SSE events, each decoded by one ``msgspec.json.Decoder``
(dispatch on the JSON ``type``, which always equals the SSE event name):

* ``message_start`` carries the input token count; ``ping`` may come
  anywhere and is skipped.
* ``content_block_start`` opens block ``index``: ``text``, ``thinking`` or
  ``tool_use`` (with ``id`` and ``name``: a ``CallChunk`` right away, so the
  ``CallStart`` is early; its ``content_block_stop`` is a ``done`` chunk, so the
  call can run before the reply ends, if its input is then a whole JSON object:
  the API closes every block before ``message_delta`` says why it stopped, so
  an input cut off by ``max_tokens`` (fine-grained tool streaming sends what
  was written; an input buffered whole by the API may be empty) is closed
  too. Such a call is left open until the next block starts (then it was not
  cut off: only the last block can be) or the stop reason comes, and
  completed then unless that reason is ``length`` or ``content_filter``, when
  ``NativeCalls.end`` makes it ``unterminated`` (cut off, to be made again)
  rather than ``invalid_json``, or run with ``{}``. So calls still complete in
  the order they came, a tool without arguments included);
  ``content_block_delta`` carries ``text_delta``,
  ``thinking_delta`` or ``input_json_delta`` (argument text for the open
  tool_use block). The block index is the ``CallChunk.index``. A tool_use
  block's ``input`` in its start is its input only when no ``input_json_delta``
  with text follows (it is held until the block stops): Anthropic's SDK starts
  the input's text empty and lets the deltas replace it (``accumulate_event``),
  and a gateway that sends the input at the start and again in deltas
  (labring/aiproxy#515, "fix: claude double input", by its title one) had
  the two appended, invalid JSON.
  A thinking block's ``signature_delta`` becomes a ``ReasoningChunk`` with
  that ``signature`` (ending the block), as does the ``signature`` of a block
  a gateway sends whole in its ``content_block_start`` (it was dropped, and
  the block went back unsigned: "Invalid `signature` in `thinking` block"), a
  ``redacted_thinking`` block one with its ``redacted`` data: with extended
  thinking and tool use, the API refuses the next request (400, "Expected
  `thinking` or `redacted_thinking`, but found `tool_use`") unless the reply's
  thinking blocks come back unchanged with its ``tool_use`` blocks. Some
  Anthropic-compatible servers sign none (Kimi's and Zhipu's GLM endpoints: no
  ``signature_delta``, or an empty one) yet refuse the next request of a tool
  loop without the reply's thinking (Kimi: "thinking is enabled but
  reasoning_content is missing in assistant tool call message"); such a
  reply's reasoning was dropped. The first ``ReasoningChunk`` of a reply now
  says where it came from (``ReasoningOrigin``, field ``thinking``), and a
  past reply with calls, reasoning and no signed block sends it back as one
  unsigned thinking block, first, to that server and model only
  (``anthropic_messages``; Anthropic's API refuses a block it did not sign).
  A server tool's block (``server_tool_use``, ``mcp_tool_use``: web search,
  code execution, run by the API itself) streams its input as
  ``input_json_delta`` too; it is no call of ours, so only a ``tool_use``
  block's deltas become ``CallChunk``.
* ``message_delta`` gives ``stop_reason`` (``end_turn`` and ``stop_sequence``
  become ``stop``, ``max_tokens`` and ``model_context_window_exceeded``
  ``length``, ``tool_use`` ``tool_calls``, ``refusal`` ``content_filter``,
  ``pause_turn`` ``pause``: see below) and
  ``stop_sequence`` (the user stop string hit, never part of the text) and the
  token counts; the ``FinishChunk`` goes out at ``message_stop``.
* ``pause_turn``: the API ran server tools (web search, code execution) in a
  loop and paused the turn at its iteration limit; the model has not
  finished, and the API asks the client to send the answer back, as it came,
  to let the model go on. It passed through as a raw finish reason that no
  consumer knew, so the agent took the unfinished answer for the final one.
  Now, for a request with server tools (a ``tools`` entry with a ``type``,
  or ``mcp_servers``, in ``extra_body`` or the request's ``extra``: only
  they pause), the provider goes on by itself (``_resumed``): the answer's
  content blocks are kept as the API sent them (``_Content``: text, thinking
  with its signature, the server tools' use and result blocks, citations),
  and the same request is sent again with them as the last assistant
  message; its chunks continue the same stream (each round with its own
  ``UsageChunk``, as each is billed), up to ``max_pauses`` times. Past that
  (or without server tools) the stream ends with
  ``FinishChunk(reason="pause")`` and a message that says the turn is
  unfinished; a later request that fails ends it in an error finish, as any
  failure after the first byte does.
* Usage (``anthropic_counts.Counts``): each input count is the larger of
  ``message_start``'s and the last ``message_delta``'s, the prompt-cache
  counts kept apart as well as summed into the input. One ``UsageChunk``, the
  latest, goes out just before the finish: a consumer that adds them up (the
  proxy, a cost meter) counted an answer with several ``message_delta`` once
  per event, and missed the input counted only at the end.
* A UTF-16 surrogate pair split across two events (a JavaScript gateway
  escapes each half) is joined: see ``streamtools.providers.surrogates``.
* An ``error`` event mid-stream (``overloaded_error``…) ends the stream with
  an error finish carrying the API's type and message. It is known by its SSE
  name, so a gateway's error event that is not the API's JSON (plain text, or
  no ``type`` field) still ends the stream with its words, not as malformed JSON.
* A server that ignores ``stream: true`` and answers with a whole
  ``message`` is read as the stream it stands for
  (``streamtools.providers.whole``).
* Unknown event types are skipped, as Anthropic's versioning policy asks of
  clients (new event types may be added); a stream of nothing but unknown
  events still ends in an error finish because ``message_stop`` never comes.
  So is an event whose data is no JSON object (a gateway's ``event: ping``
  with ``data: ping``, or a bare ``data: keep-alive``), unless its SSE name is
  one of the API's own events (``_EVENTS``), which would be losing content:
  such data ended the answer as malformed JSON at the first heartbeat.

Request: system messages are joined into the top-level ``system``; an
assistant message's signed ``thinking`` blocks go back as they came, each in
its place among the ``tool_use`` blocks (``anthropic_messages``); native calls become
``tool_use`` blocks and tool results ``tool_result`` blocks in a user message,
with ``is_error: true`` for a tool's failure, as the API documents (it went
as content alone); a tool message that answers no ``tool_use``, as prompt
dialects send, is user text instead (see ``streamtools.providers.bodies``); consecutive
messages of one role are merged (the API expects turns to alternate); ``stop``
becomes ``stop_sequences`` (one that is only whitespace, which the API
refuses, is cut client-side instead: ``_client_stops``); ``max_tokens`` is
required by the API, so the
provider's default fills it. The API refuses a text block, or a message, whose
text is only whitespace (400, "text content blocks must contain non-whitespace
text"): such text (a reply's ``"\n\n"`` before its calls, a blank line a client
sent) is left out, as empty text is. A request of one call per reply
(``ModelRequest.parallel_tool_calls`` False) sets ``tool_choice``'s
``disable_parallel_tool_use`` (with ``auto`` when no choice was given); a
server that refuses it (an Anthropic-compatible API without it) is asked
again without it, and not sent it after.

``count_tokens(request)`` asks ``POST /v1/messages/count_tokens`` how many
input tokens the same request would cost (the proxy answers Anthropic
clients' token counts with it).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from typing import Any, Unpack
from urllib.parse import urlsplit

import anyio
import msgspec
from httpx_sse import ServerSentEvent

from streamtools.errors import ProviderError, UsageError
from streamtools.model import (
    CallChunk,
    Chunk,
    FinishChunk,
    ModelRequest,
    ReasoningChunk,
    ReasoningOrigin,
    TextChunk,
    ToolChoice,
    UseTool,
    sampling,
)
from streamtools.providers import whole
from streamtools.providers.anthropic_counts import Counts, TokenUsage
from streamtools.providers.anthropic_messages import THINKING, readable
from streamtools.providers.anthropic_messages import messages as messages_of
from streamtools.providers.base import (
    HTTPProvider,
    ProviderOptions,
    TransientStreamError,
    answer_field,
)
from streamtools.providers.bodies import json_schema_of, reasoning_server
from streamtools.providers.refused_fields import reopened
from streamtools.providers.surrogates import REASONING, TEXT, SurrogatePairs, arguments
from streamtools.providers.toolnames import ANTHROPIC_NAMES
from streamtools.providers.toolschema import ANTHROPIC, sent_schema

__all__ = ["AnthropicMessages"]

API_VERSION = "2023-06-01"
# MiniMax's Anthropic-compatible endpoints read the key from ``Authorization:
# Bearer`` only: sent as ``x-api-key``, every request was refused (401)
_BEARER_HOSTS = frozenset({"api.minimax.io", "api.minimaxi.com"})
# what ``count_tokens`` sends of a request's body: the fields that make up the
# prompt (the endpoint refuses the ones that shape the answer, like max_tokens)
_COUNTED = ("model", "system", "messages", "tools", "tool_choice", "thinking")


def _whole_object(raw: str) -> bool:
    try:
        return isinstance(msgspec.json.decode(raw), dict)
    except (msgspec.DecodeError, RecursionError):
        return False


class _Block(msgspec.Struct):
    type: str = ""
    id: str | None = None
    name: str | None = None
    input: dict[str, Any] | None = None
    text: str | None = None
    thinking: str | None = None
    signature: str | None = None  # a whole thinking block's (a gateway's; see below)
    data: str | None = None  # redacted_thinking


class _Delta(msgspec.Struct):
    type: str | None = None
    text: str | None = None
    thinking: str | None = None
    signature: str | None = None
    partial_json: str | None = None
    citation: dict[str, Any] | None = None  # ``citations_delta``: kept for ``_Content``
    stop_reason: str | None = None
    stop_sequence: str | None = None


class _Message(msgspec.Struct):
    usage: TokenUsage | None = None


class _Error(msgspec.Struct):
    type: str | None = None
    message: str | None = None


class _Event(msgspec.Struct):
    type: str
    index: int = 0
    content_block: _Block | None = None
    delta: _Delta | None = None
    usage: TokenUsage | None = None
    message: _Message | None = None
    error: _Error | None = None


class _ErrorEvent(msgspec.Struct):
    error: _Error | None = None


_decoder = msgspec.json.Decoder(_Event)
# the API's own events: data under these names that is no JSON object is malformed
_EVENTS = frozenset({"message_start", "message_delta", "message_stop"}) | {
    f"content_block_{what}" for what in ("start", "delta", "stop")
}
_error_decoder = msgspec.json.Decoder(_ErrorEvent)


# the error types the API calls passing: asked again if nothing of the answer came yet
_PASSING = frozenset({"overloaded_error", "api_error", "rate_limit_error"})


def _held(held: dict[int, str]) -> list[CallChunk]:
    """The start inputs still held when the answer ends (blocks that never stopped)."""
    chunks = [CallChunk(index=index, arguments=text) for index, text in held.items()]
    held.clear()
    return chunks


def _failed(data: str) -> FinishChunk:
    """An ``error`` event's finish: the API's type and words, from its JSON or
    from what a gateway sent in its place (plain text, JSON without ``type``);
    ``TransientStreamError`` for a passing one (see ``providers.base``)."""
    try:
        err = _error_decoder.decode(data).error or _Error()
    except (msgspec.DecodeError, RecursionError):
        err = _Error()
    message = f"{err.type or 'error'}: {err.message or data or 'no details'}"
    if err.type in _PASSING:
        raise TransientStreamError(message)
    return FinishChunk(reason="error", message=message)
_STOP = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",  # the prompt left no room: out of tokens
    "tool_use": "tool_calls",
    "refusal": "content_filter",  # the classifiers stopped the answer
    "pause_turn": "pause",  # server tools paused a long turn (see the module docstring)
}
_any = msgspec.json.Decoder()
_FIELDS = {"text_delta": "text", "thinking_delta": "thinking", "input_json_delta": "input"}
_PAUSED = (
    "the API paused the turn (pause_turn: its server tools ran to their iteration "
    "limit) and it was not sent back to go on (max_pauses); the answer is unfinished"
)


class _Content:
    """An answer's content blocks as the API sent them, so that a paused turn
    goes back unchanged (see the module docstring): each block as it started,
    its deltas applied at its stop (text joined once, argument JSON decoded)."""

    def __init__(self) -> None:
        self.blocks: list[dict[str, Any]] = []
        self._open: dict[int, dict[str, Any]] = {}  # block index -> its block
        self._parts: dict[tuple[int, str], list[str]] = {}  # (index, field) -> its text

    def start(self, index: int, data: str) -> None:
        try:
            event = _any.decode(data)
        except (msgspec.DecodeError, RecursionError):  # decoded already: a split pair
            event = json.loads(data)
        block = event.get("content_block") if isinstance(event, dict) else None
        if isinstance(block, dict):
            self.blocks.append(block)
            self._open[index] = block

    def delta(self, index: int, delta: _Delta, text: str) -> None:
        """``text``: the delta's text, thinking or argument JSON, pairs joined."""
        block = self._open.get(index)
        if block is None:
            return
        field = _FIELDS.get(delta.type or "")
        if field is not None:
            if (index, field) not in self._parts:
                self._parts[index, field] = [block.get(field) or ""] if field != "input" else []
            self._parts[index, field].append(text)
        elif delta.type == "signature_delta":
            block["signature"] = delta.signature
        elif delta.type == "citations_delta" and delta.citation is not None:
            block.setdefault("citations", []).append(delta.citation)

    def stop(self, index: int) -> None:
        block = self._open.pop(index, None)
        for field in ("text", "thinking", "input"):
            parts = self._parts.pop((index, field), None)
            if block is None or parts is None:
                continue
            if field != "input":
                block[field] = "".join(parts)
                continue
            try:
                block["input"] = msgspec.json.decode("".join(parts))
            except (msgspec.DecodeError, RecursionError):
                pass  # left as it started: the API checks it


def _server_tools(*extras: Mapping[str, Any]) -> bool:
    """Whether a body with these fields added runs server tools (a tool with a
    ``type`` such as ``web_search_20250305``, or MCP servers): only then can the
    API pause a turn, so only then is an answer's content kept."""
    for extra in extras:
        tools = extra.get("tools")
        if extra.get("mcp_servers") or (
            isinstance(tools, list)
            and any(isinstance(t, dict) and t.get("type", "custom") != "custom" for t in tools)
        ):
            return True
    return False


def _continued(messages: list[dict[str, Any]], blocks: list[dict[str, Any]]) -> list[Any]:
    """``messages`` with a paused answer's ``blocks`` as the last assistant
    message (added to one that ends them already: a prefill)."""
    out = list(messages)
    last = out[-1] if out else None
    if last is None or last.get("role") != "assistant":
        return [*out, {"role": "assistant", "content": blocks}]
    before = last.get("content")
    if isinstance(before, str):
        before = [{"type": "text", "text": before}] if before else []
    out[-1] = {**last, "content": [*(before or []), *blocks]}
    return out


def _tool_choice(choice: ToolChoice | str) -> dict[str, Any]:
    kinds = {"auto": "auto", "required": "any", "any": "any", "none": "none"}
    if isinstance(choice, str) and choice in kinds:
        return {"type": kinds[choice]}
    # UseTool (a tool may be named "none"), or an untyped caller's bare tool name
    name = choice.name if isinstance(choice, UseTool) else choice
    return {"type": "tool", "name": name}


class AnthropicMessages(HTTPProvider):
    """Claude (or any server speaking the Anthropic Messages API).

    ``max_pauses``: how many times an answer the API paused (``pause_turn``)
    is sent back to go on, within one stream (see the module docstring).
    """

    _name = "Anthropic API"

    _tool_names = ANTHROPIC_NAMES  # names it refuses go as ones it takes (``providers.toolnames``)
    default_base_url = "https://api.anthropic.com"
    # ``tool_choice.disable_parallel_tool_use`` is sent (False once a server refused it)
    supports_parallel_tool_calls = True

    def __init__(
        self,
        model: str,
        *,
        max_tokens: int = 4096,
        api_version: str = API_VERSION,
        max_pauses: int = 5,
        **options: Unpack[ProviderOptions],
    ) -> None:
        super().__init__(model, **options)
        self.max_tokens = max_tokens
        self.api_version = api_version
        self.max_pauses = max_pauses
        # a stream's request (by id, while it is open) -> the content it keeps
        self._contents: dict[int, _Content] = {}

    def stream(self, request: ModelRequest) -> AbstractAsyncContextManager[AsyncIterator[Chunk]]:
        """Open the request and stream chunks; with server tools in the request,
        a turn the API pauses goes on in the same stream (see the module docstring)."""
        if self.max_pauses > 0 and _server_tools(self.extra_body, request.extra):
            return self._paused_stream(request)
        return reopened(super().stream, request, partial(self._refused_parallel, request), 1)

    def _refused_parallel(self, request: ModelRequest, exc: ProviderError) -> bool:
        """Whether ``exc`` refused ``disable_parallel_tool_use`` (an Anthropic-compatible
        server's API without it), now not sent: the request is asked again."""
        said = f"{exc.body or ''}\n{exc}"
        if (
            exc.status in (400, 422)
            and self.supports_parallel_tool_calls
            and request.parallel_tool_calls is False
            and "disable_parallel_tool_use" in said
        ):
            self.supports_parallel_tool_calls = False
            return True
        return False

    @asynccontextmanager
    async def _paused_stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[Chunk]]:
        chunks = self._resumed(request)
        try:
            yield chunks
        finally:
            with anyio.CancelScope(shield=True):
                await chunks.aclose()

    async def _resumed(self, request: ModelRequest) -> AsyncGenerator[Chunk, None]:
        """The answer, sent back and continued each time the API pauses the turn."""
        sent: list[dict[str, Any]] = []  # the request's messages, once a pause needs them
        paused: list[dict[str, Any]] = []  # the content blocks of the rounds so far
        for pauses in range(self.max_pauses + 1):
            extra = request.extra
            if paused:
                sent = sent or self.request_body(request)["messages"]
                extra = {**extra, "messages": _continued(sent, paused)}
            asked = msgspec.structs.replace(request, extra=extra)  # its own id, at least
            content = self._contents[id(asked)] = _Content()
            try:
                async with super()._stream(asked) as chunks:
                    async for chunk in chunks:
                        if isinstance(chunk, FinishChunk) and chunk.reason == "pause":
                            if pauses < self.max_pauses:
                                break
                        yield chunk
                    else:
                        return
            except ProviderError as exc:  # a later round's request: the stream has begun
                if not pauses:
                    raise
                yield FinishChunk(reason="error", message=f"{exc} (going on after pause_turn)")
                return
            finally:
                del self._contents[id(asked)]
            paused += content.blocks

    def _url(self) -> str:
        base = self.base_url
        return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"

    def _whole(self, raw: bytes) -> bytes | None:
        return whole.message(raw)

    def _client_stops(self, request: ModelRequest) -> tuple[str, ...]:
        """Besides all of them when ``supports_stop`` is off, the stop strings that
        are only whitespace (``"\n"``, ``"\n\n"``): the API refuses them (400,
        "each stop sequence must contain non-whitespace"), so they are cut here."""
        if not self.supports_stop:
            return request.stop
        return tuple(stop for stop in request.stop if stop and not readable(stop))

    def _headers(self) -> dict[str, str]:
        headers = {"accept": "text/event-stream", "anthropic-version": self.api_version}
        if self.api_key and urlsplit(self.base_url).hostname in _BEARER_HOSTS:
            headers["authorization"] = f"Bearer {self.api_key}"  # see ``_BEARER_HOSTS``
        elif self.api_key:
            headers["x-api-key"] = self.api_key
        return headers

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        server = reasoning_server(self.base_url, self.model)
        system, messages = messages_of(request.messages, server)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": request.max_tokens or self.max_tokens,
            "stream": True,
        }
        if system is not None:
            body["system"] = system
        sent = [stop for stop in request.stop if readable(stop)]
        if sent and self.supports_stop:
            body["stop_sequences"] = sent
        if request.tools:
            body["tools"] = [  # an object at the root, draft 2020-12 (``providers.toolschema``)
                {
                    "name": t.name,
                    "description": t.description,
                    "input_schema": sent_schema(t.parameters, ANTHROPIC),
                }
                for t in request.tools
            ]
            choice = None if request.tool_choice is None else _tool_choice(request.tool_choice)
            if request.parallel_tool_calls is False and self.supports_parallel_tool_calls:
                choice = choice or {"type": "auto"}  # one call per reply; "none" makes none
                if choice["type"] != "none":
                    choice["disable_parallel_tool_use"] = True
            if choice is not None:
                body["tool_choice"] = choice
        if request.temperature is not None:
            body["temperature"] = request.temperature
        # the Messages API has top_p and top_k; seed and the penalties are left out
        body.update(sampling(request, ("top_p", "top_k")))
        if request.response_format is not None:
            schema = json_schema_of(request.response_format)
            if schema is None:
                raise UsageError(
                    "the Messages API constrains a reply to a JSON schema, not to any JSON "
                    "object: give response_format a json_schema"
                )
            body["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
        return body

    async def count_tokens(self, request: ModelRequest) -> int:
        """The input tokens of ``request`` as the API counts them (``POST
        /v1/messages/count_tokens``): the model, system prompt, messages and
        tools that ``stream`` would send. Raises ``ProviderError`` as ``stream``
        does, and when the answer has no ``input_tokens``."""
        sent = self.request_body(request)
        body = {name: sent[name] for name in _COUNTED if name in sent}
        url = f"{self._url()}/count_tokens"
        tokens: int = answer_field(await self._post_json(url, body), "input_tokens", int, url)
        return tokens

    def _origin(self) -> ReasoningOrigin:
        """Where this server's thinking came from (see the module docstring)."""
        return ReasoningOrigin(field=THINKING, server=reasoning_server(self.base_url, self.model))

    async def _decode(
        self, events: AsyncIterator[ServerSentEvent], request: ModelRequest
    ) -> AsyncGenerator[Chunk, None]:
        finish: FinishChunk | None = None
        counts = Counts()
        tool_blocks: dict[int, list[str]] = {}  # open tool_use blocks -> their input so far
        held: dict[int, str] = {}  # a tool_use start's input, until a delta replaces it
        unsure: list[int] = []  # the stopped tool_use block whose input is not whole (see above)
        pairs = SurrogatePairs(_decoder, _Event)  # pairs split across events
        content = self._contents.get(id(request))  # kept for a paused turn (``_resumed``)
        origin: ReasoningOrigin | None = None  # said once, on the first thinking text
        async for sse in events:
            if sse.event == "error":  # by its SSE name: a gateway's may not be the API's JSON
                yield _failed(sse.data)
                return
            if not sse.data or sse.data.isspace():
                continue
            try:
                event = pairs.decode(sse.data)
            except (msgspec.DecodeError, msgspec.ValidationError):
                if sse.event in _EVENTS or sse.data.lstrip().startswith("{"):
                    raise  # an event of the answer, malformed
                continue  # a heartbeat (see the module docstring)
            kind = event.type
            if content is not None:
                if kind == "content_block_start":
                    content.start(event.index, sse.data)
                elif kind == "content_block_stop":
                    content.stop(event.index)
            if kind == "content_block_delta" and event.delta is not None:
                d = event.delta
                piece = ""  # the delta's text, as the stream passes it on
                if d.type == "text_delta" and d.text:
                    if piece := pairs.join(TEXT, d.text):
                        yield TextChunk(text=piece)
                elif d.type == "input_json_delta" and d.partial_json:
                    held.pop(event.index, None)  # the deltas are the input (see above)
                    if event.index not in tool_blocks:
                        piece = d.partial_json  # a server tool's: no call of ours
                    elif piece := pairs.join(arguments(event.index), d.partial_json):
                        tool_blocks[event.index].append(piece)
                        yield CallChunk(index=event.index, arguments=piece)
                elif d.type == "thinking_delta" and d.thinking:
                    if piece := pairs.join(REASONING, d.thinking):
                        if origin is None:
                            origin = self._origin()
                            yield ReasoningChunk(text=piece, origin=origin)
                        else:
                            yield ReasoningChunk(text=piece)
                elif d.type == "signature_delta" and d.signature:
                    lost = pairs.close(REASONING)
                    yield ReasoningChunk(text=lost, signature=d.signature)
                if content is not None:
                    content.delta(event.index, d, piece)
            elif kind == "content_block_start" and event.content_block is not None:
                for index in unsure:  # another block follows: it was not cut off
                    yield CallChunk(index=index, done=True)
                unsure.clear()
                block = event.content_block
                if block.type == "tool_use":
                    if block.input:  # held until the block stops (see above)
                        held[event.index] = msgspec.json.encode(block.input).decode()
                    tool_blocks[event.index] = []
                    yield CallChunk(index=event.index, id=block.id, name=block.name or None)
                elif block.type == "text" and block.text:
                    if text := pairs.join(TEXT, block.text):
                        yield TextChunk(text=text)
                elif block.type == "thinking" and (block.thinking or block.signature):
                    if block.thinking and (thinking := pairs.join(REASONING, block.thinking)):
                        first, origin = origin is None, origin or self._origin()
                        yield ReasoningChunk(text=thinking, origin=origin if first else None)
                    if block.signature:  # a whole block, signed: it ends here
                        yield ReasoningChunk(text=pairs.close(REASONING), signature=block.signature)
                elif block.type == "redacted_thinking" and block.data:
                    yield ReasoningChunk(text="", redacted=block.data)
            elif kind == "content_block_stop" and event.index in tool_blocks:
                lost = held.pop(event.index, "") + pairs.close(arguments(event.index))
                whole = _whole_object("".join(tool_blocks.pop(event.index)) + lost)
                if not whole:
                    unsure.append(event.index)
                yield CallChunk(index=event.index, arguments=lost, done=whole)
            elif kind == "message_start" and event.message and event.message.usage:
                counts.add(event.message.usage, delta=False)
            elif kind == "message_delta":
                if event.delta is not None and event.delta.stop_reason is not None:
                    reason = _STOP.get(event.delta.stop_reason, event.delta.stop_reason)
                    if reason not in ("length", "content_filter"):  # not cut off: complete
                        for index in unsure:
                            yield CallChunk(index=index, done=True)
                    unsure.clear()
                    finish = FinishChunk(
                        reason=reason,
                        stop_sequence=event.delta.stop_sequence,
                        message=_PAUSED if reason == "pause" else None,
                    )
                if event.usage is not None:
                    counts.add(event.usage, delta=True)
            elif kind == "message_stop":
                for chunk in [*_held(held), *pairs.rest(), *counts.chunks()]:
                    yield chunk
                yield finish or FinishChunk(reason="stop")
                return
            elif kind == "error":  # a stream of data lines only (no SSE event names)
                yield _failed(sse.data)
                return
            # ping, other blocks' stops and unknown event types carry nothing for us
        for chunk in _held(held):  # blocks that never stopped: their text is not lost
            yield chunk
        if finish is not None:
            for chunk in [*pairs.rest(), *counts.chunks()]:
                yield chunk
            yield finish
