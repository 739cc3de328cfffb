"""``project``: the one place a transcript becomes the messages of a request.

Theory of operation
-------------------
The transcript is provider- and dialect-neutral; each turn it is projected for
one dialect and one mode. The rules, in the order they apply:

1. **System.** The ``system`` argument and every ``SystemMessage`` of the
   transcript (wherever it sits) are merged, in that order, into one system
   message at the top, followed in prompt mode by the dialect's tool prompt
   (definitions, protocol, example, then the one-line summaries of
   ``more_tools``). Native mode adds no tool prompt: the tools travel in the
   request's ``tools`` field.
2. **Assistant replies.** Prompt mode writes each past call back as the model
   would have written it (``Renderer.render_reply``: the reply's text followed
   by each call's ``raw`` text as written, with its closing marker restored
   when a stop sequence removed it; or, without a raw, the canonical form on a
   line of its own). Native mode puts
   the calls in ``tool_calls`` (a call whose arguments are text that is not a
   JSON object, ``ToolCall.arguments_text``, keeps that text: each provider
   sends ``{}`` with the text as reply text just before the call, since
   Anthropic and Ollama take only an object and OpenAI-compatible servers
   refuse past arguments that are not one, so the model still reads what it
   wrote next to the result: ``NativeCall``), and the reasoning blocks the provider signed in
   ``thinking`` (Anthropic requires them back with the calls when extended
   thinking is on). Reasoning a server streamed in a field it takes back
   (``ReasoningOrigin``) travels too, with where it came from
   (``ChatMessage.reasoning`` and ``reasoning_origin``, defused as reply text
   is): ``OpenAIChat`` sends it back only to the server and model that
   streamed it, in the field it came in (DeepSeek's and Kimi's thinking modes
   refuse a request whose past tool-call replies lack their
   ``reasoning_content``; OpenAI's API and Groq refuse a field they do not
   know), and the other providers do not send it; other reasoning is not sent
   back. A reply with
   neither text nor calls is dropped (APIs reject empty assistant messages).
   In a dialect with one call per reply (``json_object``) a past reply with
   several calls (native history) becomes one reply per call, each followed by
   its result, so that every call reads back as the model would have made it.
3. **Results** pair with the calls of the assistant reply they follow, by
   ``call_id``, and are written in the order of the calls; when calls share an
   id (APIs refuse that, but clients and servers do reuse ids), the results
   with that id answer them in order:
   - prompt mode, dialects whose results are user text (``am_xml``,
     ``json_action``, ``hermes``, ``inline_json``): all results of the reply in
     one user message, then the continuation instruction;
   - prompt mode, ``json_object`` and ``command``: one tool message per result,
     then the continuation as a user message;
   - native mode: one tool message per result (errors prefixed ``Error: ``).
   The continuation is left out when the user spoke next: their message is the
   instruction.
4. **Unanswered calls** (no result with their id follows the reply) get a
   synthesized error result, ``NO_RESULT``: every call is answered, which
   native APIs require and which tells the model the call did not happen.
5. **Orphan results** (no call with that id in the reply they follow, one
   result more than the calls with its id, or a result with no reply before it) are kept as
   user text that says so: nothing is lost, nothing is attached to the wrong call.
6. **Adjacent user messages** are merged into one (blank line between), as
   several APIs require alternating roles.
   **Adjacent assistant replies** (a client may send two in a row: OpenAI's API
   takes them, Anthropic's merges same-role turns, and a transcript carried on
   after a final answer has one) are merged into one reply before the rules
   above, the reply Anthropic would read: their texts joined (blank line
   between two texts), their calls in order, each at its place in the joined
   text (``ToolCall.offset`` moved by the text before it; a call after all of
   its reply's text stays at that reply's end), so a prompt dialect writes the
   calls where they stood and the results that follow answer any of them; the
   signed ``thinking`` blocks are kept in order, and the reasoning keeps its
   origin only if all of it came from one place. Strict chat templates (Gemma,
   Mistral, some llama.cpp ones) refuse a request whose roles do not alternate,
   and in native mode OpenAI-compatible servers take one reply's calls together.
   After any transcript, then, no two adjacent messages (after the system one)
   are both ``user`` or both ``assistant``.
7. **Text UTF-8 cannot carry** (a lone UTF-16 surrogate half, anywhere in a
   message or a call) is written as U+FFFD, so that the request can be sent.
8. **Chat-template special tokens** (``<|im_end|>``) in what a tool or a model
   wrote are defused wherever it goes (``streamtools.prompts.special_tokens``):
   in prompt mode by the dialect's renderer, in native mode here, in the
   text of tool messages and of replies (``&lt;|im_end|&gt;``; a call's
   arguments are an object the server writes). The system prompt and user
   messages are the caller's own words and go as they are.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence

import msgspec

from streamtools.model import ChatMessage, NativeCall, Thinking, ToolSpec
from streamtools.prompts.renderer import Renderer, spoken
from streamtools.prompts.special_tokens import defuse_text
from streamtools.results import json_ready
from streamtools.transcript import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    Transcript,
    UserMessage,
)

__all__ = ["NO_RESULT", "merge_user_messages", "project"]

_INERT = re.compile(r"[^\w.:-]")
_encoder = msgspec.json.Encoder()
NO_RESULT = "No result was recorded for this call; it may not have run. Call it again if needed."


def project(
    transcript: Transcript,
    dialect: str,
    tools: Sequence[ToolSpec],
    *,
    native: bool = False,
    system: str | None = None,
    more_tools: Sequence[ToolSpec] = (),
) -> list[ChatMessage]:
    """The request messages for ``transcript`` in ``dialect`` (see the module rules).

    ``more_tools`` (hybrid, prompt mode): tools summarised after the definitions
    of ``tools``, which the model may ask for (``Renderer.system_prompt``)."""
    from streamtools.prompts import get_renderer  # the registry imports this module

    renderer = get_renderer(dialect)
    bases = [system] if system else []
    bases += [m.content for m in transcript.messages if isinstance(m, SystemMessage)]
    base = "\n\n".join(b.strip() for b in bases if b.strip())
    if native:
        prompt = base
    else:
        prompt = renderer.system_prompt(tools, base=base or None, more_tools=more_tools)
    out: list[ChatMessage] = [ChatMessage(role="system", content=prompt)] if prompt else []

    messages = _merge_replies([m for m in transcript.messages if not isinstance(m, SystemMessage)])
    i = 0
    while i < len(messages):
        message = messages[i]
        i += 1
        if isinstance(message, UserMessage):
            out.append(ChatMessage(role="user", content=message.content))
        elif isinstance(message, ToolResultMessage):
            out.append(_orphan(renderer, message, native))
        else:
            results: list[ToolResultMessage] = []
            while i < len(messages) and isinstance(messages[i], ToolResultMessage):
                results.append(messages[i])  # type: ignore[arg-type]
                i += 1
            user_next = i < len(messages) and isinstance(messages[i], UserMessage)
            out.extend(_turn(renderer, message, results, native, user_next))
    return [_sendable(m) for m in merge_user_messages(out)]


def _turn(
    renderer: Renderer,
    reply: AssistantMessage,
    results: list[ToolResultMessage],
    native: bool,
    user_next: bool,
) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    if native:
        said = spoken(reply.text)
        if said or reply.calls:
            calls = tuple(
                NativeCall(
                    id=c.id,
                    name=c.name,
                    arguments=c.arguments,
                    extra=c.extra,
                    # the text goes back as reply text (``providers.bodies``)
                    arguments_text=c.arguments_text and defuse_text(c.arguments_text),
                )
                for c in reply.calls
            )
            out.append(
                ChatMessage(
                    role="assistant",
                    content=said,
                    tool_calls=calls,
                    thinking=reply.thinking,
                    reasoning=defuse_text(reply.reasoning) if reply.reasoning_origin else "",
                    reasoning_origin=reply.reasoning_origin,
                )
            )
    elif not (renderer.one_call_per_reply and len(reply.calls) > 1):
        content = renderer.render_reply(reply.text, reply.calls, unparsed=reply.unparsed)
        if content:
            out.append(ChatMessage(role="assistant", content=content))

    # Each call takes the first result with its id not taken yet, so two calls
    # that share an id (a client or upstream reusing one) get one result each,
    # in order; a result takes the name of the call it answers.
    waiting: dict[str, deque[int]] = {}
    for n, result in enumerate(results):
        waiting.setdefault(result.call_id, deque()).append(n)
    taken: set[int] = set()
    paired: list[ToolResultMessage] = []
    for c in reply.calls:
        queue = waiting.get(c.id)
        if queue:
            taken.add(queue[0])
            paired.append(msgspec.structs.replace(results[queue.popleft()], name=c.name))
        else:
            paired.append(
                ToolResultMessage(call_id=c.id, name=c.name, content=NO_RESULT, is_error=True)
            )
    orphans = [r for n, r in enumerate(results) if n not in taken]

    if paired and native:
        for r in paired:
            text = defuse_text(f"Error: {r.content}" if r.is_error else r.content)
            out.append(
                ChatMessage(
                    role="tool",
                    content=text,
                    tool_call_id=r.call_id,
                    name=r.name,
                    is_error=r.is_error,
                )
            )
    elif paired:
        rendered = [_render(renderer, r) for r in paired]
        tail = [] if user_next else [renderer.continuation()]
        if renderer.results_role == "user":
            out.append(ChatMessage(role="user", content="\n\n".join(rendered + tail)))
        else:
            split = renderer.one_call_per_reply and len(reply.calls) > 1
            for n, (r, text) in enumerate(zip(paired, rendered, strict=True)):
                if split:  # one reply per call, each followed by its result
                    said = reply.text if n == 0 else ""
                    call_text = renderer.render_reply(said, [reply.calls[n]])
                    out.append(ChatMessage(role="assistant", content=call_text))
                out.append(
                    ChatMessage(role="tool", content=text, tool_call_id=r.call_id, name=r.name)
                )
            if tail:
                out.append(ChatMessage(role="user", content=tail[0]))
    out.extend(_orphan(renderer, r, native) for r in orphans)
    return out


def _render(renderer: Renderer, result: ToolResultMessage) -> str:
    if result.is_error:
        return renderer.render_error(result.name, result.content, call_id=result.call_id)
    return renderer.render_result(result.name, result.content, call_id=result.call_id)


def _orphan(renderer: Renderer, result: ToolResultMessage, native: bool) -> ChatMessage:
    # ids and names may come from a client or a model: keep them inert here
    call_id, name = _INERT.sub("_", result.call_id), _INERT.sub("_", result.name)
    note = (
        f"(A tool result for call `{call_id}` of `{name}` arrived, "
        "but no such call is in this conversation.)"
    )
    body = defuse_text(result.content) if native else _render(renderer, result)
    return ChatMessage(role="user", content=f"{note}\n{body}")


def _sendable(message: ChatMessage) -> ChatMessage:
    """``message`` as a request can carry it: a lone UTF-16 surrogate half (a file
    name that is not UTF-8) as U+FFFD, as ``Transcript.encode`` writes it. The
    transcript's helpers make the text they add valid, but not a call's
    arguments, nor a message ``add``-ed as built, nor the caller's ``system``;
    such a half failed the provider's encoding of every later request."""
    try:
        _encoder.encode(message)
    except UnicodeEncodeError:
        return msgspec.convert(json_ready(msgspec.to_builtins(message)), ChatMessage)
    return message


