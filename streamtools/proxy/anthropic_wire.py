"""The Anthropic Messages wire: request decoding, SSE event and body encoding.

Theory of operation
-------------------
``decode_request`` turns a ``POST /v1/messages`` body into a ``ProxyCall``.
``tool_use`` blocks of assistant turns become ``ToolCall`` entries, each with
its ``offset`` (the length of the text blocks before it, joined as the reply's
text), so a turn of [text, tool_use, text, tool_use] is written back to the
model in that order (consecutive assistant messages are one turn, as the API
combines them); ``tool_result`` blocks of user turns become
``ToolResultMessage`` (the tool's name comes from the ``tool_use`` with the
same id earlier in the same request).
A ``system`` message inside ``messages`` (Claude Code 2.1.154 and later send
them: instructions added mid-conversation, which Anthropic's API accepts)
keeps its place (after the assistant turn it stands in), where
``proxy.upstream.placed_notes`` makes it a note in the user's turn.
``thinking`` blocks are dropped (a plain upstream cannot verify their
signatures); a server tool's blocks (``server_tool_use``, a web search's
``web_search_tool_result``…, as a conversation replayed from Anthropic's API
holds them) are notes the model reads in the turn (``builtin_items``); images
and documents, which the upstream cannot read, are a placeholder the model
reads, in a user's message and in a tool result alike (``request.omitted``;
see ``openai_wire.text_content``), but for a document whose source is text,
which is that text (``request.media_text``), and a ``search_result`` (a tool's
or the user's, text with its source and title),
which is read as its text under them (``_search_result``).
A tool declared by an Anthropic-defined client tool ``type`` (``bash_20250124``,
``text_editor_20250728``, …) gets the input schema Anthropic documents for it
(``client_tools``) and is then served as any custom tool; a tool search tool
(``tool_search_tool_regex_20251119``, which Claude Code sends with
``ENABLE_TOOL_SEARCH``) is left out, since every tool is shown to the model,
``defer_loading`` or not, and a ``tool_reference`` block in a tool result (what
a client's own search found) reads as the tool it names; so is the advisor
(``advisor_20260301``, in every request of Claude Code once an advisor model is
set), which the upstream cannot consult, and a web search (``client_tools``);
another ``type`` is a 400 that names it.

``EventEncoder`` writes the events as Anthropic's SSE stream: ``message_start``;
per content block ``content_block_start`` (``text`` or ``tool_use`` with an
empty ``input``), ``content_block_delta`` (``text_delta`` or
``input_json_delta`` with each arguments fragment as it arrived) and
``content_block_stop``; then ``message_delta`` with the one ``stop_reason``
(``tool_use`` when a call was made) and ``message_stop``. A failure after the
stream began becomes an ``error`` event, which the official SDK raises.

``response_body`` writes the same content as one ``message`` object.

``model_list`` writes an OpenAI-style upstream's model list as Anthropic's
``GET /v1/models`` page, which the anthropic SDK reads, and ``model_info`` one
of its models as the answer to ``GET /v1/models/{model_id}``.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from datetime import UTC, datetime
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
from streamtools.model import ToolChoice, ToolSpec, UseTool
from streamtools.proxy.builtin_items import add_note, block_note
from streamtools.proxy.client_tools import (
    KNOWN,
    LEFT_OUT,
    NO_WEB_SEARCH,
    client_tool,
    unforced,
    web_search_only,
)
from streamtools.proxy.forwarded import anthropic_effort
from streamtools.proxy.request import (
    AssistantTurn,
    ProxyCall,
    Reply,
    RequestError,
    array,
    check_tool_choice,
    media,
    media_text,
    optional_flag,
    optional_number,
    partial_object,
    past_call,
    response_format,
    sampling_options,
    stop_strings,
    tool_spec,
    unique_tools,
)
from streamtools.proxy.usage import anthropic_delta, anthropic_usage
from streamtools.transcript import (
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    Transcript,
    UserMessage,
)

__all__ = [
    "EventEncoder", "decode_request", "error_body", "model_info", "model_list", "response_body",
]

_encode = msgspec.json.Encoder().encode
# the cache counts the API always writes beside input_tokens: clients add the
# three up for the context's size (NaN in JavaScript when one is missing); the
# upstream has not answered when message_start goes out: its estimate is all
# in input_tokens (the upstream's own counts follow in message_delta)
NO_CACHE = {"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}

_ERROR_TYPES = {
    "invalid_request": "invalid_request_error",
    "authentication": "authentication_error",
    "billing": "billing_error",
    "permission": "permission_error",
    "not_found": "not_found_error",
    "too_large": "request_too_large",
    "rate_limit": "rate_limit_error",
    "overloaded": "overloaded_error",
    "timeout": "timeout_error",
    "upstream": "api_error",
    "thread_unsupported": "invalid_request_error",
    "context_length": "invalid_request_error",  # its message says "prompt is too long"
}

# Why a ``thread`` is refused: the answer the anthropic SDK reads to go on
# without one (see ``_no_thread``).
_NO_THREAD = (
    "thread: message threads are not supported (the proxy keeps no state): "
    "send the whole conversation without 'thread'"
)


def _blocks(content: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
        raise RequestError(f"{where}: content must be a string or a list of blocks")
    return content


# A text block's types: the API's, and the Responses API's names for it, which
# some clients (the Claude Agent SDK, by LiteLLM's report) send here too. A
# tuple: a set's ``in`` hashes the value, and a block's type may be any JSON.
_TEXT = ("text", "input_text", "output_text")


def _plain(content: Any, where: str, *, result: bool = False) -> str:
    """Text of a system prompt or a tool result: a string or text blocks, joined
    by a newline; in a ``result`` another block is a placeholder (see
    ``openai_wire.text_content``)."""
    if content is None:
        return ""
    parts: list[str] = []
    for block in _blocks(content, where):
        if block.get("type") in _TEXT and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type") == "tool_reference" and result:  # a tool search found it
            parts.append(f"[tool `{block.get('tool_name')}`: defined in the system prompt]")
        elif block.get("type") == "search_result":
            parts.append(_search_result(block, where))
        elif result or media(block.get("type")):
            parts.append(media_text(block))
        else:
            raise RequestError(
                f"{where}: block of type {block.get('type')!r} is not supported here "
                "(the upstream model reads text only)"
            )
    return "\n".join(parts)


def _search_result(block: dict[str, Any], where: str) -> str:
    """A ``search_result`` block (``source``, ``title`` and text ``content``
    blocks, as a search tool returns them for Claude to cite) as the model reads
    it: its text under a line naming the title and source. It is text: as a
    tool result's block that was not a text block, the model read a placeholder
    saying it could not see it, and the search's findings were lost."""
    content = block.get("content")
    if not isinstance(content, list) or not content:
        raise RequestError(f"{where}: a search_result needs a list of text blocks as 'content'")
    texts = [_text(b, f"{where}.search_result") for b in _blocks(content, where)]
    named = [v for v in (block.get("title"), block.get("source")) if isinstance(v, str) and v]
    head = "[search result: " + ", ".join(named) + "]" if named else "[search result]"
    return head + "\n" + "\n".join(texts)


