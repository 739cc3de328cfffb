"""The OpenAI Responses wire: request decoding, event and body encoding.

Theory of operation
-------------------
``decode_request`` turns a ``POST /v1/responses`` body into a ``ProxyCall``.
``instructions`` become the system message; ``input`` is a string (one user
message) or a list of items: messages of any role, ``function_call`` items
(consecutive ones, a ``function_call`` right after an assistant message, and an
assistant message right after a turn's calls, before their outputs, form one
assistant turn, each call at its ``offset`` into the turn's joined text, so
that interleaved text and calls are written back in order) and
``function_call_output`` items, paired by ``call_id`` as the chat wire pairs
``tool_call_id``. Built-in tools' items (a ``web_search_call``, a shell
command's output, ``reasoning``) are notes the model reads, or are left out
(``builtin_items``). Function tools are flat (``{"type": "function", "name",
"parameters"}``). A ``custom`` tool (raw
text input, such as Codex's ``apply_patch``) is shown to the model as a tool
with one string parameter, ``input``, described with the tool's grammar; its
calls go back as ``custom_tool_call`` items carrying that text, and
``custom_tool_call`` / ``custom_tool_call_output`` input items are read the
same way. Tools come from ``tools`` and from ``additional_tools`` input items
(where Codex 0.144 and later declares them); a ``namespace`` tool's members are
shown to the model as ``namespace.name``, and their calls go back with the
bare ``name`` and the ``namespace``, as OpenAI writes them (``_Tools``,
``_named``); history items carrying a ``namespace`` are read the same way.
Built-in tools (``web_search``, ``file_search``…) are left out: the upstream
model cannot run them, and clients such as Codex send ``web_search`` by
default. Stored state (``previous_response_id``, ``conversation``,
``item_reference``, a stored ``prompt``) and non-text content are refused
with a 400: the proxy is stateless and the upstream reads text.

``EventEncoder`` writes the turn's events as the Responses stream does:
``response.created`` and ``response.in_progress``; for text, a ``message``
output item (``output_item.added``, ``content_part.added``, then
``output_text.delta`` per fragment, closed by ``output_text.done``,
``content_part.done`` and ``output_item.done``); for each call a
``function_call`` item (``output_item.added`` with the name and empty
arguments, ``function_call_arguments.delta`` per fragment as the upstream
produced it, ``function_call_arguments.done`` and ``output_item.done``; a
custom tool's ``custom_tool_call`` item streams its text, decoded from the
arguments as they arrive (``freeform.RawInput``), as
``custom_tool_call_input.delta``); for the model's reasoning a ``reasoning``
item whose content is the text (``reasoning_text.delta``, ``.done``; its
``summary`` empty: the text is the reasoning, not a summary of it), which
Codex shows with ``show_raw_agent_reasoning``; and one terminal event,
``response.completed`` (or ``response.incomplete`` when the upstream hit its
token limit before any call), carrying the whole response with its usage.
Every event has the next ``sequence_number``. A failure after the stream
began is an ``error`` event followed by ``response.failed``, its
``code`` the Responses API's where it has one (``_CODES``): Codex reads only
the code (a wait from a ``rate_limit_exceeded``, a stop at ``insufficient_quota``).

``response_body`` writes the same content as one ``response`` object. Errors
before the stream are OpenAI's error object (``openai_wire.error_body``).
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import msgspec

from streamtools.events import (
    ArgsDelta,
    CallEnd,
    CallStart,
    Event,
    Finish,
    ReasoningDelta,
    TextDelta,
    Usage,
)
from streamtools.model import ToolChoice, ToolSpec, UseTool, keyword_choice
from streamtools.proxy.builtin_items import COMPACTION, add_note, note, reasoning_item
from streamtools.proxy.freeform import RawInput, freeform_spec, freeform_text
from streamtools.proxy.openai_wire import error_body, text_content
from streamtools.proxy.request import (
    AssistantTurn,
    ProxyCall,
    Reply,
    RequestError,
    allowed_tools,
    array,
    check_tool_choice,
    optional_flag,
    optional_number,
    optional_switch,
    optional_text,
    past_call,
    refuse_logprobs,
    response_format,
    sampling_options,
    token_limit,
    tool_spec,
)
from streamtools.proxy.usage import responses_usage
from streamtools.transcript import (
    Message,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    Transcript,
    UserMessage,
)

__all__ = ["EventEncoder", "decode_request", "error_body", "response_body"]

_encode = msgspec.json.Encoder().encode
# a failure's code in the stream by its kind (the API's ResponseError codes),
# else the chat error's type
_CODES = {
    "rate_limit": "rate_limit_exceeded",
    "billing": "insufficient_quota",
    **dict.fromkeys(("overloaded", "timeout", "upstream", "internal"), "server_error"),
    "context_length": "context_length_exceeded",  # Codex compacts its history on it
}
_STATELESS = "the proxy keeps no state: send the whole conversation as 'input'"


def _id(prefix: str) -> str:
    return prefix + secrets.token_hex(12)


# -- the request -------------------------------------------------------------------


def _qualified(name: str, namespace: Any, where: str) -> str:
    """The name the model is shown for a tool (or a call of it) in ``namespace``."""
    if namespace is None:
        return name
    if not isinstance(namespace, str) or not namespace:
        raise RequestError(f"{where}: namespace must be a non-empty string")
    return f"{namespace}.{name}"


def _function_call(item: dict[str, Any], where: str) -> ToolCall:
    name, call_id = item.get("name"), item.get("call_id")
    if not isinstance(name, str) or not isinstance(call_id, str):
        raise RequestError(f"{where}: a function_call needs string 'call_id' and 'name'")
    name = _qualified(name, item.get("namespace"), where)
    return past_call(call_id, name, item.get("arguments", ""), f"{where}: arguments")


def _custom_call(item: dict[str, Any], where: str) -> ToolCall:
    name, call_id, text = item.get("name"), item.get("call_id"), item.get("input")
    if not isinstance(name, str) or not isinstance(call_id, str) or not isinstance(text, str):
        raise RequestError(f"{where}: a custom_tool_call needs string 'call_id', 'name', 'input'")
    name = _qualified(name, item.get("namespace"), where)
    return ToolCall(id=call_id, name=name, arguments={"input": text})


class _Tools:
    """The tools of one request, from its ``tools`` and from any ``additional_tools``
    input items (where Codex declares its tools): ``function`` and ``custom`` tools,
    those inside a ``namespace`` shown as ``namespace.name``. Built-in tools
    (``web_search``, ``file_search``…) are left out: the upstream model cannot run
    them, so it is not told of them. A name declared twice in one list is a 400
    (``request.unique_tools``); one that a later list (another
    ``additional_tools`` item) declares again counts once. Names are looked up
    in sets: a scan of the list per tool took seconds for 20k tools, while the
    event loop served no other stream."""

    def __init__(self) -> None:
        self.specs: list[ToolSpec] = []
        self._names: set[str] = set()
        self.freeform: list[str] = []  # custom tools: their input is raw text
        self.namespaces: dict[str, str] = {}

    def add(self, raw: Any, where: str, namespace: str | None = None) -> None:
        listed: set[str] = set()  # the names of this list
        for i, tool in enumerate(array(raw, where)):
            at = f"{where}[{i}]"
            kind = tool.get("type") if isinstance(tool, dict) else None
            if kind == "namespace" and namespace is None:
                assert isinstance(tool, dict)
                name = tool.get("name")
                if not isinstance(name, str) or not name:
                    raise RequestError(f"{at}: a namespace needs a string 'name'")
                self.add(tool.get("tools"), f"{at}.tools", name)
            elif kind == "function" or kind == "custom":
                assert isinstance(tool, dict)
                custom = kind == "custom"
                spec = freeform_spec(tool, at) if custom else tool_spec(tool, "parameters", at)
                name = _qualified(spec.name, namespace, at)
                if name in listed:
                    raise RequestError(
                        f"{at}: tool names must be unique: {spec.name!r} is declared twice"
                    )
                listed.add(name)
                if name in self._names:
                    continue
                self._names.add(name)
                self.specs.append(msgspec.structs.replace(spec, name=name))
                if namespace is not None:
                    self.namespaces[name] = namespace
                if custom:
                    self.freeform.append(name)
            elif isinstance(kind, str) and namespace is None:
                continue  # a built-in tool: left out
            else:
                inside = f" inside namespace {namespace!r}" if namespace else ""
                raise RequestError(
                    f"{at}: expected a function, custom or namespace tool{inside}, not {kind!r}"
                )


def _input(raw: Any, instructions: Any, tools: _Tools) -> Transcript:
    transcript = Transcript()
    system = optional_text(instructions, "instructions")
    if system:
        transcript.add(SystemMessage(content=system))
    if isinstance(raw, str):
        if not raw:
            raise RequestError("'input' must not be empty")
        transcript.add(UserMessage(content=raw))
        return transcript
    items = array(raw, "input")
    if not items:
        raise RequestError("'input' must be a string or a non-empty array")
    names: dict[str, str] = {}  # call id -> tool name, from this request only
    turn: AssistantTurn | None = None  # the assistant turn being read (module docstring)
    noted = False  # it holds a note of a built-in tool's item

    def add(message: Message) -> None:
        nonlocal turn, noted
        if turn is not None:  # a message of another role ends the turn
            transcript.add(turn.message())
            turn, noted = None, False
        transcript.add(message)

    for i, item in enumerate(items):
        where = f"input[{i}]"
        if not isinstance(item, dict):
            raise RequestError(f"{where} must be an object")
        kind = item.get("type", "message")
        if kind == "message":
            role, text = item.get("role"), text_content(item.get("content"), where)
            if role in ("system", "developer"):
                add(SystemMessage(content=text))
            elif role == "user":
                add(UserMessage(content=text))
            elif role == "assistant":
                # text after the turn's calls (or notes), before their outputs, is
                # the same turn; text after text is a turn of its own
                if turn is None or not (turn.calls or noted):
                    if turn is not None:
                        transcript.add(turn.message())
                    turn = AssistantTurn()
                turn.text(text)
                noted = False
            else:
                raise RequestError(f"{where}: unsupported role {role!r}")
        elif kind in ("function_call", "custom_tool_call"):
            call = (_function_call if kind == "function_call" else _custom_call)(item, where)
            names[call.id] = call.name
            # after the turn's text; a turn that opens with a call: before any text
            turn = turn or AssistantTurn()
            turn.call(call)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            call_id = item.get("call_id")
            if not isinstance(call_id, str):
                raise RequestError(f"{where}: a {kind} needs 'call_id'")
            content = text_content(item.get("output"), where, result=True)
            name = names.get(call_id, "tool")
            add(ToolResultMessage(call_id=call_id, name=name, content=content))
        elif kind in ("additional_tools", "tool_search_output"):
            tools.add(item.get("tools"), f"{where}.tools")  # Codex declares its tools here
        elif kind == COMPACTION:  # where the history it stands for began
            add(UserMessage(content=note(item, kind, where)))
        elif text := note(item, kind, where):  # a built-in tool's item (builtin_items)
            turn, noted = turn or AssistantTurn(), True
            add_note(turn, text)
    if turn is not None:
        transcript.add(turn.message())
    return transcript


def _tool_choice(raw: Any) -> ToolChoice:
    if raw is None:
        return "auto"
    keyword = keyword_choice(raw)
    if keyword is not None:
        return keyword
    named = isinstance(raw, dict) and raw.get("type") in ("function", "custom")
    if named and isinstance(raw.get("name"), str):  # even one called "none"
        return UseTool(_qualified(str(raw["name"]), raw.get("namespace"), "tool_choice"))
    raise RequestError(f"unsupported tool_choice {raw!r}")


def _allowed(raw: Any) -> tuple[Any, list[str]] | None:
    """An ``allowed_tools`` tool_choice as (mode, names), else None. Built-in
    tools among those it allows are left out, as they are from ``tools``."""
    if not isinstance(raw, dict) or raw.get("type") != "allowed_tools":
        return None
    names: list[str] = []
    for i, tool in enumerate(array(raw.get("tools"), "tool_choice.tools")):
        where = f"tool_choice.tools[{i}]"
        kind = tool.get("type") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or not isinstance(kind, str):
            raise RequestError(f"{where}: expected a tool object with a 'type'")
        if kind in ("function", "custom"):
            if not isinstance(tool.get("name"), str):
                raise RequestError(f"{where}: a {kind} tool needs a string 'name'")
            names.append(_qualified(tool["name"], tool.get("namespace"), where))
    return raw.get("mode"), names


def decode_request(body: Any) -> ProxyCall:
    """Decode a Responses request body (already parsed JSON)."""
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str):
        raise RequestError("'model' is required")
    # a stored prompt (``prompt: {"id": "pmpt_…"}``) is state too: ignored, the
    # model got none of its instructions
    for stored in ("previous_response_id", "conversation", "prompt"):
        if body.get(stored) is not None:
            raise RequestError(f"{stored} is not supported ({_STATELESS})")
    include = array(body.get("include"), "include")
    asked = body.get("top_logprobs") not in (None, 0) or "message.output_text.logprobs" in include
    refuse_logprobs(asked, "logprobs (top_logprobs, include message.output_text.logprobs)")
    tools = _Tools()
    tools.add(body.get("tools"), "tools")
    instructions = body.get("instructions")  # a string (``_input`` checks it), echoed
    transcript = _input(body.get("input"), instructions, tools)
    max_tokens = token_limit(body.get("max_output_tokens"), "max_output_tokens")
    allowed = _allowed(body.get("tool_choice"))
    if allowed is None:
        choice = check_tool_choice(_tool_choice(body.get("tool_choice")), tools.specs)
    else:
        choice = allowed_tools(*allowed, tools.specs)
    return ProxyCall(
        model=model,
        transcript=transcript,
        tools=tools.specs,
        tool_choice=choice,
        allowed=None if allowed is None else allowed[1],
        stream=optional_flag(body.get("stream"), "stream"),
        include_usage=True,
        temperature=optional_number(body.get("temperature"), "temperature"),
        max_tokens=max_tokens,
        sampling=sampling_options(body, ("top_p",)),
        parallel=optional_switch(body.get("parallel_tool_calls"), "parallel_tool_calls", True),
        freeform=tools.freeform,
        namespaces=tools.namespaces,
        response_format=_text_format(body.get("text")),
        instructions=instructions,
    )


def _text_format(raw: Any) -> dict[str, Any] | None:
    """``text.format`` in the chat shape: the Responses API writes a JSON schema's
    ``name``, ``schema``, ``strict`` and ``description`` beside its ``type``."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise RequestError("text must be an object")
    given = raw.get("format")
    if isinstance(given, dict) and given.get("type") == "json_schema":
        spec = {k: v for k, v in given.items() if k != "type"}
        given = {"type": "json_schema", "json_schema": spec}
    return response_format(given, "text.format")


