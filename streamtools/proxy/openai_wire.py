"""The OpenAI chat completions wire: request decoding, chunk and body encoding.

Theory of operation
-------------------
``decode_request`` turns a ``POST /v1/chat/completions`` body into a
``ProxyCall``. Assistant ``tool_calls`` become ``ToolCall`` entries of the
transcript and ``tool`` messages become ``ToolResultMessage`` paired by
``tool_call_id`` (the tool's name is looked up among the earlier calls of the
same request: the proxy is stateless). Only text content reaches the model; an
image, file or audio part becomes a placeholder it reads (``text_content``), so
that it can say it cannot see it, rather than a 400 that every later request of
the conversation would get too, or a silent drop that would change the question.
A ``custom`` tool (raw text input) is shown to the model as one with a single
string parameter; its calls are written by ``chat_custom``. The legacy
``function_call`` beside ``tools`` is their ``tool_choice`` (``_choice``).

``ChunkEncoder`` turns the turn's events into ``chat.completion.chunk`` SSE
lines exactly as OpenAI writes them: the ``role`` with the first delta (with
``content: ""`` in a chunk of its own before text, with ``content: null`` beside
a first call, so that a reply of calls only assembles to null content), ``content``
deltas, a ``tool_calls`` delta carrying ``index``, ``id``, ``type`` and
``function.name`` (with empty ``arguments``) when a call starts, then one delta
per ``arguments`` fragment as the upstream produced it, one chunk with the one
``finish_reason``, an optional usage chunk with empty ``choices``
(``stream_options.include_usage``), and ``data: [DONE]``. A failure after the
stream began is written as ``data: {"error": …}``, which the official SDK
raises as ``APIError``.

``response_body`` writes the same content as one ``chat.completion`` object.

``model_list`` writes an Anthropic upstream's model list as OpenAI's
``GET /v1/models`` answer, which the openai SDK reads, and ``model_object``
one of its models as the answer to ``GET /v1/models/{id}``.
"""

from __future__ import annotations

import secrets
import time
from datetime import UTC, datetime
from typing import Any

import msgspec

from streamtools.events import (
    ArgsDelta,
    CallStart,
    Event,
    Finish,
    ReasoningDelta,
    TextDelta,
    Usage,
)
from streamtools.model import SAMPLING, ToolChoice, ToolSpec, UseTool, keyword_choice
from streamtools.proxy.forwarded import CACHE_KEY, EFFORT, forward_fields
from streamtools.proxy.freeform import freeform_spec
from streamtools.proxy.request import (
    ProxyCall,
    Reply,
    RequestError,
    allowed_tools,
    array,
    check_tool_choice,
    media,
    omitted,
    optional_flag,
    optional_number,
    optional_switch,
    optional_text,
    past_call,
    refuse_logprobs,
    response_format,
    sampling_options,
    stop_strings,
    token_limit,
    tool_spec,
    unique_tools,
)
from streamtools.proxy.usage import chat_usage
from streamtools.transcript import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    Transcript,
    UserMessage,
)

__all__ = [
    "ChunkEncoder", "LegacyChunkEncoder", "decode_request", "error_body", "model_list",
    "model_object", "response_body", "text_content",
]

_encode = msgspec.json.Encoder().encode

_ERROR_TYPES = {
    "invalid_request": "invalid_request_error",
    "authentication": "authentication_error",
    "billing": "insufficient_quota",  # OpenAI's type for a plan or credit that ran out
    "permission": "permission_error",
    "not_found": "not_found_error",
    "too_large": "invalid_request_error",
    "rate_limit": "rate_limit_error",
    "overloaded": "server_error",
    "upstream": "upstream_error",
    "context_length": "invalid_request_error",
}
# the ``code`` of an error below 500 by its kind (OpenAI's, which clients act on)
_CODES = {"context_length": "context_length_exceeded", "billing": "insufficient_quota"}