def _text(block: dict[str, Any], where: str) -> str:
    """A text block's ``text``, a string as the API requires: ``str()`` of it
    gave the model ``None`` for a ``null`` text."""
    text = block.get("text")
    if not isinstance(text, str):
        raise RequestError(f"{where}: a text block needs a string 'text'")
    return text


def _tool_use(call_id: str, name: str, raw: Any, what: str) -> ToolCall:
    """A past ``tool_use`` with its input: an object (absent or null: none), or
    a string, as some clients send it (one converted from OpenAI's format keeps
    the arguments string, JSON or not: ``past_call``). Anything else is a 400, as
    the API answers: dropped, the model would read the call back without the
    arguments it was made with."""
    if raw is None:
        return ToolCall(id=call_id, name=name, arguments={})
    if isinstance(raw, dict):
        return ToolCall(id=call_id, name=name, arguments=raw)
    if isinstance(raw, str):
        return past_call(call_id, name, raw, what)
    raise RequestError(f"{what} must be an object")


# Claude Code's first system line: ``x-anthropic-billing-header: cc_version=…;
# cc_entrypoint=cli; cch=65abc;``, whose ``cch`` changes with every request
_BILLING = re.compile(r"^x-anthropic-billing-header:[^\n]*\n?", re.MULTILINE)


def _system(system: Any) -> str:
    """The top-level ``system`` as the model reads it: its text without Claude
    Code's billing header line, which says nothing to the model (Anthropic's
    API reads it and leaves it out) and changes with every request: first in
    the prompt, it made a local upstream re-read the whole conversation each
    turn (its prompt cache reuses only the tokens before the first change)."""
    text = _plain(system, "system")
    return _BILLING.sub("", text) if "x-anthropic-billing-header:" in text else text