# -- the response --------------------------------------------------------------------


def _status(finish: Finish, made_calls: bool) -> tuple[str, dict[str, str] | None]:
    """The response's status and ``incomplete_details``: a token limit hit
    leaves the answer incomplete, as OpenAI reports it (the turn gives a length
    finish with calls only when the last one was cut off, its item then
    ``incomplete`` too)."""
    if finish.reason in ("length", "max_tokens"):
        return "incomplete", {"reason": "max_output_tokens"}
    if not made_calls and finish.reason == "content_filter":
        return "incomplete", {"reason": "content_filter"}
    return "completed", None


def _named(name: str, namespaces: dict[str, str]) -> dict[str, str]:
    """A tool's ``name`` as the client declared it, and its ``namespace`` if it
    had one (the model was shown ``namespace.name``)."""
    namespace = namespaces.get(name)
    if namespace is None:
        return {"name": name}
    return {"name": name[len(namespace) + 1 :], "namespace": namespace}


def _declared_tools(call: ProxyCall) -> list[dict[str, Any]]:
    """The request's tools as the response object echoes them: namespaced ones in
    their namespace again."""
    out: list[dict[str, Any]] = []
    groups: dict[str, list[dict[str, Any]]] = {}
    freeform = frozenset(call.freeform)
    for t in call.tools:
        named = _named(t.name, call.namespaces)
        tool: dict[str, Any] = (
            {"type": "custom", "name": named["name"], "description": t.description}
            if t.name in freeform
            else {
                "type": "function",
                "name": named["name"],
                "description": t.description,
                "parameters": t.parameters,
                "strict": False,
            }
        )
        namespace = named.get("namespace")
        if namespace is None:
            out.append(tool)
        elif namespace in groups:
            groups[namespace].append(tool)
        else:
            members = groups[namespace] = [tool]
            out.append({"type": "namespace", "name": namespace, "tools": members})
    return out


