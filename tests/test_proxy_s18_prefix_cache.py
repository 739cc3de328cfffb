"""Each turn's upstream prompt is a prefix of the next turn's, through the SDKs.

A local upstream (llama.cpp, vLLM, Ollama) reuses the prompt tokens it read
last time up to the first one that differs. System messages that clients add
inside the conversation (Claude Code's mid-conversation ``system`` messages,
a Codex ``developer`` item, an OpenAI ``system`` message after the first turn)
were joined to the system prompt at the top, so each new one changed the start
of the prompt and the upstream re-read the whole conversation every turn. They
are now notes in the user turn they came with (``proxy.upstream``), which
every chat template accepts: the system prompt stays first and alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_proxy import A_WEATHER, PARIS, TIME, UTC, WEATHER, _anthropic, _openai, proxy

from streamtools.model import ToolSpec
from streamtools.proxy.request import ProxyCall
from streamtools.proxy.upstream import upstream_request
from streamtools.transcript import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    Transcript,
    UserMessage,
)

NOTE = "[system message]"  # the line that opens a note (proxy.upstream.NOTE)

TOP = "You are a coding agent."
AGENTS = "Available agent types: general-purpose."
PLAN = "The user switched to plan mode."
CONTINUE = "Continue with the task using these results"


def _assert_grows(sent: list[list[dict[str, Any]]]) -> None:
    """Each request's messages are the start of the next one's, byte for byte,
    and every one is a prompt strict chat templates take: one system message,
    first, then user and assistant in turn."""
    for before, after in zip(sent, sent[1:], strict=False):
        assert after[: len(before)] == before
        assert len(after) > len(before)
    for messages in sent:
        roles = [m["role"] for m in messages]
        assert roles[0] == "system" and "system" not in roles[1:]
        assert all(a != b for a, b in zip(roles, roles[1:], strict=False))


def test_anthropic_system_messages_keep_each_prompt_a_prefix_of_the_next() -> None:
    """Claude Code's shape: a system message after the user's turn, one more
    each turn (Anthropic's placement rules: after a user turn, then the end of
    the messages or an assistant turn)."""
    first: list[Any] = [{"role": "user", "content": "Weather in Paris?"},
                        {"role": "system", "content": AGENTS}]
    call: Any = {"role": "assistant", "content": [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}},
    ]}
    second = [*first, call, {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "9C"}]},
        {"role": "system", "content": [{"type": "text", "text": PLAN}]}]
    third = [*second, {"role": "assistant", "content": "It is 9C."},
             {"role": "user", "content": "Thanks."}]
    with proxy([f"Checking. {PARIS}", "It is 9C.", "You are welcome."]) as (url, upstream):
        client = _anthropic(url)
        for n, messages in enumerate((first, second, third)):
            kw: Any = {"model": "c", "max_tokens": 100, "system": TOP, "tools": [A_WEATHER],
                       "messages": messages}
            if n == 1:
                with client.messages.stream(**kw) as s:
                    s.get_final_message()
            else:
                client.messages.create(**kw)
        sent = [r["messages"] for r in upstream.requests]
    _assert_grows(sent)
    system = sent[0][0]["content"]
    assert TOP in system and AGENTS not in system
    # each note in the user turn it came with, after what the user sent
    assert sent[0][1]["content"] == f"Weather in Paris?\n\n{NOTE}\n{AGENTS}"
    results = sent[1][3]["content"]
    assert results.startswith('<am:tool_result name="weather">9C')
    # the results' instruction to go on stays, then the note
    assert results.index(CONTINUE) < results.index(f"{NOTE}\n{PLAN}")
    assert sent[2][-1]["content"] == "Thanks."


@pytest.mark.parametrize("role", ["system", "developer"])
def test_openai_system_messages_after_the_first_turn_are_notes(role: str) -> None:
    """A call, a system message between it and its result, then one more
    before the next user message: the result still answers the call."""
    first: list[Any] = [{"role": "system", "content": TOP},
                        {"role": "user", "content": "Weather in Paris?"}]
    call: Any = {"role": "assistant", "content": None, "tool_calls": [{
        "id": "call_1", "type": "function",
        "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}]}
    second = [*first, call, {"role": role, "content": PLAN},
              {"role": "tool", "tool_call_id": "call_1", "content": "9C"}]
    third = [*second, {"role": "assistant", "content": "It is 9C."},
             {"role": role, "content": AGENTS}, {"role": "user", "content": "Thanks."}]
    with proxy([PARIS, "It is 9C.", "You are welcome."]) as (url, upstream):
        client = _openai(url)
        for messages in (first, second, third):
            client.chat.completions.create(model="m", messages=messages, tools=[WEATHER])
        sent = [r["messages"] for r in upstream.requests]
    _assert_grows(sent)
    results = sent[1][3]["content"]
    assert results.startswith('<am:tool_result name="weather">9C')  # not orphaned
    assert results.endswith(f"{NOTE}\n{PLAN}") and CONTINUE in results
    assert sent[2][5]["content"] == f"{NOTE}\n{AGENTS}\n\nThanks."
    assert PLAN not in sent[2][0]["content"] and AGENTS not in sent[2][0]["content"]


def test_responses_developer_items_mid_conversation_are_notes() -> None:
    """Codex's shape: instructions, a developer item first (system prompt), a
    later developer item (a note)."""
    opening: list[Any] = [
        {"type": "message", "role": "developer", "content": [
            {"type": "input_text", "text": "Sandbox: read-only."}]},
        {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "Weather in Paris?"}]},
    ]
    call: Any = {"type": "function_call", "call_id": "call_1", "name": "weather",
                 "arguments": '{"city": "Paris"}'}
    output: Any = {"type": "function_call_output", "call_id": "call_1", "output": "9C"}
    later: Any = {"type": "message", "role": "developer", "content": [
        {"type": "input_text", "text": PLAN}]}
    tool: Any = {"type": "function", "name": "weather", "parameters": A_WEATHER["input_schema"]}
    with proxy([PARIS, "It is 9C."]) as (url, upstream):
        client = _openai(url)
        for items in (opening, [*opening, call, output, later]):
            client.responses.create(model="m", instructions=TOP, input=items, tools=[tool])
        sent = [r["messages"] for r in upstream.requests]
    _assert_grows(sent)
    assert "Sandbox: read-only." in sent[0][0]["content"]
    assert sent[1][-1]["content"].endswith(f"{NOTE}\n{PLAN}")


def test_claude_codes_billing_header_does_not_reach_the_model() -> None:
    """Claude Code's first system block is a billing header whose ``cch``
    changes with every request: it went first into the upstream prompt, so
    that the system prompts of two turns differed from their first line."""
    def system(nonce: str) -> Any:
        return [
            {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.177.01c; "
                                     f"cc_entrypoint=cli; cch={nonce};"},
            {"type": "text", "text": "You are Claude Code.",
             "cache_control": {"type": "ephemeral"}},
        ]
    first: list[Any] = [{"role": "user", "content": "Hi."}]
    second = [*first, {"role": "assistant", "content": "Hello."},
              {"role": "user", "content": "Bye."}]
    with proxy(["Hello.", "Bye."]) as (url, upstream):
        client = _anthropic(url)
        for nonce, messages in (("36ee5", first), ("0aaa9", second)):
            client.messages.create(model="c", max_tokens=50, system=system(nonce),
                                   tools=[A_WEATHER], messages=messages)
        sent = [r["messages"] for r in upstream.requests]
    _assert_grows(sent)
    assert sent[0][0]["content"].startswith("You are Claude Code.")


@pytest.mark.parametrize("kind", ["allowed_tools", "named"])
def test_a_restricting_tool_choice_leaves_the_system_prompt_as_it_was(kind: str) -> None:
    """OpenAI's ``allowed_tools`` exists to restrict the calls without changing
    the prompt (for its cache), and a named choice needs no other prompt
    either: both showed the model only their tools, so the system prompt of
    that request, and of the next one, differed from the start. Every tool is
    shown now; the last message says which the model may call, and a call to
    another is re-prompted."""
    choice: Any = (
        {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [WEATHER]}}
        if kind == "allowed_tools" else {"type": "function", "function": {"name": "weather"}}
    )
    first: list[Any] = [{"role": "user", "content": "Time and weather in Paris?"}]
    second = [*first, {"role": "assistant", "content": None, "tool_calls": [{
        "id": "call_1", "type": "function",
        "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "9C"}]
    with proxy([UTC, PARIS, "9C."]) as (url, upstream):
        client = _openai(url)
        reply = client.chat.completions.create(
            model="m", messages=first, tools=[WEATHER, TIME], tool_choice=choice)
        client.chat.completions.create(model="m", messages=second, tools=[WEATHER, TIME])
        sent = [r["messages"] for r in upstream.requests]
    (call,) = reply.choices[0].message.tool_calls or []
    assert call.type == "function" and call.function.name == "weather"  # clock.now: re-prompted
    assert sent[0][0] == sent[1][0] == sent[2][0]
    assert 'name="clock.now"' in sent[0][0]["content"]
    said = sent[0][-1]["content"]
    assert ("may call only these tools: `weather`" if kind == "allowed_tools"
            else "must call the tool `weather`") in said
    assert sent[2][1]["content"] == "Time and weather in Paris?"  # said for that reply only
    # the re-prompt says the tool it called is not allowed now, not that it does not exist
    repair = sent[1][-1]["content"]
    assert "`clock.now` may not be called in this reply." in repair
    assert "no tool named" not in repair


_STEPS = st.lists(st.sampled_from(["user", "system", "call", "text", "result"]),
                  min_size=1, max_size=12)


@settings(max_examples=100, deadline=None)
@given(steps=_STEPS, leading=st.booleans(), dialect=st.sampled_from(["am_xml", "json_object"]))
def test_any_growing_conversation_keeps_each_prompt_a_prefix_of_the_next(
    steps: list[str], leading: bool, dialect: str
) -> None:
    """Whatever the order of user, system, assistant and result messages, the
    upstream messages for a conversation are, all but the last, the first
    messages for any longer one that the client sends later; no system message
    follows the first; and a note orphans no result."""
    messages: list[Any] = [SystemMessage(content="top")] if leading else []
    calls = 0
    for n, step in enumerate(steps):
        spoken = [m for m in messages if not isinstance(m, SystemMessage)]
        pending = bool(spoken) and isinstance(spoken[-1], AssistantMessage) and spoken[-1].calls
        if step == "user":
            messages.append(UserMessage(content=f"user {n}"))
        elif step == "system":
            messages.append(SystemMessage(content=f"note {n}"))
        elif step in ("call", "text") and calls and pending:
            # a client answers a call before the model speaks again
            messages.append(ToolResultMessage(call_id=f"c{calls}", name="weather",
                                              content=f"result {n}"))
        if step == "call":
            calls += 1
            messages.append(AssistantMessage(text=f"reply {n}", calls=(
                ToolCall(id=f"c{calls}", name="weather", arguments={"city": f"c{n}"}),)))
        elif step == "text":
            messages.append(AssistantMessage(text=f"reply {n}"))
        elif step == "result" and calls:
            messages.append(ToolResultMessage(call_id=f"c{calls}", name="weather",
                                              content=f"result {n}"))

    tools = [ToolSpec(name="weather", description="", parameters={"type": "object"})]

    def sent(given: list[Any]) -> list[tuple[str, str]]:
        call = ProxyCall(model="m", transcript=Transcript(messages=given), tools=tools)
        return [(m.role, m.content) for m in upstream_request(call, dialect).messages]

    def orphans(sent: list[tuple[str, str]]) -> int:
        return sum(text.count("arrived, but no such call") for _, text in sent)

    whole = sent(messages)
    assert all(role != "system" for role, _ in whole[1:])
    bare = [m for m in messages if not isinstance(m, SystemMessage)]
    assert orphans(whole) == orphans(sent(bare))
    # each earlier request the client could have sent: one that ends where the
    # model is to answer (a user message, results or a system message), and
    # says something (system messages alone get a user turn of their own,
    # upstream.NO_INPUT, and a later leading one joins the system prompt)
    for upto in range(1, len(messages)):
        spoken = [m for m in messages[:upto] if not isinstance(m, SystemMessage)]
        if not spoken or isinstance(spoken[-1], AssistantMessage):
            continue
        before = sent(messages[:upto])
        assert whole[: len(before) - 1] == before[:-1]


_RENDER = """
import hashlib, json
from streamtools.proxy import anthropic_wire, responses_wire
from streamtools.proxy.upstream import upstream_request
schema = {"type": "object", "$defs": {"Addr": {"type": "object", "properties": {
    "city": {"type": "string"}, "zip": {"type": "string"}}, "required": ["zip", "city"]}},
    "properties": {"home": {"$ref": "#/$defs/Addr"}, "kind": {"enum": ["b", "a"]},
    "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
    "opts": {"type": "object", "additionalProperties": {"type": "integer"}}},
    "required": ["kind", "home"]}