def _messages(raw: Any, system: Any) -> Transcript:
    if not isinstance(raw, list) or not raw:
        raise RequestError("'messages' must be a non-empty array")
    transcript = Transcript()
    if system:
        transcript.add(SystemMessage(content=_system(system)))
    names: dict[str, str] = {}  # tool_use id -> name, from this request only
    # The API combines consecutive turns of one role: an assistant message right
    # after another continues its turn, whose calls the next results answer.
    turn: AssistantTurn | None = None
    held: list[SystemMessage] = []  # instructions inside the turn, for after it
    for i, msg in enumerate(raw):
        where = f"messages[{i}]"
        if isinstance(msg, dict) and msg.get("role") in ("system", "developer"):
            # an instruction in the conversation (Claude Code 2.1.154 and later
            # send them), in its place (``proxy.upstream.placed_notes``); an
            # assistant turn around it goes on, and it follows that turn
            instruction = SystemMessage(content=_plain(msg.get("content"), where))
            (held if turn is not None else transcript.messages).append(instruction)
            continue
        if not isinstance(msg, dict) or msg.get("role") not in ("user", "assistant"):
            raise RequestError(
                f"{where}: expected an object with role 'user', 'assistant' or 'system'"
            )
        blocks = _blocks(msg.get("content"), where)
        if msg["role"] == "assistant":
            turn = turn or AssistantTurn()
            for block in blocks:
                kind = block.get("type")
                if kind in _TEXT:
                    turn.text(_text(block, where))
                elif kind == "tool_use":
                    call_id, name, args = block.get("id"), block.get("name"), block.get("input")
                    if not isinstance(call_id, str) or not isinstance(name, str):
                        raise RequestError(f"{where}: tool_use needs string 'id' and 'name'")
                    # at its offset among the text blocks, so that a text dialect
                    # writes the reply back in the model's order
                    turn.call(_tool_use(call_id, name, args, f"{where}: tool_use.input"))
                    names[call_id] = name
                elif kind not in ("thinking", "redacted_thinking"):
                    text = block_note(block, kind)  # a server tool's block
                    if text is None:
                        raise RequestError(f"{where}: block of type {kind!r} is not supported")
                    if text:
                        add_note(turn, text)
            continue
        if turn is not None:
            transcript.messages += [turn.message(), *held]
            turn = None
            held.clear()
        pending: list[str] = []
        for block in blocks:
            kind = block.get("type")
            if kind in _TEXT:
                pending.append(_text(block, where))
            elif kind == "search_result":
                pending.append(_search_result(block, where))
            elif media(kind):  # see ``openai_wire.text_content``
                pending.append(media_text(block))
            elif kind == "tool_result":
                call_id = block.get("tool_use_id")
                if not isinstance(call_id, str):
                    raise RequestError(f"{where}: tool_result needs 'tool_use_id'")
                content = _plain(block.get("content"), f"{where}.tool_result", result=True)
                transcript.add(
                    ToolResultMessage(
                        call_id=call_id,
                        name=names.get(call_id, "tool"),
                        content=content,
                        is_error=bool(block.get("is_error")),
                    )
                )
            else:
                raise RequestError(
                    f"{where}: block of type {kind!r} is not supported "
                    "(the upstream model reads text only)"
                )
        if pending:
            transcript.add(UserMessage(content="\n".join(pending)))
    if turn is not None:
        transcript.messages += [turn.message(), *held]
    return transcript


def _tools(raw: Any) -> list[ToolSpec]:
    specs: list[ToolSpec] = []
    for i, tool in enumerate(array(raw, "tools")):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise RequestError(f"tools[{i}]: expected an object with a 'name'")
        if tool.get("type") in (None, "custom"):
            specs.append(tool_spec(tool, "input_schema", f"tools[{i}]"))
            continue
        if str(tool.get("type")).startswith(LEFT_OUT):
            continue  # see the module docstring
        known = client_tool(tool)  # one of Anthropic's that the client runs
        if known is not None and not known.name:
            raise RequestError(f"tools[{i}]: a tool needs a non-empty string 'name'")
        if known is None:
            raise RequestError(
                f"tools[{i}]: tool type {tool['type']!r} is not supported: the proxy serves "
                f"custom tools and the Anthropic-defined client tools ({KNOWN}); "
                "a server tool, which Anthropic's API runs, the upstream cannot run"
            )
        specs.append(known)
    return unique_tools(specs, "tools")