def _response(call: ProxyCall, response_id: str, created: int) -> dict[str, Any]:
    """The response object, in progress: what every terminal state starts from."""
    choice: Any = call.tool_choice
    if isinstance(choice, UseTool):
        kind = "custom" if choice.name in call.freeform else "function"
        choice = {"type": kind, **_named(choice.name, call.namespaces)}
    elif call.allowed is not None:
        allowed = [
            {"type": "custom" if n in call.freeform else "function", **_named(n, call.namespaces)}
            for n in call.allowed
        ]
        choice = {"type": "allowed_tools", "mode": choice, "tools": allowed}
    return {
        "id": response_id,
        "object": "response",
        "created_at": created,
        "status": "in_progress",
        "error": None,
        "incomplete_details": None,
        "instructions": call.instructions,  # echoed, as OpenAI does
        "max_output_tokens": call.max_tokens,
        "model": call.model,
        "output": [],
        "parallel_tool_calls": call.parallel,
        "temperature": call.temperature,
        "tool_choice": choice,
        "tools": _declared_tools(call),
        "top_p": call.sampling.get("top_p"),
        "usage": None,
        "metadata": {},
    }


def _message(item_id: str, text: str, status: str) -> dict[str, Any]:
    part = {"type": "output_text", "text": text, "annotations": []}
    content = [part] if status == "completed" else []
    return {
        "id": item_id,
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": content,
    }