def text_content(content: Any, where: str, *, result: bool = False) -> str:
    """Content as a string: a string, null, or a list of text parts (the chat
    and the Responses wires' part types alike). Parts are joined by a newline,
    as vLLM joins them: joined by nothing, two parts ran together ("9C" and
    "sunny", two items of one tool result, became "9Csunny").

    An image, a file or audio (``MEDIA``) is a placeholder the model reads
    (``omitted``), as the upstream reads text only: refused with a 400, one
    pasted image (or one a coding agent read from a file, in a tool's result)
    made every later request of that conversation fail, and the model can say
    it cannot see it. Any other part is a 400, except in a tool's ``result``,
    where it is a placeholder too."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if not isinstance(part, dict):
                raise RequestError(f"{where}: content parts must be objects")
            kind = part.get("type")
            if kind in ("text", "input_text", "output_text") and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif kind == "refusal" and isinstance(part.get("refusal"), str):
                parts.append(part["refusal"])
            elif result or media(kind):
                parts.append(omitted(kind))
            else:
                raise RequestError(
                    f"{where}: content part of type {kind!r} is not supported "
                    "(the upstream model reads text only)"
                )
        return "\n".join(parts)
    raise RequestError(f"{where}: content must be a string or a list of parts")


def _tool_call(raw: Any, where: str) -> ToolCall:
    if isinstance(raw, dict) and raw.get("type") == "custom":
        return _custom_call(raw, where)
    if not isinstance(raw, dict) or not isinstance(raw.get("function"), dict):
        raise RequestError(f"{where}: each tool call needs a 'function' object")
    fn = raw["function"]
    name, args, call_id = fn.get("name"), fn.get("arguments", "{}"), raw.get("id")
    if not isinstance(name, str) or not isinstance(call_id, str):
        raise RequestError(f"{where}: a tool call needs string 'id' and 'function.name'")
    if isinstance(args, dict):  # some clients send the object itself
        return ToolCall(id=call_id, name=name, arguments=args)
    return past_call(call_id, name, "" if args is None else args, f"{where}: function.arguments")


def _custom_call(raw: dict[str, Any], where: str) -> ToolCall:
    """A past call to a custom tool (``{"type": "custom", "custom": {"name",
    "input"}}``): its text as the one parameter the model was shown."""
    custom, call_id = raw.get("custom"), raw.get("id")
    name = custom.get("name") if isinstance(custom, dict) else None
    text = custom.get("input") if isinstance(custom, dict) else None
    if not isinstance(name, str) or not isinstance(text, str) or not isinstance(call_id, str):
        raise RequestError(
            f"{where}: a custom tool call needs string 'id', 'custom.name' and 'custom.input'"
        )
    return ToolCall(id=call_id, name=name, arguments={"input": text})


def _legacy_call(raw: Any, call_id: str, where: str) -> ToolCall:
    """An assistant message's legacy ``function_call`` (``{"name", "arguments"}``,
    no id: it gets ``call_id``, which the ``function`` message after it answers)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise RequestError(f"{where}.function_call needs a string 'name'")
    args = raw.get("arguments")
    if isinstance(args, dict):
        return ToolCall(id=call_id, name=raw["name"], arguments=args)
    return past_call(call_id, raw["name"], "" if args is None else args, f"{where}.function_call")


def _messages(raw: Any) -> Transcript:
    if not isinstance(raw, list) or not raw:
        raise RequestError("'messages' must be a non-empty array")
    transcript = Transcript()
    names: dict[str, str] = {}  # call id -> tool name, from this request only
    legacy: str | None = None  # the id given to the last legacy function_call
    for i, msg in enumerate(raw):
        where = f"messages[{i}]"
        if not isinstance(msg, dict):
            raise RequestError(f"{where} must be an object")
        role = msg.get("role")
        if role in ("system", "developer"):
            transcript.add(SystemMessage(content=text_content(msg.get("content"), where)))
        elif role == "user":
            transcript.add(UserMessage(content=text_content(msg.get("content"), where)))
        elif role == "assistant":
            calls = tuple(
                _tool_call(c, f"{where}.tool_calls[{j}]")
                for j, c in enumerate(array(msg.get("tool_calls"), f"{where}.tool_calls"))
            )
            if msg.get("function_call") is not None:
                legacy = f"function_call_{i}"
                calls += (_legacy_call(msg["function_call"], legacy, where),)
            names.update((c.id, c.name) for c in calls)
            text = text_content(msg.get("content"), where)
            transcript.add(AssistantMessage(text=text, calls=calls))
        elif role == "tool":
            call_id = msg.get("tool_call_id")
            if not isinstance(call_id, str):
                raise RequestError(f"{where}: a tool message needs 'tool_call_id'")
            name = names.get(call_id) or optional_text(msg.get("name"), f"{where}.name") or "tool"
            content = text_content(msg.get("content"), where, result=True)
            transcript.add(ToolResultMessage(call_id=call_id, name=name, content=content))
        elif role == "function":  # the legacy result: it answers the last function_call
            name = optional_text(msg.get("name"), f"{where}.name") or "tool"
            content = text_content(msg.get("content"), where, result=True)
            call_id, legacy = legacy or f"function_{i}", None
            transcript.add(ToolResultMessage(call_id=call_id, name=name, content=content))
        else:
            raise RequestError(f"{where}: unsupported role {role!r}")
    return transcript


