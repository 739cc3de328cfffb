"""What goes upstream for one proxied request: its messages, stop and options.

Theory of operation
-------------------
``upstream_request`` projects the request's transcript for the dialect
(``prompts.project``): the request's tools become the dialect's system
prompt, past calls and results become text, and a forced
``tool_choice`` or a JSON ``response_format`` is said in words after the
conversation (``turn`` re-prompts with the same function, and the proxy's
token count counts what it builds).

**Prefix caching.** A local upstream (llama.cpp, vLLM, Ollama) keeps the
tokens of the prompt it last read and reads again only from the first token
that differs. A coding agent sends the whole conversation each turn, so the
upstream prompt of turn N must be a prefix, message for message and byte for
byte, of turn N+1's when the client's conversation only grew: else every turn
re-reads the whole conversation, minutes of prompt processing on a local model.
Everything rendered here is a function of the request alone (no ids, clocks or
set order), and so are the tool definitions, in the client's order.

A system message *inside* the conversation broke that: clients add them as
the conversation goes on (Claude Code's mid-conversation ``system`` messages,
one more each turn; a Codex ``developer`` item; an OpenAI ``system`` message
after the first turn), and joined to the system prompt at the top, as they
were, each new one changed the start of the prompt. Left where they stand as
``system`` messages, many chat templates refuse them (Qwen3.5/3.6:
"System message must be at the beginning."; Gemma has no system role;
Mistral's templates require user and assistant to alternate). So
``placed_notes`` keeps the system messages that open the conversation (the
client's ``system``/``instructions`` and those before the first other
message) as the system prompt, and writes each later one as a note in the
user turn it came with: ``[system message]`` on a line of its own, then its
text, merged by ``project`` with the user's message before or after it, which
every template accepts. A note never stands between a reply's calls and their
results (the results would be orphaned): one there waits until after them,
where Anthropic's API puts one (after a user turn, which holds the results).
A note right after results, with no user message after it, comes after the
results' continuation instruction, which ``project`` leaves out when a user
message follows the results (rule 3). A changed top-level ``system`` or
``instructions`` changes the start, as it must. A client that moves one
system message to the end of each request instead of keeping it where it
was (aider's reminder) costs the upstream its last exchange: the previous
last user message loses the note; joined to the system prompt, such a note
cost nothing, but a note that stays (Claude Code's) cost the whole prompt.

A forced or restricted ``tool_choice`` is said in the last user message
(``choice_words``), as is a ``response_format`` when tools may be called, so
only that message differs from the next turn's (which no longer says it). The
system prompt shows every tool of the request whatever the choice: a named
choice, or an ``allowed_tools`` one (whose purpose, on OpenAI's API, is to
restrict the calls without changing the prompt, for its cache), that showed
only its tools changed the system prompt, and the next turn read the whole
conversation again. ``none`` showed no tool, so its one request read the whole
conversation, and the next one (with the tools again) all of it once more: it
shows them too, as vLLM does by default since 0.10
(https://github.com/vllm-project/vllm/pull/20544), and the last user message
says that no tool may be called in this reply. The parser knows only the
tools the choice lets the model call (``callable_tools``; none for ``none``):
a call to another is refused, and the re-prompt says that it may not be called
in this reply (``turn``). Claude Code's billing header, the first line of its system prompt,
changes with every request: the Anthropic wire leaves it out. A conversation
of system messages alone (a Responses request with instructions and an empty
``input``) gets a user turn that says no message was sent (``NO_INPUT``): many
chat templates refuse a conversation without one ("No user query found in
messages": Qwen3's); the system prompt stays as it is, the start of the
conversation's later prompts.
"""

from __future__ import annotations

from typing import Any

import msgspec

from streamtools.model import ModelRequest, ToolSpec, UseTool
from streamtools.parser import DIALECTS
from streamtools.prompts import get_renderer, project
from streamtools.prompts.choice import choice_instruction
from streamtools.providers.bodies import json_schema_of
from streamtools.proxy.request import ProxyCall, forwarded_format
from streamtools.transcript import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    Transcript,
    UserMessage,
)

