"""The OpenAI Responses wire: event and body encoding, and the request decoder.

Theory of operation
-------------------
``decode_request`` turns a ``POST /v1/responses`` body into a ``ProxyCall``;
it lives in ``responses_request`` (which says how input items and tools are
read) and is exported here with the encoders, so that the wire is one module
to its callers.

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
from streamtools.model import UseTool
from streamtools.proxy.builtin_items import reasoning_item
from streamtools.proxy.freeform import RawInput, freeform_text
from streamtools.proxy.openai_wire import error_body
from streamtools.proxy.request import ProxyCall, Reply
from streamtools.proxy.responses_request import decode_request
from streamtools.proxy.usage import responses_usage

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


def _id(prefix: str) -> str:
    return prefix + secrets.token_hex(12)


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
    last = len(reply.segments) - 1
    for at, (kind, part) in enumerate(reply.segments):
        # the last item is cut off with the response, as streamed
        done = status if at == last else "completed"
        if kind == "reasoning":
            output.append(reasoning_item(_id("rs_"), "".join(part), done))
        elif kind == "text":
            output.append(_message(_id("msg_"), "".join(part), "completed"))
            output[-1]["status"] = done
        elif part.name in call.freeform:
            # a call cut by the token limit: its text so far, as the stream gives it
            named = _named(part.name, call.namespaces)
            text = freeform_text(part.input) if part.complete else RawInput().feed(part.arguments)
            output.append(_custom_call_item(_id("ctc_"), part.id, named, text))
        else:
            named = _named(part.name, call.namespaces)
            done = "completed" if part.complete else status
            output.append(_function_call_item(_id("fc_"), part.id, named, part.arguments, done))
    return {
        **_response(call, _id("resp_"), int(time.time())),
        "status": status,
        "incomplete_details": details,
        "output": output,
        "usage": responses_usage(reply.usage),
    }