def _tools(raw: Any) -> tuple[list[ToolSpec], list[str]]:
    """The tools, and the names of the custom ones among them (raw text input:
    shown to the model as one string parameter, ``freeform.freeform_spec``)."""
    specs: list[ToolSpec] = []
    custom: list[str] = []
    for i, tool in enumerate(array(raw, "tools")):
        if isinstance(tool, dict) and tool.get("type") == "custom":
            if not isinstance(tool.get("custom"), dict):
                raise RequestError(f"tools[{i}]: a custom tool needs a 'custom' object")
            specs.append(freeform_spec(tool["custom"], f"tools[{i}].custom"))
            custom.append(specs[-1].name)
            continue
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise RequestError(
                f"tools[{i}]: expected {{'type': 'function', 'function': {{...}}}} "
                "or {'type': 'custom', 'custom': {...}}"
            )
        specs.append(tool_spec(fn, "parameters", f"tools[{i}].function"))
    return unique_tools(specs, "tools"), custom


def _named(raw: Any) -> str | None:
    """The name in a named tool (``{"type": "function", "function": {"name"}}``
    or ``{"type": "custom", "custom": {"name"}}``), else None."""
    if not isinstance(raw, dict):
        return None
    inner = raw.get("custom") if raw.get("type") == "custom" else raw.get("function")
    name = inner.get("name") if isinstance(inner, dict) else None
    return name if isinstance(name, str) else None


def _tool_choice(raw: Any) -> ToolChoice:
    if raw is None:
        return "auto"
    keyword = keyword_choice(raw)
    if keyword is not None:
        return keyword
    name = _named(raw)
    if name is not None:
        return UseTool(name)  # even one called "none"
    raise RequestError(f"unsupported tool_choice {raw!r}")


def _allowed(raw: Any) -> tuple[Any, list[str]] | None:
    """An ``allowed_tools`` tool_choice as (mode, names), else None."""
    if not isinstance(raw, dict) or raw.get("type") != "allowed_tools":
        return None
    spec = raw.get("allowed_tools")
    if not isinstance(spec, dict):
        raise RequestError("tool_choice of type allowed_tools needs an 'allowed_tools' object")
    names: list[str] = []
    for i, tool in enumerate(array(spec.get("tools"), "tool_choice.allowed_tools.tools")):
        name = _named(tool)
        if name is None:
            raise RequestError(
                f"tool_choice.allowed_tools.tools[{i}]: expected "
                "{'type': 'function', 'function': {'name': ...}} or a custom tool's name"
            )
        names.append(name)
    return spec.get("mode"), names


def _choice(body: dict[str, Any]) -> Any:
    """The request's ``tool_choice``, or with ``tools`` the legacy
    ``function_call`` in its place, as OpenAI's API reads it: ``"none"``,
    ``"auto"`` or ``{"name": X}`` (it was refused, and a client that still sends
    ``function_call: "none"`` beside its tools could not use the proxy). Both
    given is a 400, as it is there."""
    raw = body.get("function_call")
    if raw is None:
        return body.get("tool_choice")
    if body.get("tool_choice") is not None:
        raise RequestError("give tool_choice or the legacy function_call, not both")
    if raw in ("auto", "none"):
        return raw
    if isinstance(raw, dict) and isinstance(raw.get("name"), str):
        return {"type": "function", "function": {"name": raw["name"]}}
    raise RequestError(f"unsupported function_call {raw!r}")