anthropic = {"model": "c", "max_tokens": 9, "system": "top", "tools": [
    {"name": "find", "input_schema": schema}, {"type": "bash_20250124", "name": "bash"},
    {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}],
    "messages": [{"role": "user", "content": "go"}, {"role": "system", "content": "note"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "find",
     "input": {"kind": "a", "home": {"zip": "1", "city": "x"}, "tags": ["q", "p"]}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}]}
responses = {"model": "m", "instructions": "top", "input": "go", "tools": [
    {"type": "namespace", "name": "crm", "tools": [
        {"type": "function", "name": "find", "parameters": schema}]},
    {"type": "custom", "name": "apply_patch", "format": {"type": "grammar", "syntax": "lark",
     "definition": "start: /.+/"}}]}
for dialect in ("am_xml", "hermes", "json_object"):
    for wire, body in ((anthropic_wire, anthropic), (responses_wire, responses)):
        sent = upstream_request(wire.decode_request(body), dialect).messages
        text = json.dumps([[m.role, m.content] for m in sent])
        print(hashlib.sha256(text.encode()).hexdigest())
"""


def test_the_upstream_prompt_is_the_same_in_every_process() -> None:
    """The proxy's workers (``--workers``) and replicas each render a request:
    nothing in the prompt may follow set or hash order, which changes from
    one process to the next (PYTHONHASHSEED), or a request that another
    process served next would miss the upstream's prompt cache."""
    seen = {
        subprocess.run(
            [sys.executable, "-c", _RENDER], capture_output=True, text=True, check=True,
            env={**os.environ, "PYTHONHASHSEED": seed}, timeout=120,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(seen) == 1 and len(next(iter(seen)).split()) == 6