def _tool_choice(raw: Any) -> tuple[ToolChoice, bool]:
    """(choice, parallel allowed)."""
    if raw is None:
        return "auto", True
    if not isinstance(raw, dict):
        raise RequestError(f"unsupported tool_choice {raw!r}")
    parallel = not raw.get("disable_parallel_tool_use")
    kind = raw.get("type")
    if kind == "auto" or kind == "none":
        return kind, parallel
    if kind == "any":
        return "required", parallel
    if kind == "tool" and isinstance(raw.get("name"), str):
        return UseTool(raw["name"]), parallel  # even one called "none"
    raise RequestError(f"unsupported tool_choice {raw!r}")


def decode_request(body: Any) -> ProxyCall:
    """Decode a Messages request body (already parsed JSON)."""
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    model, max_tokens = body.get("model"), body.get("max_tokens")
    if not isinstance(model, str):
        raise RequestError("model: Field required")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise RequestError("max_tokens: Field required (a positive integer)")
    _no_thread(body.get("thread"))
    if body.get("mcp_servers"):  # tools the API would run: refused as server tools are
        raise RequestError(
            "mcp_servers is not supported (the upstream cannot reach MCP servers): "
            "connect them in the client and send their tools in 'tools'"
        )
    tools = _tools(body.get("tools"))
    choice, parallel = _tool_choice(unforced(body.get("tool_choice"), body.get("tools")))
    transcript = _messages(body.get("messages"), body.get("system"))
    if web_search_only(body.get("tools")):  # Claude Code's WebSearch (``client_tools``)
        transcript.add(UserMessage(content=NO_WEB_SEARCH))
    return ProxyCall(
        model=model,
        transcript=transcript,
        tools=tools,
        tool_choice=check_tool_choice(choice, tools, "any" if choice == "required" else None),
        stream=optional_flag(body.get("stream"), "stream"),
        include_usage=True,
        temperature=optional_number(body.get("temperature"), "temperature"),
        max_tokens=max_tokens,
        sampling=sampling_options(body, ("top_p", "top_k")),
        stop=stop_strings(body.get("stop_sequences"), "stop_sequences"),
        parallel=parallel,
        response_format=_output_format(body.get("output_config"), body.get("output_format")),
        # with any or tool the API writes no text before the tool_use (clients
        # read content[0] as the call); the text the model wrote then is left out
        preamble=choice in ("auto", "none"),
        thinking=_thinking(body.get("thinking")),
        forward=anthropic_effort(body.get("output_config"), body.get("thinking")),
    )


def _thinking(raw: Any) -> bool:
    """Whether the request enabled thinking (``enabled`` or ``adaptive``): only
    then does the API write thinking blocks, and so does the proxy; not with
    ``display: "omitted"``, where the API's blocks hold no text (only a
    signature, which the proxy has none of)."""
    if not isinstance(raw, dict) or raw.get("display") == "omitted":
        return False
    return raw.get("type") in ("enabled", "adaptive")


def _no_thread(raw: Any) -> None:
    """Refuse a ``thread`` (server-held conversation state: ``create``, then
    ``continue`` with only the new turn's messages). Ignored, the next request's
    tool results arrived without the calls they answer, and without the tools:
    the model answered a conversation it could not read. The refusal carries
    ``details.error_code: "thread_unsupported_request"``, on which the SDK's
    ``tool_runner`` sends that turn and every later one again without a thread,
    with the whole conversation (a ``thread`` helper raises it, as asked)."""
    if raw is not None:
        raise RequestError(_NO_THREAD, kind="thread_unsupported")


def _output_format(raw: Any, deprecated: Any = None) -> dict[str, Any] | None:
    """``output_config.format`` (a JSON schema) in the chat shape of ``ProxyCall``;
    without one, the top-level ``output_format`` that it replaced (anthropic SDKs
    before the rename send it: ignored, their JSON was never asked for)."""
    if raw is not None and not isinstance(raw, dict):
        raise RequestError("output_config must be an object")
    given, where = (raw or {}).get("format"), "output_config.format"
    if given is None:
        given, where = deprecated, "output_format"
    if given is None:
        return None
    if not isinstance(given, dict) or given.get("type") != "json_schema":
        raise RequestError(f"{where} must be an object of type json_schema")
    spec = {"name": "output", "schema": given.get("schema")}
    return response_format({"type": "json_schema", "json_schema": spec}, where)