def _legacy_functions(body: dict[str, Any]) -> tuple[list[ToolSpec], ToolChoice]:
    """The deprecated ``functions`` and ``function_call`` as tools and a choice.
    OpenAI's API still serves them, and ignored, an old client's functions never
    reached the model. The answer is written in their form too (``legacy``)."""
    if body.get("tools") is not None or body.get("tool_choice") is not None:
        raise RequestError("give tools and tool_choice, or the legacy functions, not both")
    specs: list[ToolSpec] = []
    for i, fn in enumerate(array(body.get("functions"), "functions")):
        if not isinstance(fn, dict):
            raise RequestError(f"functions[{i}] must be an object")
        specs.append(tool_spec(fn, "parameters", f"functions[{i}]"))
    unique_tools(specs, "functions")
    raw = body.get("function_call")
    if raw is None or raw in ("auto", "none"):
        choice: ToolChoice = raw or "auto"
    elif isinstance(raw, dict) and isinstance(raw.get("name"), str):
        choice = UseTool(raw["name"])
    else:
        raise RequestError(f"unsupported function_call {raw!r}")
    return specs, check_tool_choice(choice, specs)


def _unservable(body: dict[str, Any]) -> None:
    """Refuse what the upstream cannot give, as OpenAI refuses it for a model
    that lacks it: a web search (``web_search_options``), spoken output
    (``audio``, ``modalities`` with ``"audio"``) and log probabilities
    (``logprobs``, ``top_logprobs``: see ``refuse_logprobs``). Ignored, the
    answer came back unsearched, as text only or without them, with nothing to
    tell the client so."""
    if body.get("web_search_options") is not None:
        raise RequestError("web_search_options is not supported (the upstream cannot search)")
    top = body.get("top_logprobs")
    logprobs = optional_flag(body.get("logprobs"), "logprobs")
    refuse_logprobs(logprobs or top not in (None, 0), "logprobs (and top_logprobs)")
    modalities = body.get("modalities")
    if body.get("audio") is not None or (isinstance(modalities, list) and "audio" in modalities):
        raise RequestError("audio output is not supported (the upstream writes text only)")


def decode_request(body: Any) -> ProxyCall:
    """Decode a chat completions request body (already parsed JSON)."""
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str):
        raise RequestError("'model' is required")
    if body.get("n") not in (None, 1):
        raise RequestError("only n=1 is supported")
    _unservable(body)
    # a function_call beside tools (no functions) is their tool_choice (``_choice``)
    legacy = body.get("functions") is not None or (
        body.get("function_call") is not None and body.get("tools") is None
    )
    tools, custom = _tools(body.get("tools"))
    stops = stop_strings(body.get("stop"), "stop")
    # max_tokens is the deprecated name: the newer one wins when both are given
    max_tokens = token_limit(body.get("max_tokens"), "max_tokens")
    if body.get("max_completion_tokens") is not None:
        max_tokens = token_limit(body["max_completion_tokens"], "max_completion_tokens")
    options = body.get("stream_options")
    if options is None:
        options = {}
    elif not isinstance(options, dict):
        raise RequestError("stream_options must be an object")
    raw_choice = body.get("tool_choice") if legacy else _choice(body)
    allowed = _allowed(raw_choice)
    if legacy:
        tools, choice = _legacy_functions(body)
    elif allowed is None:
        choice = check_tool_choice(_tool_choice(raw_choice), tools)
    else:
        choice = allowed_tools(*allowed, tools)
    return ProxyCall(
        model=model,
        transcript=_messages(body.get("messages")),
        tools=tools,
        tool_choice=choice,
        allowed=None if allowed is None else allowed[1],
        stream=optional_flag(body.get("stream"), "stream"),
        # "false" (a string) is truthy: it sent the usage chunk to a client that said no
        include_usage=optional_flag(options.get("include_usage"), "stream_options.include_usage"),
        temperature=optional_number(body.get("temperature"), "temperature"),
        # top_k is not OpenAI's, but clients of vLLM and others send it
        sampling=sampling_options(body, SAMPLING),
        max_tokens=max_tokens,
        stop=stops,
        # a legacy reply holds one function_call
        parallel=not legacy
        and optional_switch(body.get("parallel_tool_calls"), "parallel_tool_calls", True),
        response_format=response_format(body.get("response_format"), "response_format"),
        legacy=legacy,
        freeform=custom,
        forward=forward_fields(body.get(EFFORT), body.get(CACHE_KEY), EFFORT),
    )