_Spoken = UserMessage | AssistantMessage | ToolResultMessage  # all but system messages


def _merge_replies(messages: list[_Spoken]) -> list[_Spoken]:
    """Each run of adjacent assistant replies as one (rule 6). A run is joined
    once at its end (as ``merge_user_messages``): a request of many short replies costs
    its length, not its square."""
    out: list[_Spoken] = []
    run: list[AssistantMessage] = []

    def close_run() -> None:
        if len(run) > 1:
            out.append(_joined(run))
        elif run:
            out.append(run[0])
        run.clear()

    for m in messages:
        if isinstance(m, AssistantMessage):
            run.append(m)
            continue
        close_run()
        out.append(m)
    close_run()
    return out


def _joined(replies: list[AssistantMessage]) -> AssistantMessage:
    """``replies`` as one: see rule 6."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    thinking: list[Thinking] = []
    written = 0  # characters of joined text so far
    last = len(replies) - 1
    for n, reply in enumerate(replies):
        # a signed block's place counts the calls before it (``Thinking.calls``):
        # now those of the replies before its own as well
        before = len(calls)
        thinking.extend(
            msgspec.structs.replace(t, calls=t.calls + before) if before else t
            for t in reply.thinking
        )
        if reply.text and written:
            texts.append("\n\n")
            written += 2
        for c in reply.calls:
            end = len(reply.text)
            # None (after all of the reply's text) stays None in the last reply
            if c.offset is None:
                at = None if n == last else end
            else:
                at = min(max(c.offset, 0), end)
            moved = None if at is None else written + at
            calls.append(c if moved == c.offset else msgspec.structs.replace(c, offset=moved))
        texts.append(reply.text)
        written += len(reply.text)
    # one origin for the joined reasoning only if all of it came from one place
    origins = {r.reasoning_origin for r in replies if r.reasoning}
    return AssistantMessage(
        text="".join(texts),
        calls=tuple(calls),
        reasoning="\n\n".join(r.reasoning for r in replies if r.reasoning),
        thinking=tuple(thinking),
        reasoning_origin=origins.pop() if len(origins) == 1 else None,
        unparsed=any(r.unparsed for r in replies),
    )


def merge_user_messages(messages: list[ChatMessage]) -> list[ChatMessage]:
    """Each run of adjacent user messages as one (blank line between), as many chat
    templates require (rule 6; the providers' ``answerable_only`` too, after it
    turns results into user text). A run's texts are joined once at its end:
    joined pairwise as they came, the run's text so far was copied per message,
    and a proxy request of many short user messages or orphan results (tens of
    thousands fit in its body) held the event loop for minutes."""
    out: list[ChatMessage] = []
    run: list[str] = []  # the texts of the user messages since the last other one

    def close_run() -> None:
        if len(run) > 1:
            out[-1] = ChatMessage(role="user", content="\n\n".join(run))
        run.clear()

    for m in messages:
        if m.role == "user" and run:
            run.append(m.content)
            continue
        close_run()
        out.append(m)
        if m.role == "user":
            run.append(m.content)
    close_run()
    return out