def stop_reason(finish: Finish, made_calls: bool) -> str:
    """The message's ``stop_reason``. A length finish wins over the calls: the
    turn gives one with calls only when the last was cut off by the token limit,
    and Anthropic ends such a message with its ``tool_use`` block closed (the
    partial input as streamed) and ``max_tokens``."""
    cut = finish.reason in ("length", "max_tokens")
    if made_calls and not cut:
        return "tool_use"
    if finish.stop_sequence is not None:
        return "stop_sequence"
    if finish.reason == "content_filter":
        return "refusal"
    return "max_tokens" if cut else "end_turn"


def error_body(status: int, message: str, kind: str) -> dict[str, Any]:
    """Anthropic's error object (body and ``error`` event data alike)."""
    error: dict[str, Any] = {"type": _ERROR_TYPES.get(kind, "api_error"), "message": message}
    if kind == "thread_unsupported":  # see ``_no_thread``
        error["details"] = {"error_code": "thread_unsupported_request"}
    return {"type": "error", "error": error}


def _event(name: str, data: dict[str, Any]) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + _encode(data) + b"\n\n"


class EventEncoder:
    """Encodes one response's events as Anthropic SSE events (bytes)."""

    media_type = "text/event-stream"

    def __init__(
        self, model: str, *, include_usage: bool = True, input_tokens: int = 0,
        thinking: bool = False,
    ) -> None:
        self.id = "msg_" + secrets.token_hex(12)
        self.model = model
        self.thinking = thinking  # the request enabled thinking: reasoning is written
        self.input_tokens = input_tokens  # for message_start (see ``start``)
        self.block = -1  # index of the last block opened
        self.open: str | None = None  # "text" | "tool_use" | "thinking" | None
        self.made_calls = False
        self.usage = Usage()

    def start(self) -> bytes:
        """``message_start``, whose usage is all that some clients read of the
        input tokens (IDE agents that track a conversation's context so): the
        API writes its count there. The upstream's count comes only with its
        answer, so the proxy's guess at its request goes here
        (``tokens.expected_tokens``), and the upstream's exact count, cumulative, in
        ``message_delta``, which the SDK's accumulator takes over it."""
        message: dict[str, Any] = {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": self.input_tokens, "output_tokens": 0, **NO_CACHE},
        }
        return _event("message_start", {"type": "message_start", "message": message})

    def _open(self, block: dict[str, Any]) -> bytes:
        out = self._close()
        self.block += 1
        self.open = block["type"]
        data = {"type": "content_block_start", "index": self.block, "content_block": block}
        return out + _event("content_block_start", data)

    def _close(self) -> bytes:
        if self.open is None:
            return b""
        # a thinking block ends with its signature, which the SDK's ThinkingBlock
        # holds: empty, as no upstream's reasoning is signed by Anthropic
        out = self._delta(_UNSIGNED) if self.open == "thinking" else b""
        self.open = None
        stop = {"type": "content_block_stop", "index": self.block}
        return out + _event("content_block_stop", stop)

    def _delta(self, delta: dict[str, Any]) -> bytes:
        data = {"type": "content_block_delta", "index": self.block, "delta": delta}
        return _event("content_block_delta", data)

    def encode(self, event: Event) -> bytes:
        match event:
            case TextDelta(text=text):
                out = b"" if self.open == "text" else self._open({"type": "text", "text": ""})
                return out + self._delta({"type": "text_delta", "text": text})
            case CallStart(id=call_id, name=name):
                self.made_calls = True
                return self._open({"type": "tool_use", "id": call_id, "name": name, "input": {}})
            case ArgsDelta(delta=delta):
                return self._delta({"type": "input_json_delta", "partial_json": delta})
            case CallEnd():
                return self._close()
            case Usage():
                self.usage = event
                return b""
            case ReasoningDelta(text=text) if self.thinking:
                out = b"" if self.open == "thinking" else self._open(dict(_THINKING))
                return out + self._delta({"type": "thinking_delta", "thinking": text})
            case Finish():
                reasons: dict[str, str | None] = {
                    "stop_reason": stop_reason(event, self.made_calls),
                    "stop_sequence": None if self.made_calls else event.stop_sequence,
                }
                usage = anthropic_delta(self.usage)
                data = {"type": "message_delta", "delta": reasons, "usage": usage}
                return (
                    self._close()
                    + _event("message_delta", data)
                    + _event("message_stop", {"type": "message_stop"})
                )
            case _:
                return b""

    def error(self, status: int, message: str, kind: str) -> bytes:
        """A failure after the stream began; the SDK raises it as an APIStatusError."""
        return _event("error", error_body(status, message, kind))