__all__ = [
    "NOTE", "NO_CALL", "NO_INPUT", "callable_tools", "choice_words", "format_instruction",
    "placed_notes", "upstream_request",
]

NOTE = "[system message]"  # the line that opens a system message's note
NO_CALL = "In this reply you may not call any tool: answer in text only."
NO_INPUT = "[No message was sent: follow the instructions.]"


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


def callable_tools(call: ProxyCall) -> list[ToolSpec]:
    """The tools the model may call in this reply (the parser's catalog): the
    one a named ``tool_choice`` names, those an ``allowed_tools`` choice
    allows, or all that it is shown."""
    choice = call.tool_choice
    if isinstance(choice, UseTool):
        return [t for t in call.tools if t.name == choice.name]
    if choice == "none":
        return []
    if call.allowed is not None:
        allowed = set(call.allowed)  # not the list: a scan per tool is quadratic
        return [t for t in call.tools if t.name in allowed]
    return list(call.tools)


def choice_words(call: ProxyCall) -> str | None:
    """What the model is told of a forced or restricted ``tool_choice``, or
    None: ``prompts.choice``'s sentence, or for ``allowed_tools`` the names it
    allows, in its mode, or for ``none`` with tools shown that none may be
    called."""
    if call.tool_choice == "none":
        return NO_CALL if call.tools else None
    if call.allowed is None or isinstance(call.tool_choice, UseTool):
        return choice_instruction(call.tool_choice)
    names = ", ".join(f"`{t.name}`" for t in callable_tools(call))
    if call.tool_choice == "required":
        return f"In this reply you must call at least one of these tools: {names}."
    return f"In this reply you may call only these tools: {names}."


def placed_notes(transcript: Transcript, dialect: str) -> Transcript:
    """``transcript`` with each system message after the first other message
    written as a note in a user turn (module docstring); the same object when
    it has none."""
    messages = transcript.messages
    start = 0
    while start < len(messages) and isinstance(messages[start], SystemMessage):
        start += 1
    if not any(isinstance(m, SystemMessage) for m in messages[start:]):
        return transcript
    out: list[Message] = list(messages[:start])
    pending: list[str] = []

    def flush(before_user: bool) -> None:
        if not pending:
            return
        if not before_user and isinstance(out[-1], ToolResultMessage):
            # the note would read to ``project`` as the user speaking next
            pending.insert(0, get_renderer(dialect).continuation())
        out.append(UserMessage(content="\n\n".join(pending)))
        pending.clear()

    for message in messages[start:]:
        if isinstance(message, SystemMessage):
            if message.content.strip():
                pending.append(f"{NOTE}\n{message.content}")
            continue
        if isinstance(message, UserMessage):
            flush(True)
        elif isinstance(message, AssistantMessage) and not (
            out and isinstance(out[-1], AssistantMessage)
        ):
            # not inside a reply (``project`` merges adjacent ones) nor before its results
            flush(False)
        out.append(message)
    flush(False)
    return Transcript(messages=out)


def upstream_request(
    call: ProxyCall, dialect: str, transcript: Transcript | None = None
) -> ModelRequest:
    """What goes upstream for ``call``: its transcript (or ``transcript``, a
    repair's) projected for ``dialect`` with the tools the model is shown
    and the instructions above, and the dialect's stop
    marker when the client allows one call per reply (the client's stop
    strings are applied by the parser, see ``proxy.turn``)."""
    tools = list(call.tools)  # all, whatever the choice (module docstring)
    instructions = [choice_words(call)]
    if forwarded_format(call) is None:  # a tool may be called: say it instead
        instructions.append(format_instruction(call.response_format))
    transcript = placed_notes(call.transcript if transcript is None else transcript, dialect)
    if transcript.messages and all(isinstance(m, SystemMessage) for m in transcript.messages):
        # instructions alone (a Responses ``input: []``): a user turn that says so
        transcript = Transcript(messages=[*transcript.messages, UserMessage(content=NO_INPUT)])
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
    # written) would cut the call in half. With no tools, its NO_CALLS parser does.
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