def finish_reason(finish: Finish, made_calls: bool, called: str = "tool_calls") -> str:
    """The reply's ``finish_reason``. A length finish wins over the calls: the
    turn gives one with calls only when the last was cut off by the token limit,
    its partial ``arguments`` already written, as OpenAI ends such a reply."""
    if finish.reason in ("length", "max_tokens"):
        return "length"
    if made_calls:
        return called
    return "content_filter" if finish.reason == "content_filter" else "stop"


def error_body(status: int, message: str, kind: str) -> dict[str, Any]:
    """OpenAI's error object."""
    return {
        "error": {
            "message": message,
            "type": _ERROR_TYPES.get(kind, "api_error"),
            "param": None,
            "code": _CODES.get(kind) if status < 500 else kind,
        }
    }


class ChunkEncoder:
    """Encodes one response's events as SSE ``data:`` lines (bytes)."""

    media_type = "text/event-stream"
    called = "tool_calls"  # the finish_reason of a reply with calls

    def __init__(self, model: str, *, include_usage: bool = False) -> None:
        self.id = "chatcmpl-" + _random_id()
        self.model = model
        self.created = int(time.time())
        self.include_usage = include_usage
        self.made_calls = False
        self.opened = False  # the role was sent (with the first delta)
        self.usage = Usage()
        # Every chunk but the last differs only in its delta: its envelope is
        # encoded once, and each chunk costs one small encode (a hot path).
        # (the model name is JSON-escaped, so the marker cannot occur inside it)
        head, tail = self._encode_chunk(None, None).split(b'"delta":null', 1)
        self._head, self._tail = head + b'"delta":', tail

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        if finish is None:
            return self._head + _encode(delta) + self._tail
        return self._encode_chunk(delta, finish)

    def _encode_chunk(self, delta: dict[str, Any] | None, finish: str | None) -> bytes:
        chunk: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if self.include_usage:
            chunk["usage"] = None
        return b"data: " + _encode(chunk) + b"\n\n"

    def start(self) -> bytes:
        # the role goes with the first delta (``_opened``), once the answer's
        # kind is known: OpenAI sends ``content: null`` beside a first call
        return b""

    def _opened(self, delta: dict[str, Any]) -> bytes:
        """The first chunk: the role, with ``content: ""`` before text (its own
        chunk, as OpenAI sends it) or null with a call (which the SDK's
        assembled message keeps: ``""`` there, with calls only, was not what
        OpenAI gives)."""
        self.opened = True
        if "content" in delta:
            return self._chunk({"role": "assistant", "content": ""}) + self._chunk(delta)
        return self._chunk({"role": "assistant", "content": None, **delta})

    def encode(self, event: Event) -> bytes:
        match event:
            case TextDelta(text=text):
                if self.opened:
                    return self._chunk({"content": text})
                return self._opened({"content": text})
            case CallStart(index=index, id=call_id, name=name):
                self.made_calls = True
                function = {"name": name, "arguments": ""}
                call = {"index": index, "id": call_id, "type": "function", "function": function}
                if self.opened:
                    return self._chunk({"tool_calls": [call]})
                return self._opened({"tool_calls": [call]})
            case ArgsDelta(index=index, delta=delta):
                fragment = {"index": index, "function": {"arguments": delta}}
                return self._chunk({"tool_calls": [fragment]})
            case Finish():
                if self.opened:
                    return self._finish(event)
                self.opened = True
                return self._chunk({"role": "assistant", "content": ""}) + self._finish(event)
            case Usage():
                self.usage = event
                return b""
            case ReasoningDelta(text=text):
                fields = reasoning_fields(text)
                return self._chunk(fields) if self.opened else self._opened(fields)
            case _:
                return b""

    def _finish(self, finish: Finish) -> bytes:
        out = self._chunk({}, finish_reason(finish, self.made_calls, self.called))
        if self.include_usage:
            usage = chat_usage(self.usage)
            chunk = {
                "id": self.id,
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": self.model,
                "choices": [],
                "usage": usage,
            }
            out += b"data: " + _encode(chunk) + b"\n\n"
        return out + b"data: [DONE]\n\n"

    def error(self, status: int, message: str, kind: str) -> bytes:
        """A failure after the stream began; the SDK raises it as ``APIError``."""
        return b"data: " + _encode(error_body(status, message, kind)) + b"\n\n"


