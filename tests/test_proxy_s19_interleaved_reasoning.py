"""Reasoning that a model writes between its text and its calls (interleaved
thinking: a model that thinks before each call) reaches the client where it
came, as each API carries it: ``reasoning_content`` deltas on chat
completions, a thinking block between the others on Anthropic's Messages (when
the request enabled thinking), a ``reasoning`` item between the others on the
Responses API; whole answers hold the same, in the same order. It was left out
after the answer's first text or call. The official SDKs are the clients,
``FakeServer`` the upstream (the turn itself, with reasoning in the upstream's
own field inside a call, under ``ScriptedModel``)."""

from __future__ import annotations

from typing import Any

import pytest
from test_proxy import OSLO, PARIS, USER, WEATHER, _anthropic, _openai, _stream, proxy

from streamtools.events import CallEnd, CallStart, Event, ReasoningDelta
from streamtools.model import ReasoningChunk, TextChunk
from streamtools.proxy import openai_wire
from streamtools.proxy.request import ProxyCall
from streamtools.proxy.turn import run_turn
from streamtools.testing import ScriptedModel

REPLY = f"<think>First Paris.</think>Let me check. {PARIS}<think>Then Oslo.</think>{OSLO}"
A_WEATHER: Any = {"name": "weather", "input_schema": WEATHER["function"]["parameters"]}
A_KW: Any = {
    "model": "m", "max_tokens": 2000, "messages": USER, "tools": [A_WEATHER],
    "thinking": {"type": "enabled", "budget_tokens": 1024},
}


def _extra(obj: Any, name: str) -> Any:
    return (obj.model_extra or {}).get(name)


def _kind(delta: Any) -> str | None:
    """What a chat delta begins: a call (its name), reasoning, or neither."""
    if delta.tool_calls and delta.tool_calls[0].function.name:
        return "call"
    return "think" if _extra(delta, "reasoning_content") else None


@pytest.mark.parametrize("stream", [False, True])
def test_chat_completions_carry_reasoning_between_calls(stream: bool) -> None:
    kw: Any = {"model": "m", "messages": USER, "tools": [WEATHER]}
    with proxy([REPLY]) as (url, _):
        client = _openai(url)
        if stream:
            chunks, completion = _stream(client, **kw)
            deltas = [c.choices[0].delta for c in chunks if c.choices]
            order = [_kind(d) for d in deltas]
            # the second thought comes after the first call, before the second
            runs = [o for i, o in enumerate(order) if o and o != order[i - 1]]
            assert runs == ["think", "call", "think", "call"]
            message = completion.choices[0].message
            thought = "".join(_extra(d, "reasoning_content") or "" for d in deltas)
        else:
            message = client.chat.completions.create(**kw).choices[0].message
            thought = _extra(message, "reasoning_content")
    assert thought == "First Paris.Then Oslo."
    assert message.content == "Let me check. "
    assert [c.function.arguments for c in message.tool_calls or []] == [
        '{"city": "Paris"}', '{"city": "Oslo"}'
    ]


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_thinking_blocks_between_the_others(stream: bool) -> None:
    with proxy([REPLY, REPLY]) as (url, _):
        client = _anthropic(url)
        if stream:
            with client.messages.stream(**A_KW) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(**A_KW)
        # without thinking, no thinking block and the text is one block
        plain = client.messages.create(**{**A_KW, "thinking": {"type": "disabled"}})
    blocks = [
        (b.type, getattr(b, "thinking", None) or getattr(b, "text", None)
         or getattr(b, "input", None))
        for b in message.content
    ]
    assert blocks == [
        ("thinking", "First Paris."), ("text", "Let me check. "), ("tool_use", {"city": "Paris"}),
        ("thinking", "Then Oslo."), ("tool_use", {"city": "Oslo"}),
    ]
    assert [b.type for b in plain.content] == ["text", "tool_use", "tool_use"]


def test_anthropic_text_around_reasoning_is_one_block_without_thinking() -> None:
    # (reasoning after the answer began would be its text: it comes after a line)
    reply = "\n<think>hmm</think>It is sunny."
    with proxy([reply, reply]) as (url, _):
        client = _anthropic(url)
        kw: Any = {**A_KW, "thinking": {"type": "disabled"}}
        whole = client.messages.create(**kw)
        with client.messages.stream(**kw) as events:
            streamed = events.get_final_message()
    for message in (whole, streamed):
        assert [(b.type, getattr(b, "text", None)) for b in message.content] == [
            ("text", "It is sunny.")
        ]


@pytest.mark.parametrize("stream", [False, True])
def test_responses_reasoning_items_between_the_others(stream: bool) -> None:
    with proxy([REPLY]) as (url, _):
        client = _openai(url)
        kw: Any = {"model": "m", "input": "Weather?", "tools": [
            {"type": "function", "name": "weather", "parameters": WEATHER["function"]["parameters"]}
        ]}
        if stream:
            with client.responses.stream(**kw) as events:
                response = events.get_final_response()
        else:
            response = client.responses.create(**kw)
    output: list[Any] = list(response.output)
    items = [(o.type, o.status, getattr(o, "arguments", None)) for o in output]
    assert items == [
        ("reasoning", "completed", None), ("message", "completed", None),
        ("function_call", "completed", '{"city": "Paris"}'),
        ("reasoning", "completed", None),
        ("function_call", "completed", '{"city": "Oslo"}'),
    ]
    thoughts = [o.content[0].text for o in output if o.type == "reasoning"]
    assert thoughts == ["First Paris.", "Then Oslo."]


@pytest.mark.anyio
async def test_reasoning_inside_a_call_comes_after_it() -> None:
    # an upstream's reasoning field while the call's block is open on the wire:
    # written after the call ends, not inside it
    model = ScriptedModel([[
        TextChunk(text='<am:tool_call name="weather"><city>Pa'),
        ReasoningChunk(text="mid"),
        TextChunk(text="ris</city></am:tool_call>"),
    ]])
    call: ProxyCall = openai_wire.decode_request(
        {"model": "m", "messages": USER, "tools": [WEATHER]}
    )
    events: list[Event] = []

    async def emit(event: Event) -> None:
        events.append(event)

    await run_turn(model, call, emit)
    kinds = [type(e) for e in events if isinstance(e, CallStart | CallEnd | ReasoningDelta)]
    assert kinds == [CallStart, CallEnd, ReasoningDelta]
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["mid"]
