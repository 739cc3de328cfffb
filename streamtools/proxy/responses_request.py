"""The OpenAI Responses wire's request decoding (``responses_wire`` exports it).

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
bare ``name`` and the ``namespace``, as OpenAI writes them (``_Tools`` here,
``responses_wire._named``); history items carrying a ``namespace`` are read the same way.
Built-in tools (``web_search``, ``file_search``…) are left out: the upstream
model cannot run them, and clients such as Codex send ``web_search`` by
default. Stored state (``previous_response_id``, ``conversation``,
``item_reference``, a stored ``prompt``) and non-text content are refused
with a 400: the proxy is stateless and the upstream reads text.
"""

from __future__ import annotations

from typing import Any

import msgspec

from streamtools.model import ToolChoice, ToolSpec, UseTool, keyword_choice
from streamtools.proxy.builtin_items import COMPACTION, add_note, note
from streamtools.proxy.forwarded import CACHE_KEY, forward_fields
from streamtools.proxy.freeform import freeform_spec
from streamtools.proxy.openai_wire import text_content
from streamtools.proxy.request import (
    AssistantTurn,
    ProxyCall,
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
from streamtools.transcript import (
    Message,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    Transcript,
    UserMessage,
)

__all__ = ["decode_request"]

_STATELESS = "the proxy keeps no state: send the whole conversation as 'input'"


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
    if raw is None or raw == "" or raw == []:
        # instructions alone (clients send them so: openclaw/openclaw#74558, Fabric
        # through decolua/9router#419): the request is the instructions (``upstream``)
        if not system:
            raise RequestError("'input' is empty and there are no 'instructions' to answer")
        return transcript
    if isinstance(raw, str):
        transcript.add(UserMessage(content=raw))
        return transcript
    items = array(raw, "input")
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
        forward=_forward(body),
    )


def _forward(body: dict[str, Any]) -> dict[str, Any]:
    """``reasoning.effort`` and ``prompt_cache_key``, to forward (``forwarded``)."""
    raw = body.get("reasoning")
    if raw is not None and not isinstance(raw, dict):
        raise RequestError("reasoning must be an object")
    effort = None if raw is None else raw.get("effort")
    return forward_fields(effort, body.get(CACHE_KEY), "reasoning.effort")


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
