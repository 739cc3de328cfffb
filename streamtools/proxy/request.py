"""What one proxied request asks for, independent of the wire it came in on.

Theory of operation
-------------------
Each wire module (``openai_wire``, ``anthropic_wire``) decodes a client's JSON
body into a ``ProxyCall``: the conversation as a provider-neutral
``Transcript`` (past native calls become ``ToolCall`` entries, tool results
become ``ToolResultMessage``), the tools as ``ToolSpec``, the ``tool_choice``
reduced to ``auto`` / ``none`` / ``required`` / ``UseTool(name)`` (a named
choice stays a ``UseTool`` even when the tool is called ``none``; an
``allowed_tools`` choice is its mode, with the names it allows in
``ProxyCall.allowed``), and the sampling options. Everything comes from the
request: the proxy keeps no state between requests, so replicas can sit behind
any load balancer.

A request the proxy cannot serve raises ``RequestError`` with an HTTP status
and an error kind; the wire module renders it in the client's own format. The
checks the wires share (``array``, ``stop_strings``, ``tool_schema``,
``optional_text``, ``optional_number``, ``optional_switch``, ``token_limit``,
``sampling_options``, ``tool_spec``,
``json_arguments``, ``past_call``, ``response_format``) live here: a field of the wrong JSON
type is a 400 that names it, never a crash further on (a 500).

``Reply`` collects the turn's output events for the non-streaming bodies, so
that a streamed and a non-streamed answer carry the same content. A call cut
off by the token limit (see ``streamtools.proxy.turn``) has no ``CallEnd``: its
``ReplyCall`` keeps ``complete=False`` and the arguments streamed so far, and
``partial_object`` reads them as the Anthropic SDK reads a stream's
``partial_json`` (whole keys and values only).
"""

from __future__ import annotations

import math
import re
from typing import Any

import msgspec

from streamtools.errors import ProviderError
from streamtools.events import (
    ArgsDelta,
    CallEnd,
    CallStart,
    Event,
    Finish,
    ReasoningDelta,
    StreamErrorKind,
    TextDelta,
    Usage,
)
from streamtools.model import ToolChoice, ToolSpec, UseTool
from streamtools.results import decode_json
from streamtools.transcript import AssistantMessage, ToolCall, Transcript

__all__ = [
    "AssistantTurn", "ProxyCall", "Reply", "ReplyCall", "RequestError", "ToolChoice",
    "allowed_tools", "array",
    "forwarded_format",
    "MEDIA", "json_arguments", "media", "media_text", "omitted",
    "optional_number", "optional_switch", "optional_text",
    "partial_object",
    "past_call", "refusal_kind", "refuse_logprobs",
    "response_format",
    "sampling_options", "stop_strings", "token_limit", "tool_schema", "tool_spec",
    "unique_tools",
]


class RequestError(Exception):
    """The client's request cannot be served; ``kind`` is a wire-neutral error
    kind (``invalid_request``, ``authentication``, ``permission``, ``not_found``,
    ``too_large``, ``rate_limit``, ``upstream``, ``overloaded``)."""

    def __init__(self, message: str, *, status: int = 400, kind: str = "invalid_request") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.kind = kind


def array(raw: Any, what: str) -> list[Any]:
    """An optional JSON array (absent or null: empty)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise RequestError(f"{what} must be an array")
    return raw


def stop_strings(raw: Any, what: str) -> list[str]:
    """Stop sequences: a string or an array of strings. Empty strings stop nothing
    (the APIs ignore them; the parser refuses them), so they are dropped."""
    given = [raw] if isinstance(raw, str) else [] if raw is None else raw
    if not isinstance(given, list) or not all(isinstance(s, str) for s in given):
        raise RequestError(f"{what} must be a string or an array of strings")
    return [s for s in given if s]


def tool_schema(raw: Any, what: str) -> dict[str, Any]:
    """A tool's parameters schema: an object (absent, null or empty: no parameters)."""
    if not raw:
        return {"type": "object", "properties": {}}
    if not isinstance(raw, dict):
        raise RequestError(f"{what} must be a JSON Schema object")
    return raw


