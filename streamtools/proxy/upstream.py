"""What goes upstream for one proxied request: its messages, stop and options.

Theory of operation
-------------------
``upstream_request`` projects the request's transcript for the dialect
(``prompts.project``): the tools the model may call become the dialect's
system prompt, past calls and results become text, and a forced
``tool_choice`` or a JSON ``response_format`` is said in words after the
conversation (``turn`` re-prompts with the same function, and the proxy's
token count counts what it builds).
"""

from __future__ import annotations

from typing import Any

import msgspec

from streamtools.model import ModelRequest, ToolSpec, UseTool
from streamtools.parser import DIALECTS
from streamtools.prompts import project
from streamtools.prompts.choice import choice_instruction
from streamtools.providers.bodies import json_schema_of
from streamtools.proxy.request import ProxyCall, forwarded_format
from streamtools.transcript import AssistantMessage, Transcript, UserMessage

__all__ = ["format_instruction", "shown_tools", "upstream_request"]


def format_instruction(response_format: dict[str, Any] | None) -> str | None:
    """What a model that may call tools is told about the client's
    ``response_format`` (see ``proxy.turn``'s module docstring)."""
    if response_format is None:
        return None
    start = "When you answer without calling a tool, the answer must be"
    schema = json_schema_of(response_format)  # checked when the request was decoded
    if schema is None:
        return f"{start} one JSON object and nothing else."
    text = msgspec.json.encode(schema).decode()
    return f"{start} one JSON value that matches this JSON Schema, and nothing else: {text}"


def shown_tools(call: ProxyCall) -> list[ToolSpec]:
    """The tools the model is shown: all of them, only the one a named
    ``tool_choice`` names, only those an ``allowed_tools`` choice allows, or
    none for ``none``."""
    choice = call.tool_choice
    if isinstance(choice, UseTool):
        return [t for t in call.tools if t.name == choice.name]
    if choice == "none":
        return []
    if call.allowed is not None:
        allowed = set(call.allowed)  # not the list: a scan per tool is quadratic
        return [t for t in call.tools if t.name in allowed]
    return list(call.tools)


def upstream_request(
    call: ProxyCall, dialect: str, transcript: Transcript | None = None
) -> ModelRequest:
    """What goes upstream for ``call``: its transcript (or ``transcript``, a
    repair's) projected for ``dialect`` with the tools the model may call
    (a named ``tool_choice`` shows only that one, ``none`` shows none) and the
    instructions above, and the dialect's stop marker when the client allows
    one call per reply (the client's stop strings are applied by the parser,
    see ``proxy.turn``)."""
    tools = shown_tools(call)
    instructions = [choice_instruction(call.tool_choice)]
    if tools:  # then the format does not go upstream (``forwarded_format``): say it
        instructions.append(format_instruction(call.response_format))
    transcript = call.transcript if transcript is None else transcript
    told = " ".join(text for text in instructions if text)
    if told:
        # Last, where it weighs most: project merges it into the final user message.
        # Before a prefill (a last assistant message without calls, which the model
        # is to go on from): after it, the prefill became a finished turn.
        messages = [*transcript.messages]
        last = messages[-1] if messages else None
        at = -1 if isinstance(last, AssistantMessage) and not last.calls else len(messages)
        messages.insert(at, UserMessage(content=told))
        transcript = Transcript(messages=messages)
    # The parser applies the client's stop strings, to the visible text only:
    # sent upstream, one inside a call's arguments (a blank line in a file being
    # written) would cut the call in half. With no tools, a StopCutter does.
    stop: list[str] = []
    marker = DIALECTS[dialect].stop_marker
    if not call.parallel and marker and tools:
        stop.append(marker)
    return ModelRequest(
        messages=tuple(project(transcript, dialect, tools)),
        stop=tuple(stop),
        temperature=call.temperature,
        max_tokens=call.max_tokens,
        response_format=forwarded_format(call),
        **call.sampling,
    )