def _function_call_item(
    item_id: str, call_id: str, named: dict[str, str], arguments: str, status: str
) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "function_call",
        "status": status,
        "call_id": call_id,
        **named,  # the name, and the namespace of a namespaced tool
        "arguments": arguments,
    }


def _custom_call_item(
    item_id: str, call_id: str, named: dict[str, str], text: str
) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "custom_tool_call",
        "call_id": call_id,
        **named,
        "input": text,
    }


class EventEncoder:
    """Encodes one response's events as Responses SSE events (bytes)."""

    media_type = "text/event-stream"

    def __init__(self, call: ProxyCall) -> None:
        self.response = _response(call, _id("resp_"), int(time.time()))
        self.sequence = 0
        self.output: list[dict[str, Any]] = []  # finished items, for the last event
        self.item: dict[str, Any] | None = None  # the item being written
        self.parts: list[str] = []  # its text or arguments so far
        self.made_calls = False
        self.usage = Usage()
        self.freeform = frozenset(call.freeform)
        self.namespaces = call.namespaces
        self.raw = RawInput()  # a custom tool's text, decoded as its arguments arrive

    def _event(self, kind: str, data: dict[str, Any]) -> bytes:
        data = {"type": kind, **data, "sequence_number": self.sequence}
        self.sequence += 1
        return b"event: " + kind.encode() + b"\ndata: " + _encode(data) + b"\n\n"

    def start(self) -> bytes:
        response = self.response
        return self._event("response.created", {"response": response}) + self._event(
            "response.in_progress", {"response": response}
        )

    def _where(self) -> dict[str, Any]:
        assert self.item is not None
        return {"item_id": self.item["id"], "output_index": len(self.output)}

    def _open(self, item: dict[str, Any]) -> bytes:
        out = self._close()
        self.item, self.parts = item, []
        out += self._event(
            "response.output_item.added", {"output_index": len(self.output), "item": item}
        )
        if item["type"] == "message":
            part = {"type": "output_text", "text": "", "annotations": []}
            out += self._event(
                "response.content_part.added", {**self._where(), "content_index": 0, "part": part}
            )
        return out

    def _snapshot(self, item: dict[str, Any], status: str) -> dict[str, Any]:
        """The open ``item`` as written so far, with ``status``."""
        text = "".join(self.parts)
        if item["type"] == "message":
            done = _message(item["id"], text, "completed")
            done["status"] = status
            return done
        if item["type"] == "custom_tool_call":
            return {**item, "input": text}
        if item["type"] == "reasoning":
            return reasoning_item(item["id"], text, status)
        return {**item, "arguments": text, "status": status}

    def _close(self, status: str = "completed") -> bytes:
        """The open item's closing events; ``status`` ``incomplete`` for an item
        the token limit cut off (a function call's partial ``arguments``)."""
        item = self.item
        if item is None:
            return b""
        where, text = self._where(), "".join(self.parts)
        done = self._snapshot(item, status)
        if item["type"] == "message":
            out = self._event(
                "response.output_text.done",
                {**where, "content_index": 0, "text": text, "logprobs": []},
            )
            out += self._event(
                "response.content_part.done",
                {**where, "content_index": 0, "part": done["content"][0]},
            )
        elif item["type"] == "custom_tool_call":
            out = self._event("response.custom_tool_call_input.done", {**where, "input": text})
        elif item["type"] == "reasoning":
            reasoned = {**where, "content_index": 0, "text": text}
            out = self._event("response.reasoning_text.done", reasoned)
        else:
            out = self._event(
                "response.function_call_arguments.done",
                {**where, "arguments": text},
            )
        out += self._event(
            "response.output_item.done", {"output_index": where["output_index"], "item": done}
        )
        self.output.append(done)
        self.item = None
        return out

    def encode(self, event: Event) -> bytes:
        match event:
            case TextDelta(text=text):
                item = self.item
                out = b""
                if item is None or item["type"] != "message":
                    out = self._open(_message(_id("msg_"), "", "in_progress"))
                self.parts.append(text)
                return out + self._event(
                    "response.output_text.delta",
                    {**self._where(), "content_index": 0, "delta": text, "logprobs": []},
                )
            case CallStart(id=call_id, name=name):
                self.made_calls = True
                named = _named(name, self.namespaces)
                if name in self.freeform:
                    self.raw = RawInput()
                    return self._open(_custom_call_item(_id("ctc_"), call_id, named, ""))
                item = _function_call_item(_id("fc_"), call_id, named, "", "in_progress")
                return self._open(item)
            case ArgsDelta(delta=delta):
                if self.item is not None and self.item["type"] == "custom_tool_call":
                    return self._input_delta(self.raw.feed(delta))
                self.parts.append(delta)
                return self._event(
                    "response.function_call_arguments.delta", {**self._where(), "delta": delta}
                )
            case CallEnd(arguments=arguments):
                out = b""
                if self.item is not None and self.item["type"] == "custom_tool_call":
                    # the rest of the text (all of it, for arguments of another shape)
                    text, given = freeform_text(arguments), "".join(self.parts)
                    if text.startswith(given):
                        out = self._input_delta(text[len(given) :])
                    self.parts = [text]
                return out + self._close()
            case Usage():
                self.usage = event
                return b""
            case ReasoningDelta(text=text):
                out = b""
                if self.item is None or self.item["type"] != "reasoning":
                    out = self._open(reasoning_item(_id("rs_"), "", "in_progress"))
                self.parts.append(text)
                piece = {**self._where(), "content_index": 0, "delta": text}
                return out + self._event("response.reasoning_text.delta", piece)
            case Finish():
                status, details = _status(event, self.made_calls)
                out = self._close(status)
                response = {
                    **self.response,
                    "status": status,
                    "incomplete_details": details,
                    "output": self.output,
                    "usage": responses_usage(self.usage),
                }
                kind = "response.completed" if status == "completed" else "response.incomplete"
                return out + self._event(kind, {"response": response})
            case _:
                return b""

    def _input_delta(self, text: str) -> bytes:
        if not text:
            return b""
        self.parts.append(text)
        return self._event(
            "response.custom_tool_call_input.delta", {**self._where(), "delta": text}
        )

    def error(self, status: int, message: str, kind: str) -> bytes:
        """A failure after the stream began: an ``error`` event, then
        ``response.failed`` with the output so far, as the API lists it: the
        item being written too, ``incomplete`` with what it had (it was left
        out, so text already streamed was missing from the failed response)."""
        code = _CODES.get(kind) or error_body(status, message, kind)["error"]["type"]
        out = self._event("error", {"code": code, "message": message, "param": None})
        output = list(self.output)
        if self.item is not None:
            output.append(self._snapshot(self.item, "incomplete"))
        response = {
            **self.response,
            "status": "failed",
            "error": {"code": code, "message": message},
            "output": output,
        }
        return out + self._event("response.failed", {"response": response})


