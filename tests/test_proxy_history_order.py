"""An assistant turn in a client's history whose text and tool calls interleave
(Anthropic content blocks [text, tool_use, text, tool_use]; Responses items
[message, function_call, message, function_call]) is projected for a text
dialect in that order: each call between the texts around it."""

from __future__ import annotations

from typing import Any

from streamtools.model import ToolSpec
from streamtools.prompts import project
from streamtools.prompts.project import NO_RESULT
from streamtools.proxy import anthropic_wire, responses_wire
from streamtools.transcript import AssistantMessage, Transcript

SCHEMA: Any = {"type": "object", "properties": {"city": {"type": "string"}}}
TOOLS = [ToolSpec(name="weather", description="Weather for a city.", parameters=SCHEMA)]
FIRST, THEN = "First Paris.", "Then Oslo."


def _assistant_text(transcript: Transcript) -> str:
    messages = project(transcript, "hermes", TOOLS)
    replies = [m.content for m in messages if m.role == "assistant"]
    assert len(replies) == 1  # one turn, as the client sent it
    assert all(NO_RESULT not in m.content for m in messages)  # each call got its result
    return replies[0]


def _in_order(text: str) -> None:
    places = [text.find(s) for s in (FIRST, '"Paris"', THEN, '"Oslo"')]
    assert -1 not in places and places == sorted(places), text


def test_anthropic_blocks_keep_their_order() -> None:
    call = anthropic_wire.decode_request(
        {
            "model": "m",
            "max_tokens": 50,
            "messages": [
                {"role": "user", "content": "Weather in Paris and Oslo?"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": FIRST},
                        {
                            "type": "tool_use",
                            "id": "t1",
                            "name": "weather",
                            "input": {"city": "Paris"},
                        },
                        {"type": "text", "text": THEN},
                        {
                            "type": "tool_use",
                            "id": "t2",
                            "name": "weather",
                            "input": {"city": "Oslo"},
                        },
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "t1", "content": "sunny"},
                        {"type": "tool_result", "tool_use_id": "t2", "content": "rain"},
                    ],
                },
            ],
        }
    )
    reply = next(m for m in call.transcript.messages if isinstance(m, AssistantMessage))
    assert reply.text == FIRST + THEN
    assert [c.offset for c in reply.calls] == [len(FIRST), len(FIRST + THEN)]
    _in_order(_assistant_text(call.transcript))


def test_responses_items_keep_their_order_in_one_turn() -> None:
    def message(text: str) -> dict[str, Any]:
        return {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text}],
        }

    def function_call(call_id: str, city: str) -> dict[str, Any]:
        return {
            "type": "function_call",
            "call_id": call_id,
            "name": "weather",
            "arguments": f'{{"city": "{city}"}}',
        }

    call = responses_wire.decode_request(
        {
            "model": "m",
            "input": [
                {"role": "user", "content": "Weather in Paris and Oslo?"},
                message(FIRST),
                function_call("c1", "Paris"),
                message(THEN),
                function_call("c2", "Oslo"),
                {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
                {"type": "function_call_output", "call_id": "c2", "output": "rain"},
            ],
            "tools": [{"type": "function", "name": "weather", "parameters": SCHEMA}],
        }
    )
    replies = [m for m in call.transcript.messages if isinstance(m, AssistantMessage)]
    assert len(replies) == 1 and replies[0].text == FIRST + THEN
    assert [c.offset for c in replies[0].calls] == [len(FIRST), len(FIRST + THEN)]
    _in_order(_assistant_text(call.transcript))


def test_responses_turn_that_opens_with_a_call_keeps_it_first() -> None:
    # [function_call, message, function_call]: the first call stood before any text
    call = responses_wire.decode_request(
        {
            "model": "m",
            "input": [
                {"role": "user", "content": "Weather in Paris and Oslo?"},
                {
                    "type": "function_call",
                    "call_id": "c1",
                    "name": "weather",
                    "arguments": '{"city": "Paris"}',
                },
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": THEN}],
                },
                {
                    "type": "function_call",
                    "call_id": "c2",
                    "name": "weather",
                    "arguments": '{"city": "Oslo"}',
                },
                {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
                {"type": "function_call_output", "call_id": "c2", "output": "rain"},
            ],
            "tools": [{"type": "function", "name": "weather", "parameters": SCHEMA}],
        }
    )
    replies = [m for m in call.transcript.messages if isinstance(m, AssistantMessage)]
    assert len(replies) == 1 and replies[0].text == THEN
    assert [c.offset for c in replies[0].calls] == [0, len(THEN)]
    text = _assistant_text(call.transcript)
    places = [text.find(s) for s in ('"Paris"', THEN, '"Oslo"')]
    assert -1 not in places and places == sorted(places), text


def test_anthropic_consecutive_assistant_messages_are_one_turn() -> None:
    # The Messages API combines consecutive turns of one role: the results that
    # follow answer the calls of both messages.
    call = anthropic_wire.decode_request(
        {
            "model": "m",
            "max_tokens": 50,
            "messages": [
                {"role": "user", "content": "Weather in Paris and Oslo?"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": FIRST},
                        {
                            "type": "tool_use",
                            "id": "t1",
                            "name": "weather",
                            "input": {"city": "Paris"},
                        },
                    ],
                },
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": THEN},
                        {
                            "type": "tool_use",
                            "id": "t2",
                            "name": "weather",
                            "input": {"city": "Oslo"},
                        },
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "t1", "content": "sunny"},
                        {"type": "tool_result", "tool_use_id": "t2", "content": "rain"},
                    ],
                },
            ],
        }
    )
    replies = [m for m in call.transcript.messages if isinstance(m, AssistantMessage)]
    assert len(replies) == 1 and replies[0].text == FIRST + THEN
    assert [c.offset for c in replies[0].calls] == [len(FIRST), len(FIRST + THEN)]
    _in_order(_assistant_text(call.transcript))