# Empty, not a made-up opaque value: Anthropic refuses every signature it did
# not mint, an empty one or a fake alike ("Invalid `signature` in `thinking`
# block", https://github.com/james-6-23/codex2api/pull/613), so a fake helps no
# conversation that moves to its API, and routers in front of it drop the
# thinking blocks whose signature is empty before forwarding (that PR;
# https://github.com/router-for-me/CLIProxyAPI/pull/5242 clears synthetic
# ones to empty), which a fake one would get past. DeepSeek's Anthropic
# endpoint sends empty signatures too (https://github.com/QwenLM/qwen-code/pull/6893).
# Claude Code sends the blocks back; the proxy leaves them out of the prompt.
_THINKING = {"type": "thinking", "thinking": "", "signature": ""}
_UNSIGNED = {"type": "signature_delta", "signature": ""}


def response_body(reply: Reply, model: str, thinking: bool = False) -> dict[str, Any]:
    """A non-streaming ``message`` with the same content as the stream, block
    for block (``thinking``: the request enabled it, and each run of reasoning
    is a block where it came; else text on both sides of it is one block)."""
    content: list[dict[str, Any]] = []
    for kind, part in reply.segments:
        if kind == "call":
            # a call cut by the token limit: what its partial arguments hold
            args = part.input if part.complete else partial_object(part.arguments)
            content.append({"type": "tool_use", "id": part.id, "name": part.name, "input": args})
        elif kind == "reasoning":
            if thinking:
                content.append({**_THINKING, "thinking": "".join(part)})
        elif content and content[-1]["type"] == "text":
            content[-1]["text"] += "".join(part)
        else:
            content.append({"type": "text", "text": "".join(part)})
    made_calls = bool(reply.calls)
    return {
        "id": "msg_" + secrets.token_hex(12),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason(reply.finish, made_calls),
        "stop_sequence": None if made_calls else reply.finish.stop_sequence,
        "usage": anthropic_usage(reply.usage),
    }


def model_list(listing: Any, query: Mapping[str, str]) -> dict[str, Any]:
    """An OpenAI-style model list (``{"data": [{"id", "created"}]}``, as an
    OpenAI-compatible or Ollama upstream answers ``GET /models``) as one page of
    Anthropic's ``GET /v1/models``: passed through, the anthropic SDK's
    ``models.list()`` gave models with no ``type``, ``display_name`` or
    ``created_at``. The page honours ``limit`` (20 by default, at most 1000),
    ``after_id`` and ``before_id`` as the API does, so the SDK's pages by
    ``has_more`` and ``last_id`` list every model once. Raises ``ValueError``
    for a listing of another shape, ``RequestError`` for a bad ``limit``."""
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list):
        raise ValueError("the upstream's model list has no 'data' array")
    models = [model_info(m) for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]
    raw_limit = query.get("limit", "20")
    limit = int(raw_limit) if raw_limit.isdigit() else 0
    if not 1 <= limit <= 1000:
        raise RequestError("limit: must be an integer between 1 and 1000")
    ids = [m["id"] for m in models]
    start, end = 0, len(models)
    if "after_id" in query:
        start = ids.index(query["after_id"]) + 1 if query["after_id"] in ids else end
    if "before_id" in query:
        end = ids.index(query["before_id"]) if query["before_id"] in ids else start
    if "before_id" in query and "after_id" not in query:  # the page just before the cursor
        page, has_more = models[max(start, end - limit) : end], end - limit > start
    else:
        page, has_more = models[start : start + limit], start + limit < end
    return {
        "data": page,
        "has_more": has_more,
        "first_id": page[0]["id"] if page else None,
        "last_id": page[-1]["id"] if page else None,
    }


def model_info(model: Any) -> dict[str, Any]:
    """An OpenAI-style model (``{"id", "created"}``, an entry of the list or the
    answer to ``GET /models/{id}``) as Anthropic's ``ModelInfo``. Raises
    ``ValueError`` for a model of another shape."""
    if not isinstance(model, dict) or not isinstance(model.get("id"), str):
        raise ValueError("the upstream's model has no string 'id'")
    return {
        "type": "model",
        "id": model["id"],
        "display_name": model["id"],
        "created_at": _rfc3339(model.get("created")),
    }


def _rfc3339(created: Any) -> str:
    """A Unix time in seconds (an OpenAI model's ``created``) as Anthropic's
    ``created_at``; the epoch when there is none."""
    seconds = created if isinstance(created, int) and not isinstance(created, bool) else 0
    try:
        moment = datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        moment = datetime.fromtimestamp(0, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