_decode_arguments = msgspec.json.Decoder(dict[str, Any]).decode


def json_arguments(raw: Any, what: str) -> dict[str, Any]:
    """A past call's arguments sent as a string of JSON (empty: none): the object.

    A lone surrogate escape in them (``"\\ud83d"`` with no low half: a JavaScript
    client's string cut inside an emoji, through ``JSON.stringify``) is read as
    U+FFFD, as it is anywhere else in the body (``results.decode_json``):
    refused, the conversation could never be sent again."""
    if not isinstance(raw, str):
        raise RequestError(f"{what} must be a string of JSON")
    try:
        return decode_json(_decode_arguments, (raw or "{}").encode())
    except msgspec.DecodeError as exc:
        raise RequestError(f"{what} is not a JSON object: {exc}") from exc
    except RecursionError:
        raise RequestError(f"{what} is nested too deeply") from None


def past_call(call_id: str, name: str, arguments: Any, what: str) -> ToolCall:
    """A past call whose arguments came as a string of JSON (``json_arguments``).

    A string that is not a JSON object (cut off by another backend's token limit,
    a model's broken call that the client kept) is kept as it was written
    (``ToolCall.arguments_text``), for the dialect to write back in its call
    form: OpenAI's API takes any string there, and a 400 here refused every later
    request of the conversation. The call keeps its id, so its result pairs."""
    if not isinstance(arguments, str):
        raise RequestError(f"{what} must be a string of JSON")
    if not arguments.strip():
        return ToolCall(id=call_id, name=name, arguments={})
    try:
        return ToolCall(id=call_id, name=name, arguments=json_arguments(arguments, what))
    except RequestError:
        return ToolCall(id=call_id, name=name, arguments={}, arguments_text=arguments)


def tool_spec(raw: dict[str, Any], schema_key: str, where: str) -> ToolSpec:
    """A tool's string ``name``, optional ``description`` and the parameters schema
    found under ``schema_key`` (``parameters``, Anthropic's ``input_schema``)."""
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        # the APIs refuse an empty name too; the model cannot write a call to one
        raise RequestError(f"{where}: a tool needs a non-empty string 'name'")
    return ToolSpec(
        name=name,
        description=optional_text(raw.get("description"), f"{where}.description"),
        parameters=tool_schema(raw.get(schema_key), f"{where}.{schema_key}"),
    )


def unique_tools(specs: list[ToolSpec], where: str) -> list[ToolSpec]:
    """``specs`` (the list at ``where``), once no two share a name. Anthropic's
    API refuses such a request (``tools: Tool names must be unique.``) and so
    does the proxy, on every wire: the model, shown two tools of one name, and
    the parser, which types a call's arguments by one schema per name, cannot
    tell which of the two a call is for, nor can the client."""
    seen: set[str] = set()
    for i, spec in enumerate(specs):
        if spec.name in seen:
            raise RequestError(
                f"{where}[{i}]: tool names must be unique: {spec.name!r} is declared twice"
            )
        seen.add(spec.name)
    return specs


# The media part types of the three APIs (chat, Responses, Messages), by what they hold
MEDIA = {
    "image_url": "image", "input_image": "image", "image": "image",
    "file": "file", "input_file": "file", "document": "document", "input_audio": "audio",
}


def media(kind: Any) -> bool:
    """Whether a part's ``type`` (any JSON value) is one of ``MEDIA``."""
    return isinstance(kind, str) and kind in MEDIA


def omitted(kind: Any) -> str:
    """What the model reads in place of a part it cannot read (an image, a file,
    audio: ``MEDIA``, named alike on every API; the upstream reads text only) in
    a user's message or a tool's result (``openai_wire.text_content``)."""
    name = MEDIA.get(kind, kind) if isinstance(kind, str) else "a part"
    return f"[{name} omitted: this model reads text only]"