def response_body(reply: Reply, call: ProxyCall) -> dict[str, Any]:
    """A non-streaming ``response`` with the same content as the stream."""
    output: list[dict[str, Any]] = []
    status, details = _status(reply.finish, bool(reply.calls))
    if reply.reasoning_parts:  # cut off with the response when nothing came after it
        done = status if not reply.text and not reply.calls else "completed"
        output.append(reasoning_item(_id("rs_"), reply.reasoning, done))
    if reply.text:
        output.append(_message(_id("msg_"), reply.text, "completed"))
        if not reply.calls:  # the last item: cut off with the response, as streamed
            output[-1]["status"] = status
    for c in reply.calls:
        named = _named(c.name, call.namespaces)
        if c.name in call.freeform:
            # a call cut by the token limit: its text so far, as the stream gives it
            text = freeform_text(c.input) if c.complete else RawInput().feed(c.arguments)
            output.append(_custom_call_item(_id("ctc_"), c.id, named, text))
        else:
            done = "completed" if c.complete else status
            output.append(_function_call_item(_id("fc_"), c.id, named, c.arguments, done))
    return {
        **_response(call, _id("resp_"), int(time.time())),
        "status": status,
        "incomplete_details": details,
        "output": output,
        "usage": responses_usage(reply.usage),
    }