class LegacyChunkEncoder(ChunkEncoder):
    """A reply to the legacy ``functions``: its one call as ``delta.function_call``
    (the name, then ``arguments`` pieces) and ``finish_reason: "function_call"``,
    as OpenAI's API writes them (a class of its own: no check per chunk)."""

    called = "function_call"

    def encode(self, event: Event) -> bytes:
        match event:
            case CallStart(name=name):
                self.made_calls = True
                delta = {"function_call": {"name": name, "arguments": ""}}
                return self._chunk(delta) if self.opened else self._opened(delta)
            case ArgsDelta(delta=delta):
                return self._chunk({"function_call": {"arguments": delta}})
        return super().encode(event)


def reasoning_fields(text: str) -> dict[str, str]:
    """The model's reasoning as chat completions carry it, in a delta or a
    message: ``reasoning_content`` (DeepSeek's, llama-server's, SGLang's, and the
    field Open WebUI, LobeChat, Cherry Studio and LiteLLM read) and ``reasoning``
    (OpenRouter's, vLLM's since it renamed the field): clients read the one they
    know, or the first of the two; those that know neither ignore both."""
    return {"reasoning_content": text, "reasoning": text}


def _random_id() -> str:
    return secrets.token_hex(12)


def response_body(reply: Reply, model: str, legacy: bool = False) -> dict[str, Any]:
    """A non-streaming ``chat.completion`` with the same content as the stream
    (``legacy``: the call as ``message.function_call``, see ``LegacyChunkEncoder``)."""
    # null only beside calls, as OpenAI writes it (and as the stream assembles)
    content = reply.text or (None if reply.calls else "")
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    if reply.reasoning_parts:
        message.update(reasoning_fields(reply.reasoning))
    if reply.calls and legacy:
        first = reply.calls[0]  # the one call of a legacy reply (``parallel`` off)
        message["function_call"] = {"name": first.name, "arguments": first.arguments}
    elif reply.calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.calls
        ]
    return {
        "id": "chatcmpl-" + _random_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": finish_reason(
                    reply.finish, bool(reply.calls), "function_call" if legacy else "tool_calls"
                ),
            }
        ],
        "usage": chat_usage(reply.usage),
    }


def model_list(listing: Any) -> dict[str, Any]:
    """An Anthropic model list page (``{"data": [{"id", "created_at"}]}``) as
    OpenAI's ``GET /v1/models`` answer: passed through, the openai SDK's
    ``models.list()`` gave models with no ``created`` or ``owned_by``. Raises
    ``ValueError`` for a listing of another shape."""
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list):
        raise ValueError("the upstream's model list has no 'data' array")
    models = [model_object(m) for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]
    return {"object": "list", "data": models}


def model_object(info: Any) -> dict[str, Any]:
    """An Anthropic model (``{"id", "created_at"}``, an entry of the list or the
    answer to ``GET /v1/models/{id}``) as OpenAI's ``Model``. Raises
    ``ValueError`` for a model of another shape."""
    if not isinstance(info, dict) or not isinstance(info.get("id"), str):
        raise ValueError("the upstream's model has no string 'id'")
    return {
        "id": info["id"],
        "object": "model",
        "created": _unix_time(info.get("created_at")),
        "owned_by": "anthropic",
    }


def _unix_time(created_at: Any) -> int:
    """An RFC 3339 time (an Anthropic model's ``created_at``) in Unix seconds; 0
    when there is none."""
    try:
        moment = datetime.fromisoformat(created_at)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return int(moment.timestamp())
    except (TypeError, ValueError, OverflowError, OSError):
        return 0