def media_text(block: dict[str, Any]) -> str:
    """What the model reads for a media part: an Anthropic ``document`` whose
    source is text (``{"type": "text", "data": …}``, or ``{"type": "content",
    "content": [text blocks]}``) is that text, under its title; any other
    (an image, a PDF, audio) is ``omitted``."""
    kind = block.get("type")
    source = block.get("source")
    if kind == "document" and isinstance(source, dict):
        data = source.get("data") if source.get("type") == "text" else None
        if source.get("type") == "content" and isinstance(source.get("content"), list):
            texts = [b.get("text") for b in source["content"] if isinstance(b, dict)]
            if texts and all(b.get("type") == "text" for b in source["content"]):
                data = "\n".join(t for t in texts if isinstance(t, str))
        if isinstance(data, str):
            title = block.get("title")
            return (f"[document: {title}]" if isinstance(title, str) and title
                    else "[document]") + "\n" + data
    return omitted(kind)


def optional_text(raw: Any, what: str) -> str:
    """An optional string field (absent or null: empty)."""
    if raw is None:
        return ""
    if not isinstance(raw, str):
        raise RequestError(f"{what} must be a string")
    return raw


def optional_flag(raw: Any, what: str) -> bool:
    """An optional boolean (``stream``; absent or null: false). The string
    ``"false"`` is truthy in Python: read as true, it would stream to a client
    that asked not to, so anything but a JSON boolean is refused, as the APIs do."""
    if raw is None:
        return False
    if not isinstance(raw, bool):
        raise RequestError(f"{what} must be a boolean")
    return raw


def optional_number(raw: Any, what: str) -> float | None:
    """An optional number (``temperature``), finite: an infinity or NaN (a body
    decoded by a caller of ``decode_request``, not by JSON) went upstream as
    ``null``, which a server reads as absent."""
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise RequestError(f"{what} must be a number")
    value = float(raw)
    if not math.isfinite(value):
        raise RequestError(f"{what} must be a finite number")
    return value


def token_limit(raw: Any, what: str) -> int | None:
    """An optional limit on the answer's tokens (``max_tokens``,
    ``max_output_tokens``): a positive integer, as the APIs take it. A string or
    a boolean was once dropped in silence, and the answer ran to the upstream's
    own limit."""
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise RequestError(f"{what} must be a positive integer")
    return raw


def optional_switch(raw: Any, what: str, default: bool) -> bool:
    """An optional boolean with a default (``parallel_tool_calls``: absent or
    null is allowed). The string ``"false"`` is not False: read as absent, it
    let parallel calls through to a client that asked for one call per reply."""
    return default if raw is None else optional_flag(raw, what)


