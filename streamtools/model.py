"""The model interface: one request in, an async stream of chunks out.

Theory of operation
-------------------
Everything that produces model output (an HTTP provider, a recording being
replayed, a scripted model in a test) implements ``Model``:

    async with model.stream(request) as chunks:
        async for chunk in chunks:
            ...

``stream`` returns an async context manager so that the resource behind the
stream (an HTTP response, a file) is closed when the consumer leaves the
block, including on cancellation. Leaving the block early cancels the
request; that is how the runtime stops a model at a client-side stop marker.

Chunks are provider-neutral and wire-format-free: providers translate their
wire format into them, the runtime never parses wire formats. A stream ends
with exactly one ``FinishChunk``; a stream that breaks raises
``streamtools.errors.ProviderError`` (or ends with a ``FinishChunk`` whose
reason is ``error``) instead of hanging.

Messages are the projection of a transcript for one request (see
``streamtools.transcript``): plain chat roles with string content, plus the
native-mode fields (``tool_calls`` on assistant messages, ``tool_call_id`` on
tool messages) that prompt-based dialects leave empty.

This module is data only: standard library and msgspec.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal, Protocol, runtime_checkable

import msgspec

__all__ = [
    "CallChunk",
    "ChatMessage",
    "Chunk",
    "FinishChunk",
    "Model",
    "ModelRequest",
    "NativeCall",
    "ReasoningChunk",
    "ReasoningOrigin",
    "SAMPLING",
    "TextChunk",
    "Thinking",
    "ToolChoice",
    "ToolSpec",
    "UsageChunk",
    "UseTool",
    "keyword_choice",
    "sampling",
]

Role = Literal["system", "user", "assistant", "tool"]


class NativeCall(msgspec.Struct, frozen=True, kw_only=True):
    """A past tool call carried natively on an assistant message; ``extra`` is
    what the API attached to it (``CallChunk.extra``), sent back with it.
    ``arguments_text``: the arguments as written when they are not a JSON object
    (``ToolCall.arguments_text``; ``arguments`` is empty then). Every provider
    sends ``{}`` and the text where the reply's text goes, just before the call
    (see each provider's ``_blocks`` / ``_message``): Anthropic and Ollama take
    an object only, and OpenAI-compatible servers (vLLM, SGLang, llama-server)
    refuse past arguments that do not decode to one."""

    id: str
    name: str
    arguments: dict[str, Any]
    extra: dict[str, Any] | None = None
    arguments_text: str | None = None


class Thinking(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A reasoning block the provider signed: Anthropic's ``thinking`` block
    (``text`` and its ``signature``) or ``redacted_thinking`` (``redacted``: its
    opaque data). With extended thinking and tool use the API requires the
    reply's blocks back, unchanged, on the assistant message with its
    ``tool_use`` blocks; other APIs have no such blocks and ignore them.
    ``calls`` is how many of the reply's calls came before the block: with
    interleaved thinking (thinking, tool_use, thinking, tool_use) the blocks go
    back in their places, which the API checks ("thinking blocks in the latest
    assistant message cannot be modified")."""

    text: str = ""
    signature: str = ""
    redacted: str | None = None
    calls: int = 0


class ReasoningOrigin(msgspec.Struct, frozen=True, kw_only=True):
    """Where a reply's reasoning text came from, for the server that streamed it
    to take it back: the wire ``field`` it came in (``reasoning_content``:
    DeepSeek, Kimi, vLLM, llama.cpp; ``reasoning``: OpenRouter, Ollama, Groq),
    and ``server``, an opaque digest of the server and model that sent it (the
    provider's own; no URL is kept). DeepSeek's and Kimi's thinking modes
    refuse the next request (400, "reasoning_content must be passed back")
    unless a reply with tool calls carries its reasoning back; other servers
    refuse a field they do not know (OpenAI's API, Groq), so it goes back only
    where it came from (``OpenAIChat``, ``send_reasoning``)."""

    field: str
    server: str


class ChatMessage(msgspec.Struct, frozen=True, kw_only=True):
    """One message of a request, as every chat API understands it. ``thinking``:
    an assistant message's signed reasoning blocks, sent back in native mode.
    ``reasoning`` and ``reasoning_origin``: an assistant message's reasoning
    text in native mode and where it came from (``ReasoningOrigin``), which the
    provider that streamed it takes back; the others ignore them.
    ``is_error``: a tool message that carries the tool's failure, which
    Anthropic's ``tool_result`` block flags; the chat APIs without a flag read
    the content (``Error: …``)."""

    role: Role
    content: str
    tool_calls: tuple[NativeCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    thinking: tuple[Thinking, ...] = ()
    reasoning: str = ""
    reasoning_origin: ReasoningOrigin | None = None
    is_error: bool = False


class ToolSpec(msgspec.Struct, frozen=True, kw_only=True):
    """A tool as sent to a provider in native mode: name, description, JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any]


class UseTool(msgspec.Struct, frozen=True):
    """A ``tool_choice`` that names the one tool the model must call.

    The keywords stay plain strings (``auto``, ``none``, ``required``), so a
    tool may itself be called ``none`` or ``auto``: ``UseTool("none")`` means
    "call the tool named none", never "call no tool".
    """

    name: str


# What a request may say about tool calls: a keyword, or the tool to call.
ToolChoice = Literal["auto", "none", "required"] | UseTool
_KEYWORDS: dict[str, ToolChoice] = {"auto": "auto", "none": "none", "required": "required"}


def keyword_choice(raw: object) -> ToolChoice | None:
    """``raw`` as a ``tool_choice`` keyword (``auto``, ``none``, ``required``), or
    None for anything else (a tool's name, which is a ``UseTool``)."""
    return _KEYWORDS.get(raw) if isinstance(raw, str) else None


class ModelRequest(msgspec.Struct, frozen=True, kw_only=True):
    """What the runtime asks of a model for one turn.

    ``tools`` is set only in native mode; ``tool_choice`` is ``auto``,
    ``none``, ``required`` or ``UseTool(name)``. Sampling options left at None are
    not sent; ``top_p`` … ``frequency_penalty`` (``SAMPLING``) go to the APIs
    that take them and are left out for the others (see ``sampling``).
    ``response_format`` asks for JSON, in OpenAI's chat shape:
    ``{"type": "json_object"}`` or ``{"type": "json_schema", "json_schema":
    {"name": …, "schema": {…}}}``; each provider sends it in its API's form
    (``providers.bodies.json_schema_of``). ``extra`` is passed through to the
    provider's request body unchanged. ``parallel_tool_calls=False`` (native
    tools only) asks for at most one call per reply, where the API can say so:
    OpenAI-compatible ``parallel_tool_calls: false``, Anthropic's
    ``disable_parallel_tool_use``; None says nothing (the server's default).
    """

    messages: tuple[ChatMessage, ...]
    stop: tuple[str, ...] = ()
    tools: tuple[ToolSpec, ...] | None = None
    tool_choice: ToolChoice | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    top_k: int | None = None
    seed: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    response_format: dict[str, Any] | None = None
    extra: dict[str, Any] = {}
    parallel_tool_calls: bool | None = None


# The sampling options besides temperature, by the names OpenAI-compatible
# servers, Anthropic and Ollama give them (each API takes some of them).
SAMPLING = ("top_p", "top_k", "seed", "presence_penalty", "frequency_penalty")


def sampling(request: ModelRequest, names: tuple[str, ...] = SAMPLING) -> dict[str, Any]:
    """The options of ``names`` that ``request`` sets, by name (a provider's
    request body takes the ones its API knows)."""
    values = {name: getattr(request, name) for name in names}
    return {name: value for name, value in values.items() if value is not None}


class _Chunk(msgspec.Struct, tag_field="type", frozen=True, kw_only=True):
    pass


class TextChunk(_Chunk, tag="text", frozen=True, kw_only=True):
    text: str


class ReasoningChunk(_Chunk, tag="reasoning", frozen=True, kw_only=True, omit_defaults=True):
    """Reasoning text. A ``signature`` ends a signed thinking block: the reasoning
    text since the last one (this chunk's included) is that block, to be sent
    back as it was (``Thinking``); ``redacted`` is a whole redacted block's data.
    ``origin``: where the reply's reasoning came from (``ReasoningOrigin``), on
    the first chunk of a reply that a provider can take back; the runtime keeps
    it with the reply (``AssistantMessage.reasoning_origin``), so a recording
    replayed or a transcript saved and loaded still has it."""

    text: str
    signature: str | None = None
    redacted: str | None = None
    origin: ReasoningOrigin | None = None


class CallChunk(_Chunk, tag="call", frozen=True, kw_only=True):
    """A native tool-call delta. ``index`` tells the calls of a reply apart (the
    provider's own, or, where the wire's is not enough, the call's place in
    the reply, as ``OpenAIChat`` numbers them); ``id`` and
    ``name`` appear on the first delta of a call (some servers repeat them, some
    reuse index 0 for parallel calls and differ only by ``id``). ``done`` says the
    wire marked the call complete (with this delta's arguments, if any), so it can
    run before the reply ends. ``extra`` is data the API attached to the call and
    requires back with it on the next request (Gemini 3's ``extra_content`` with
    its thought signature, on its OpenAI-compatible endpoint)."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    done: bool = False
    extra: dict[str, Any] | None = None


class UsageChunk(_Chunk, tag="usage", frozen=True, kw_only=True, omit_defaults=True):
    """A request's token counts, as the provider reported them; each field
    means what it means on ``streamtools.events.Usage`` (``input_tokens`` all
    the input, the cache counts the parts of it read from and written to a
    prompt cache, ``reasoning_tokens`` the part of the output spent reasoning),
    None when the server said nothing of it."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None


class FinishChunk(_Chunk, tag="finish", frozen=True, kw_only=True):
    """The provider's finish: ``stop``, ``length``, ``tool_calls``, ``error``…;
    ``stop_sequence`` is the user stop string that ended the text, if known."""

    reason: str
    stop_sequence: str | None = None
    message: str | None = None


Chunk = TextChunk | ReasoningChunk | CallChunk | UsageChunk | FinishChunk


@runtime_checkable
class Model(Protocol):
    """Anything that streams chunks for a request."""

    def stream(self, request: ModelRequest) -> AbstractAsyncContextManager[AsyncIterator[Chunk]]:
        """Open a stream of chunks for ``request``; closing it cancels the request."""
        ...