def sampling_options(body: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """The sampling options among ``names`` (``streamtools.model.SAMPLING``) that
    the request sets: numbers, ``top_k`` and ``seed`` integers. The upstream's
    provider sends those its API takes."""
    options: dict[str, Any] = {}
    for name in names:
        raw = body.get(name)
        if raw is None:
            continue
        if name in ("top_k", "seed"):
            if isinstance(raw, bool) or not isinstance(raw, int):
                raise RequestError(f"{name} must be an integer")
            options[name] = raw
        else:
            options[name] = optional_number(raw, name)
    return options


def response_format(raw: Any, what: str) -> dict[str, Any] | None:
    """A chat ``response_format``: None for absent, null or ``text``; else
    ``json_object`` or ``json_schema`` with its ``json_schema`` object holding a
    ``schema`` object (``ModelRequest.response_format``)."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or raw.get("type") not in ("text", "json_object", "json_schema"):
        raise RequestError(f"{what} must be an object of type text, json_object or json_schema")
    if raw["type"] == "text":
        return None
    if raw["type"] == "json_schema":
        spec = raw.get("json_schema")
        if not isinstance(spec, dict) or not isinstance(spec.get("schema"), dict):
            raise RequestError(f"{what} of type json_schema needs a JSON Schema object")
    return raw


def refuse_logprobs(asked: bool, what: str) -> None:
    """A 400 for a request that asks for log probabilities (``what``, as its API
    names them). The proxy cannot give them honestly: the model's text is parsed
    into the answer's text and calls (markup left out, a stop string cut), which
    the upstream's tokens do not line up with, and the providers do not read
    them. Dropped, the answer came with ``logprobs: null``, on which a client's
    ``choice.logprobs.content`` failed."""
    if asked:
        raise RequestError(
            f"{what} is not supported: the proxy parses the model's text into text and "
            "tool calls, which token log probabilities would not line up with"
        )


def forwarded_format(call: ProxyCall) -> dict[str, Any] | None:
    """The ``response_format`` the upstream gets: the client's, unless the model
    may call tools, whose calls the dialect writes as text that no JSON schema
    would let through."""
    if call.tools and call.tool_choice != "none":
        return None
    return call.response_format


# an Anthropic upstream's in-stream ``error`` event, by the type its message
# begins with (the provider writes ``"<type>: <message>"``), and an
# OpenAI-compatible one's error chunk, by its code (``"… (code 429)"``: LiteLLM,
# vLLM and llama.cpp write a status; OpenAI a word, ``insufficient_quota``)
_API_ERROR_KINDS: dict[str, StreamErrorKind] = {
    "overloaded_error": "overloaded", "rate_limit_error": "rate_limit"
}
_CODE_KINDS: dict[str, StreamErrorKind] = {
    "429": "rate_limit", "529": "overloaded",
    "rate_limit_exceeded": "rate_limit", "insufficient_quota": "billing",
}
_CODE = re.compile(r"\(code (\w+)\)\Z")


def kind_for_error(message: str) -> StreamErrorKind:
    """The wire-neutral kind of an upstream failure that came inside its stream:
    an overload or a rate limit keeps its kind (a used-up quota is ``billing``),
    anything else is ``upstream``.
    Clients retry a stream that failed with an overload (they read the error's
    type, as a 200 stream has no status to read), and a plain ``api_error``
    told them it was not worth a retry."""
    kind = _API_ERROR_KINDS.get(message.partition(":")[0])
    if kind is None:
        code = _CODE.search(message)
        kind = _CODE_KINDS.get(code.group(1)) if code else None
    return kind or "upstream"


# the kinds of the statuses the APIs name (Anthropic's errors page: 402
# ``billing_error``, 504 ``timeout_error``); 408 and 409 are not named: a
# timeout and a conflict, which the SDKs retry by their status
_STATUS_KINDS: dict[int, StreamErrorKind] = {
    400: "invalid_request",
    401: "authentication",
    402: "billing",
    403: "permission",
    404: "not_found",
    413: "too_large",
    422: "invalid_request",
    429: "rate_limit",
    504: "timeout",
    529: "overloaded",
}


def kind_for_status(status: int) -> StreamErrorKind:
    """The wire-neutral error kind for an upstream HTTP status, in an answer
    that carries the status: another 4xx is ``invalid_request``, as Anthropic's
    API writes one (its SDK and OpenAI's retry a 408 or 409 by the status)."""
    return _STATUS_KINDS.get(status, "upstream" if status >= 500 else "invalid_request")


# the other way: a kind's status, its first in the table (reversed, the first is
# written last: invalid_request is 400, not 422)
_KIND_STATUS: dict[str, int] = {kind: status for status, kind in reversed(_STATUS_KINDS.items())}


# an upstream's context-window overflow (``overflow``), whatever status it came with
_KIND_STATUS["context_length"] = 400


def status_for_kind(kind: str) -> int | None:
    """The HTTP status of a kind ``kind_for_status`` gives (and of a context
    overflow's, 400), or None for another (``upstream``, a broken call or stream)."""
    return _KIND_STATUS.get(kind)


def stream_kind(status: int) -> StreamErrorKind:
    """The kind for an upstream's refusal written into a stream already begun,
    whose status line said 200: the client reads only the kind, so a status it
    would retry (408, 409) must not read ``invalid_request``, which it never
    retries; an unnamed status is the upstream's failure."""
    return _STATUS_KINDS.get(status, "upstream")


def refusal_kind(exc: ProviderError, status: int, begun: bool) -> StreamErrorKind:
    """The kind of an upstream's refusal with ``status``, before the response
    began (``kind_for_status``) or in a stream already begun (``stream_kind``).
    A used-up quota (OpenAI's 429 of type or code ``insufficient_quota``) is
    ``billing``: no wait cures it, and as a rate limit every client retried it."""
    if exc.body and "insufficient_quota" in exc.body and _used_up(exc.body):
        return "billing"
    return stream_kind(status) if begun else kind_for_status(status)


def _used_up(body: str) -> bool:
    try:
        error = msgspec.json.decode(body).get("error")
    except (msgspec.DecodeError, RecursionError, AttributeError):
        return False
    said = (error.get("type"), error.get("code")) if isinstance(error, dict) else ()
    return "insufficient_quota" in said


def refusal_message(exc: ProviderError) -> str:
    """An upstream's refusal as a stream already begun writes it: the wait it
    asked for, which no ``retry-after`` header can carry there, goes in the
    words of OpenAI's messages ("try again in 20s"), which Codex reads a rate
    limit's wait from; a client was left to guess it."""
    if exc.retry_after is None:
        return str(exc)
    seconds = f"{exc.retry_after:.3f}".rstrip("0").rstrip(".")
    return f"{exc}; try again in {seconds}s"


class ProxyCall(msgspec.Struct, kw_only=True):
    """One decoded request."""

    model: str
    transcript: Transcript
    tools: list[ToolSpec] = msgspec.field(default_factory=list)
    tool_choice: ToolChoice = "auto"
    stream: bool = False
    include_usage: bool = False
    temperature: float | None = None
    max_tokens: int | None = None
    # top_p, top_k, seed, presence_penalty, frequency_penalty: the ones given
    sampling: dict[str, Any] = msgspec.field(default_factory=dict)
    stop: list[str] = msgspec.field(default_factory=list)
    # False when the client asked for at most one call per reply
    # (OpenAI ``parallel_tool_calls: false``, Anthropic ``disable_parallel_tool_use``).
    parallel: bool = True
    # tools whose input is raw text (the Responses API's ``custom`` tools): the model
    # is shown one string parameter, ``input``, and the client gets that text
    freeform: list[str] = msgspec.field(default_factory=list)
    # the namespace of each tool declared inside one (the Responses API's ``namespace``
    # tools), by the name the model is shown: ``crm.lookup`` -> ``crm``
    namespaces: dict[str, str] = msgspec.field(default_factory=dict)
    # asked-for JSON, in the chat shape (see ``response_format``, ``forwarded_format``)
    response_format: dict[str, Any] | None = None
    # the names an ``allowed_tools`` tool_choice lets the model call (None: all);
    # ``tool_choice`` is then its mode, ``auto`` or ``required``
    allowed: list[str] | None = None
    # the tools came as OpenAI's legacy ``functions``: the reply is written in their form
    legacy: bool = False
    # the Responses API's ``instructions``, which its response object repeats
    instructions: str | None = None
    # whether text the model wrote before a required or named call reaches the
    # client (``turn``): not on Anthropic's wire, whose API writes none then
    preamble: bool = True
    # Anthropic's ``thinking`` enabled (or adaptive): the reasoning goes out as
    # thinking blocks, as the API writes them only then
    thinking: bool = False
    # reasoning_effort, prompt_cache_key: for an OpenAI-compatible upstream (``forwarded``)
    forward: dict[str, Any] = msgspec.field(default_factory=dict)


def check_tool_choice(
    choice: ToolChoice, tools: list[ToolSpec], said: str | None = None
) -> ToolChoice:
    """Reject a choice that cannot be honoured; ``required`` with no tools is an error
    as it is for the real APIs, ``none``/``auto`` without tools mean plain chat.
    ``said``: the choice as the client's API names it (Anthropic's ``any``), for
    the message."""
    if choice == "auto" or choice == "none":
        return choice
    named = choice.name if isinstance(choice, UseTool) else said or choice
    if not tools:
        raise RequestError(f"tool_choice {named!r} was given but the request has no tools")
    if isinstance(choice, UseTool) and named not in {t.name for t in tools}:
        raise RequestError(f"tool_choice names {named!r}, which is not among the request's tools")
    return choice


def allowed_tools(mode: Any, names: list[str], tools: list[ToolSpec]) -> ToolChoice:
    """An ``allowed_tools`` tool_choice (OpenAI's chat and Responses APIs): its
    mode, ``auto`` or ``required``, once each name it allows is checked to be
    among the request's tools (``ProxyCall.allowed`` keeps the names)."""
    if mode not in ("auto", "required"):
        raise RequestError("tool_choice of type allowed_tools needs mode 'auto' or 'required'")
    if not names:
        raise RequestError("tool_choice of type allowed_tools needs at least one tool")
    known = {t.name for t in tools}
    for name in names:
        if name not in known:
            raise RequestError(
                f"tool_choice allows {name!r}, which is not among the request's tools"
            )
    return check_tool_choice(mode, tools)


class AssistantTurn:
    """One assistant turn read from several parts, as the APIs combine them
    (consecutive Anthropic assistant messages, a Responses message and the
    ``function_call`` items after it): its text pieces, and its calls, each at
    its ``offset`` into the joined text, so that a text dialect writes the reply
    back in the model's order. The parts are collected and joined once, by
    ``message``: joining the text so far (or copying the calls so far) at each
    part was quadratic, and the tens of thousands of parts that fit in a body
    held the event loop, and every other stream, for seconds."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.written = 0  # characters of text so far
        self.calls: list[ToolCall] = []

    def text(self, text: str) -> None:
        self.texts.append(text)
        self.written += len(text)

    def call(self, call: ToolCall) -> None:
        """``call``, after the text so far."""
        self.calls.append(msgspec.structs.replace(call, offset=self.written))

    def message(self) -> AssistantMessage:
        return AssistantMessage(text="".join(self.texts), calls=tuple(self.calls))


class ReplyCall(msgspec.Struct, kw_only=True):
    """A finished call as the non-streaming bodies write it."""

    id: str
    name: str
    arguments: str  # JSON text, exactly the concatenated argument fragments
    input: dict[str, Any] = msgspec.field(default_factory=dict)
    complete: bool = False  # its CallEnd came (else it was cut off by the token limit)


class Reply:
    """Accumulates one turn's output events (see ``streamtools.proxy.turn``),
    and their order (``segments``): reasoning may come between the text and the
    calls (interleaved thinking), where the Anthropic and Responses bodies put it."""

    def __init__(self) -> None:
        self.text_parts: list[str] = []
        self.reasoning_parts: list[str] = []  # the model's reasoning, forwarded
        self.calls: list[ReplyCall] = []
        # in order: ("text" | "reasoning", [parts]) runs and ("call", ReplyCall)
        self.segments: list[tuple[str, Any]] = []
        self._open: dict[int, ReplyCall] = {}
        self.finish = Finish(reason="stop")
        self.usage = Usage()  # the turn's counts (``proxy.usage.reported``)

    @property
    def text(self) -> str:
        return "".join(self.text_parts)

    @property
    def reasoning(self) -> str:
        return "".join(self.reasoning_parts)

    def add(self, event: Event) -> None:
        match event:
            case TextDelta(text=text):
                self.text_parts.append(text)
                self._run("text", text)
            case ReasoningDelta(text=text):
                self.reasoning_parts.append(text)
                self._run("reasoning", text)
            case CallStart(index=index, id=call_id, name=name):
                call = ReplyCall(id=call_id, name=name, arguments="")
                self._open[index] = call
                self.calls.append(call)
                self.segments.append(("call", call))
            case ArgsDelta(index=index, delta=delta):
                self._open[index].arguments += delta
            case CallEnd(index=index, arguments=arguments):
                call = self._open.pop(index)
                call.input = arguments
                call.complete = True
                if not call.arguments:
                    call.arguments = msgspec.json.encode(arguments).decode()
            case Usage():
                self.usage = event
            case Finish():
                self.finish = event
            case _:
                pass

    def _run(self, kind: str, text: str) -> None:
        if self.segments and self.segments[-1][0] == kind:
            self.segments[-1][1].append(text)
        else:
            self.segments.append((kind, [text]))


_MISSING: Any = object()  # nothing whole to keep
_SPACE = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR = re.compile(r"[^,\]}\s]*")


def partial_object(text: str) -> dict[str, Any]:
    """The JSON object a cut-off prefix of one (``text``, a call's arguments as
    streamed) holds so far: its whole members, with open objects and arrays
    closed and a string, key or literal still being written left out, as the
    Anthropic SDK reads a stream's ``partial_json`` (jiter's partial mode), so a
    non-streamed ``tool_use`` has the ``input`` a streamed one ends with. ``{}``
    when there is no object."""
    try:
        value = _partial(text, _SPACE.match(text, 0).end())[0]  # type: ignore[union-attr]
    except RecursionError:  # nested deeper than Python recurses: keep nothing
        return {}
    return value if isinstance(value, dict) else {}


def _partial(text: str, i: int) -> tuple[Any, int, bool]:
    """The value at ``i``: (value or ``_MISSING``, the index after it, whole)."""
    n = len(text)
    if i >= n:
        return _MISSING, n, False
    first = text[i]
    if first == '"':
        m = _STRING.match(text, i)
        if m is None:
            return _MISSING, n, False
        try:
            return msgspec.json.decode(m.group()), m.end(), True
        except msgspec.DecodeError:
            return _MISSING, n, False
    if first not in "{[":
        m = _SCALAR.match(text, i)  # a number or literal: always matches
        try:
            return msgspec.json.decode(m.group()), m.end(), True  # type: ignore[union-attr]
        except msgspec.DecodeError:  # cut (``tr``, ``-``) or not JSON
            return _MISSING, n, False
    is_object = first == "{"
    close = "}" if is_object else "]"
    members: Any = {} if is_object else []
    i = _SPACE.match(text, i + 1).end()  # type: ignore[union-attr]
    if i < n and text[i] == close:
        return members, i + 1, True
    while True:
        key: Any = None
        if is_object:
            key, i, whole = _partial(text, i)
            if not whole or not isinstance(key, str):
                return members, n, False
            i = _SPACE.match(text, i).end()  # type: ignore[union-attr]
            if i >= n or text[i] != ":":
                return members, n, False
            i = _SPACE.match(text, i + 1).end()  # type: ignore[union-attr]
        value, i, whole = _partial(text, i)
        if value is not _MISSING:
            if is_object:
                members[key] = value
            else:
                members.append(value)
        if not whole:
            return members, n, False
        i = _SPACE.match(text, i).end()  # type: ignore[union-attr]
        if i >= n or text[i] not in ("," + close):
            return members, n, False
        if text[i] == close:
            return members, i + 1, True
        i = _SPACE.match(text, i + 1).end()  # type: ignore[union-attr]
