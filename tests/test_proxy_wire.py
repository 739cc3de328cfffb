"""The proxy's wire modules, checked against the official SDKs' own types and accumulators."""

from __future__ import annotations

import json
import re
import sys
import typing
from typing import Any

import msgspec
import openai
import pydantic
import pytest
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import Message, RawMessageStreamEvent
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.lib.streaming.responses import ResponseStreamState
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionMessageFunctionToolCall,
)
from openai.types.responses import Response, ResponseStreamEvent

from streamtools.events import ArgsDelta, CallEnd, CallStart, Event, Finish, TextDelta, Usage
from streamtools.model import ChatMessage, ToolSpec, UseTool
from streamtools.proxy import anthropic_wire, openai_wire, responses_wire
from streamtools.proxy.freeform import RawInput
from streamtools.proxy.request import ProxyCall, Reply, RequestError
from streamtools.proxy.upstream import callable_tools, upstream_request
from streamtools.transcript import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    Transcript,
    UserMessage,
)

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def _call(index: int, call_id: str, name: str, fragments: list[str]) -> list[Event]:
    args = json.loads("".join(fragments))
    events: list[Event] = [CallStart(index=index, id=call_id, name=name)]
    events += [ArgsDelta(index=index, id=call_id, delta=f) for f in fragments]
    events.append(CallEnd(index=index, id=call_id, name=name, arguments=args, raw="r"))
    return events


TWO_CALLS: list[Event] = [
    TextDelta(text="Let me "),
    TextDelta(text="check."),
    *_call(0, "call_a", "weather", ['{"ci', 'ty": "Par', 'is"}']),
    *_call(1, "call_b", "kom.memory.v1.search", ['{"q": "é\\n"}']),
    Usage(input_tokens=12, output_tokens=7),
    Finish(reason="stop"),
]


def _sse_data(raw: bytes) -> list[str]:
    return [line[len("data: ") :] for line in raw.decode().split("\n") if line.startswith("data: ")]


_REASONING = (".delta.reasoning_content", ".delta.reasoning")


def _openai_stream(events: list[Event], include_usage: bool) -> tuple[list[str], Any]:
    enc = openai_wire.ChunkEncoder("m", include_usage=include_usage)
    raw = enc.start() + b"".join(enc.encode(e) for e in events)
    datas = _sse_data(raw)
    assert datas[-1] == "[DONE]"
    state = ChatCompletionStreamState()
    for data in datas[:-1]:
        chunk = ChatCompletionChunk.model_validate_json(data)
        # nothing the API does not write, but the reasoning fields of the APIs
        # that carry reasoning (``openai_wire.reasoning_fields``)
        extra = [f for f in _extra_fields(chunk) if not f.endswith(_REASONING)]
        assert extra == [], data
        state.handle_chunk(chunk)
    return datas, state.current_completion_snapshot


# the SDK's event classes by their ``type``
_RESPONSE_EVENTS: dict[str, Any] = {
    typing.get_args(c.model_fields["type"].annotation)[0]: c
    for c in typing.get_args(typing.get_args(ResponseStreamEvent)[0])
}


def _extra_fields(value: Any, path: str = "") -> list[str]:
    """Fields the SDK's types do not have, anywhere in a parsed value."""
    if isinstance(value, pydantic.BaseModel):
        found = [f"{path}.{name}" for name in value.model_extra or {}]
        for name in type(value).model_fields:
            found += _extra_fields(getattr(value, name), f"{path}.{name}")
        return found
    if isinstance(value, list):
        return [f for i, v in enumerate(value) for f in _extra_fields(v, f"{path}[{i}]")]
    return []


def _responses_stream(events: list[Event], call: ProxyCall | None = None) -> tuple[list[Any], Any]:
    """The Responses encoder's output, each event validated against the SDK's own
    types (strictly: a missing or mistyped field fails), then accumulated by the
    SDK's stream state; the final response, or None without ``response.completed``."""
    call = call or ProxyCall(model="m", transcript=Transcript(messages=[UserMessage(content="hi")]))
    enc = responses_wire.EventEncoder(call)
    raw = enc.start() + b"".join(enc.encode(e) for e in events)
    lines = raw.decode().split("\n")
    names = [line[len("event: ") :] for line in lines if line.startswith("event: ")]
    state = ResponseStreamState(input_tools=openai.omit, text_format=openai.omit)
    parsed, final = [], None
    for name, data in zip(names, _sse_data(raw), strict=True):
        kind = json.loads(data)["type"]
        event = _RESPONSE_EVENTS[kind].model_validate_json(data, strict=True)
        assert event.type == name  # the SSE event name is the data's type
        assert _extra_fields(event) == [], kind  # and nothing the API does not write
        parsed.append(event)
        for out in state.handle_event(event):
            if out.type == "response.completed":
                final = out.response
    return parsed, final


def test_responses_stream_accumulates_to_function_calls() -> None:
    parsed, final = _responses_stream(TWO_CALLS)
    assert [e.sequence_number for e in parsed] == list(range(len(parsed)))
    assert final.status == "completed" and final.output_text == "Let me check."
    calls = [o for o in final.output if o.type == "function_call"]
    assert [(c.call_id, c.name) for c in calls] == [
        ("call_a", "weather"),
        ("call_b", "kom.memory.v1.search"),
    ]
    assert json.loads(calls[1].arguments) == {"q": "é\n"}
    assert final.usage.input_tokens == 12 and final.usage.total_tokens == 19
    # fragments forwarded as given, each under its own item
    deltas = [e for e in parsed if e.type == "response.function_call_arguments.delta"]
    assert len(deltas) == len([e for e in TWO_CALLS if isinstance(e, ArgsDelta)])
    assert len({e.item_id for e in deltas}) == 2
    # the non-streaming body is the same response, and valid as the SDK's type
    body = Response.model_validate(responses_wire.response_body(_reply(TWO_CALLS), ProxyCall(
        model="m", transcript=Transcript(messages=[UserMessage(content="hi")])
    )), strict=True)
    assert [(o.type, getattr(o, "name", None)) for o in body.output] == [
        (o.type, getattr(o, "name", None)) for o in final.output
    ]
    assert body.output_text == "Let me check." and _extra_fields(body) == []


def _custom_call(arguments: Any, cuts: list[int]) -> list[Event]:
    """A call of the custom tool ``apply_patch`` whose JSON arguments arrive cut at ``cuts``."""
    text = json.dumps(arguments)  # escapes everything past ASCII: \\uXXXX, surrogate pairs
    bounds = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    fragments = [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    return _call(0, "call_p", "apply_patch", fragments) + [Finish(reason="tool_calls")]


PATCHING = ProxyCall(
    model="m",
    transcript=Transcript(messages=[UserMessage(content="hi")]),
    tools=[ToolSpec(name="apply_patch", description="Edit files.", parameters={})],
    freeform=["apply_patch"],
)


@settings(max_examples=200, deadline=None)
@given(st.text(), st.lists(st.integers(0, 400), max_size=12))
def test_custom_tool_text_streams_decoded_whatever_the_cuts(value: str, cuts: list[int]) -> None:
    # escapes cut anywhere, a surrogate pair cut between its halves: the deltas
    # are the text itself, nothing taken back, and the item carries all of it
    parsed, final = _responses_stream(_custom_call({"input": value}, cuts), PATCHING)
    deltas = [e.delta for e in parsed if e.type == "response.custom_tool_call_input.delta"]
    assert "".join(deltas) == value and all(deltas)
    (done,) = [e for e in parsed if e.type == "response.custom_tool_call_input.done"]
    assert done.input == value
    (item,) = final.output
    assert (item.type, item.name, item.input, item.call_id) == (
        "custom_tool_call", "apply_patch", value, "call_p"
    )


def test_custom_tool_text_leaves_as_soon_as_it_is_certain() -> None:
    raw = RawInput()
    pieces = ['{"inp', 'ut": "ab', 'c\\u00', 'e9d \\ud83d', '\\ude00', '!", "x": 1}', "more"]
    assert [raw.feed(p) for p in pieces] == ["", "ab", "c", "éd ", "😀", "!", ""]
    other = RawInput()
    assert [other.feed(p) for p in ['{"pa', 'tch": "x"}']] == ["", ""]  # not this shape


def test_custom_tool_arguments_of_another_shape_come_whole_at_the_end() -> None:
    parsed, final = _responses_stream(_custom_call({"patch": "x", "n": 1}, [3, 9]), PATCHING)
    deltas = [e for e in parsed if e.type == "response.custom_tool_call_input.delta"]
    assert len(deltas) == 1 and json.loads(deltas[0].delta) == {"patch": "x", "n": 1}
    assert json.loads(final.output[0].input) == {"patch": "x", "n": 1}
    events = _custom_call({"input": "*** Begin Patch"}, [])
    body: Any = Response.model_validate(
        responses_wire.response_body(_reply(events), PATCHING), strict=True
    )
    assert [(o.type, o.input) for o in body.output] == [("custom_tool_call", "*** Begin Patch")]
    assert body.tools[0].type == "custom" and _extra_fields(body) == []


def test_custom_tool_named_as_the_choice() -> None:
    call = responses_wire.decode_request({
        "model": "m",
        "input": "fix it",
        "tools": [{"type": "custom", "name": "apply_patch", "format": {"type": "text"}}],
        "tool_choice": {"type": "custom", "name": "apply_patch"},
    })
    assert (call.tool_choice, call.freeform) == (UseTool("apply_patch"), ["apply_patch"])
    assert call.tools[0].parameters["required"] == ["input"]
    body: Any = Response.model_validate(
        responses_wire.response_body(_reply(_custom_call({"input": "x"}, [])), call), strict=True
    )
    assert (body.tool_choice.type, body.tool_choice.name) == ("custom", "apply_patch")


def test_openai_stream_accumulates_to_tool_calls() -> None:
    datas, completion = _openai_stream(TWO_CALLS, include_usage=True)
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Let me check."
    calls = choice.message.tool_calls
    assert [(c.id, c.function.name) for c in calls] == [
        ("call_a", "weather"),
        ("call_b", "kom.memory.v1.search"),
    ]
    assert json.loads(calls[0].function.arguments) == {"city": "Paris"}
    assert json.loads(calls[1].function.arguments) == {"q": "é\n"}
    assert completion.usage is not None and completion.usage.total_tokens == 19
    # exactly one finish_reason, the usage chunk has no choices, fragments forwarded as given
    chunks = [json.loads(d) for d in datas[:-1]]
    reasons = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
    assert [r for r in reasons if r is not None] == ["tool_calls"]
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["prompt_tokens"] == 12
    first_call = [c for c in chunks if c["choices"] and "tool_calls" in c["choices"][0]["delta"]][0]
    assert first_call["choices"][0]["delta"]["tool_calls"][0] == {
        "index": 0,
        "id": "call_a",
        "type": "function",
        "function": {"name": "weather", "arguments": ""},
    }
    fragments = [
        c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
        for c in chunks
        if c["choices"] and "tool_calls" in c["choices"][0]["delta"]
    ]
    assert fragments == ["", '{"ci', 'ty": "Par', 'is"}', "", '{"q": "é\\n"}']


def test_openai_stream_without_usage_and_without_calls() -> None:
    events: list[Event] = [TextDelta(text="hi"), Finish(reason="length")]
    datas, completion = _openai_stream(events, include_usage=False)
    assert completion.choices[0].finish_reason == "length"
    assert completion.choices[0].message.content == "hi"
    assert all("usage" not in json.loads(d) for d in datas[:-1])


def test_openai_error_chunk_is_raised_by_the_sdk_format() -> None:
    enc = openai_wire.ChunkEncoder("m")
    data = json.loads(_sse_data(enc.error(502, "cut", "upstream"))[0])
    assert data["error"]["message"] == "cut" and data["error"]["type"] == "upstream_error"


def _reply(events: list[Event]) -> Reply:
    reply = Reply()
    for e in events:
        reply.add(e)
    return reply


def test_openai_body_matches_stream() -> None:
    body = openai_wire.response_body(_reply(TWO_CALLS), "m")
    completion = ChatCompletion.model_validate(body)
    assert _extra_fields(completion) == []
    _, streamed = _openai_stream(TWO_CALLS, include_usage=True)
    assert completion.choices[0].finish_reason == "tool_calls"
    assert completion.choices[0].message.content == streamed.choices[0].message.content
    body_calls = completion.choices[0].message.tool_calls or []
    got = [
        (c.id, c.function.name, c.function.arguments)
        for c in body_calls
        if isinstance(c, ChatCompletionMessageFunctionToolCall)
    ]
    assert len(got) == 2
    want = [
        (c.id, c.function.name, c.function.arguments)
        for c in streamed.choices[0].message.tool_calls
    ]
    assert got == want
    assert completion.usage is not None and completion.usage.completion_tokens == 7


_ANTHROPIC_EVENT: pydantic.TypeAdapter[RawMessageStreamEvent] = pydantic.TypeAdapter(
    RawMessageStreamEvent
)


def _anthropic_stream(events: list[Event]) -> tuple[list[tuple[str, dict[str, Any]]], Any]:
    enc = anthropic_wire.EventEncoder("claude-x")
    raw = (enc.start() + b"".join(enc.encode(e) for e in events)).decode()
    parsed: list[tuple[str, dict[str, Any]]] = []
    for block in raw.split("\n\n"):
        if not block:
            continue
        name_line, data_line = block.split("\n")
        name, data = name_line.removeprefix("event: "), json.loads(data_line.removeprefix("data: "))
        assert data["type"] == name
        parsed.append((name, data))
    snapshot: Any = None
    bufs: dict[int, bytes] = {}
    for _, data in parsed:
        event = _ANTHROPIC_EVENT.validate_python(data)
        assert _extra_fields(event) == [], data  # nothing the API does not write
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=bufs)
    return parsed, snapshot


def test_anthropic_stream_accumulates_to_tool_use() -> None:
    parsed, message = _anthropic_stream(TWO_CALLS)
    names = [n for n, _ in parsed]
    assert names == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert message.stop_reason == "tool_use"
    assert [b.type for b in message.content] == ["text", "tool_use", "tool_use"]
    assert message.content[0].text == "Let me check."
    assert message.content[1].input == {"city": "Paris"}
    assert message.content[2].name == "kom.memory.v1.search"
    assert message.usage.output_tokens == 7
    body = Message.model_validate(anthropic_wire.response_body(_reply(TWO_CALLS), "claude-x"))
    assert body.stop_reason == "tool_use" and _extra_fields(body) == []
    assert [b.model_dump() for b in body.content] == [b.model_dump() for b in message.content]


def test_anthropic_stop_sequence_and_max_tokens() -> None:
    _, message = _anthropic_stream([TextDelta(text="a"), Finish(reason="stop", stop_sequence="X")])
    assert (message.stop_reason, message.stop_sequence) == ("stop_sequence", "X")
    _, message = _anthropic_stream([TextDelta(text="a"), Finish(reason="length")])
    assert message.stop_reason == "max_tokens"


@settings(max_examples=60, deadline=None)
@given(
    args=st.dictionaries(st.text(max_size=5), st.text(max_size=20) | st.integers(), max_size=4),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=8),
)
def test_fragments_pass_through_any_split(args: dict[str, Any], cuts: list[int]) -> None:
    text = msgspec.json.encode(args).decode()
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    fragments = [text[a:b] for a, b in zip(points, points[1:], strict=False) if b > a]
    events = [*_call(0, "call_x", "f", fragments), Finish(reason="stop")]
    _, completion = _openai_stream(events, include_usage=False)
    assert json.loads(completion.choices[0].message.tool_calls[0].function.arguments) == args
    _, message = _anthropic_stream(events)
    assert message.content[0].input == args


def test_openai_request_decoding() -> None:
    call = openai_wire.decode_request(
        {
            "model": "m",
            "stream": True,
            "stream_options": {"include_usage": True},
            "messages": [
                {"role": "developer", "content": "Be brief."},
                {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "rain"},
            ],
            "tools": [{"type": "function", "function": {"name": "weather", "parameters": WEATHER}}],
            "tool_choice": {"type": "function", "function": {"name": "weather"}},
            "parallel_tool_calls": False,
            "stop": "END",
            "max_completion_tokens": 50,
        }
    )
    assert call.transcript.messages == [
        SystemMessage(content="Be brief."),
        UserMessage(content="Weather?"),
        AssistantMessage(calls=(ToolCall(id="c1", name="weather", arguments={"city": "Oslo"}),)),
        ToolResultMessage(call_id="c1", name="weather", content="rain"),
    ]
    assert (call.tool_choice, call.parallel, call.stop, call.max_tokens) == (
        UseTool("weather"),
        False,
        ["END"],
        50,
    )
    assert call.stream and call.include_usage and call.tools[0].parameters == WEATHER


_USER: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "x"}]}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"messages": [{"role": "user", "content": "x"}]}, "'model' is required"),
        ({"model": "m", "messages": []}, "'messages' must be a non-empty array"),
        (
            {"model": "m", "messages": [{"role": "user", "content": [{"type": "video"}]}]},
            "messages[0]: content part of type 'video' is not supported",
        ),
        (
            {
                "model": "m",
                "messages": [{"role": "user", "content": "x"}],
                "tool_choice": "required",
            },
            "tool_choice 'required' was given but the request has no tools",
        ),
        # a field of the wrong JSON type is a 400 naming it, not a crash (once a 500)
        ({**_USER, "tools": 1}, "tools must be an array"),
        ({**_USER, "stream": "false"}, "stream must be a boolean"),  # truthy in Python
        ({**_USER, "tools": [{"function": {"name": "a", "parameters": [1]}}]}, "tools[0]"),
        ({**_USER, "tools": [{"function": {"name": "a", "description": 7}}]}, "tools[0]"),
        ({**_USER, "stop": 5}, "stop must be a string or an array of strings"),
        ({**_USER, "stop": ["a", None]}, "stop must be a string or an array of strings"),
        ({**_USER, "temperature": "hot"}, "temperature must be a number"),
        ({**_USER, "top_p": True}, "top_p must be a number"),
        ({**_USER, "seed": 1.5}, "seed must be an integer"),
        ({**_USER, "top_k": "40"}, "top_k must be an integer"),
        ({**_USER, "frequency_penalty": [1]}, "frequency_penalty must be a number"),
        # once dropped in silence: the answer ran on, calls came in parallel
        ({**_USER, "max_tokens": "50"}, "max_tokens must be a positive integer"),
        ({**_USER, "max_tokens": True}, "max_tokens must be a positive integer"),
        ({**_USER, "max_completion_tokens": 0}, "max_completion_tokens must be a positive"),
        ({**_USER, "parallel_tool_calls": "false"}, "parallel_tool_calls must be a boolean"),
        ({**_USER, "response_format": "json"}, "response_format must be an object of type"),
        (
            {**_USER, "response_format": {"type": "json_schema", "json_schema": {"name": "x"}}},
            "response_format of type json_schema needs a JSON Schema object",
        ),
        (
            {"model": "m", "messages": [{"role": "assistant", "tool_calls": 3}]},
            "messages[0].tool_calls must be an array",
        ),
        (
            {"model": "m", "messages": [{"role": "assistant", "tool_calls": [
                {"id": "c", "function": {"name": "a", "arguments": 3}}
            ]}]},
            "messages[0].tool_calls[0]: function.arguments must be a string of JSON",
        ),
        (
            {"model": "m", "messages": [{"role": "tool", "tool_call_id": "x", "name": 1}]},
            "messages[0].name must be a string",
        ),
    ],
)
def test_openai_request_errors(body: dict[str, Any], message: str) -> None:
    with pytest.raises(RequestError) as info:
        openai_wire.decode_request(body)
    assert info.value.message.startswith(message) and info.value.status == 400


@pytest.mark.parametrize("arguments", ["[1]", '{"v": ' + "[" * 5000, '{"city": "Par', "x"])
def test_past_arguments_that_are_not_a_json_object_are_kept_as_text(arguments: str) -> None:
    # OpenAI's API takes any string: a 400 refused the conversation from then on
    call = {"id": "c", "type": "function", "function": {"name": "a", "arguments": arguments}}
    body = {"model": "m", "messages": [{"role": "assistant", "tool_calls": [call]}]}
    (reply,) = openai_wire.decode_request(body).transcript.messages
    assert isinstance(reply, AssistantMessage)
    assert reply.calls[0].arguments == {} and reply.calls[0].arguments_text == arguments


def test_openai_token_limit_and_parallel_flag() -> None:
    def decoded(**extra: Any) -> tuple[int | None, bool]:
        call = openai_wire.decode_request({**_USER, **extra})
        return call.max_tokens, call.parallel

    assert decoded() == (None, True)
    assert decoded(max_tokens=50, parallel_tool_calls=None) == (50, True)
    assert decoded(max_tokens=50, max_completion_tokens=20) == (20, True)  # the newer name
    assert decoded(max_completion_tokens=None, parallel_tool_calls=False) == (None, False)


def test_anthropic_request_decoding() -> None:
    call = anthropic_wire.decode_request(
        {
            "model": "claude-x",
            "max_tokens": 100,
            "system": [{"type": "text", "text": "Be brief."}],
            "messages": [
                {"role": "user", "content": "Weather?"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hm", "signature": "s"},
                        {"type": "text", "text": "Checking."},
                        {
                            "type": "tool_use",
                            "id": "t1",
                            "name": "weather",
                            "input": {"city": "Oslo"},
                        },
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "t1",
                            "content": "boom",
                            "is_error": True,
                        },
                        {"type": "text", "text": "And tomorrow?"},
                    ],
                },
            ],
            "tools": [{"name": "weather", "description": "d", "input_schema": WEATHER}],
            "tool_choice": {"type": "any", "disable_parallel_tool_use": True},
            "stop_sequences": ["END"],
        }
    )
    assert call.transcript.messages == [
        SystemMessage(content="Be brief."),
        UserMessage(content="Weather?"),
        AssistantMessage(
            text="Checking.",
            # after the 9 characters of text before it (``offset``)
            calls=(ToolCall(id="t1", name="weather", arguments={"city": "Oslo"}, offset=9),),
        ),
        ToolResultMessage(call_id="t1", name="weather", content="boom", is_error=True),
        UserMessage(content="And tomorrow?"),
    ]
    assert (call.tool_choice, call.parallel, call.stop, call.max_tokens) == (
        "required",
        False,
        ["END"],
        100,
    )


def test_separate_text_blocks_stay_apart() -> None:
    # Blocks were joined with nothing between them: a tool result of two blocks
    # (an MCP tool's two content items) reached the model as "9Csunny", and
    # Claude Code's <system-reminder> block ran into the user's own words. They
    # are joined with a newline, as vLLM joins a message's text parts.
    tool_use = {"type": "tool_use", "id": "t1", "name": "weather", "input": {}}
    two = [{"type": "text", "text": "9C"}, {"type": "text", "text": "sunny"}]
    call = anthropic_wire.decode_request(
        {
            "model": "m",
            "max_tokens": 5,
            "system": [
                {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "Answer in French."},
            ],
            "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "<system-reminder>x</system-reminder>"},
                    {"type": "text", "text": "Weather?"},
                ]},
                {"role": "assistant", "content": [tool_use]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": two, "is_error": True},
                ]},
            ],
        }
    )
    assert call.transcript.messages[0] == SystemMessage(content="Be brief.\nAnswer in French.")
    assert call.transcript.messages[1] == UserMessage(
        content="<system-reminder>x</system-reminder>\nWeather?"
    )
    assert call.transcript.messages[3] == ToolResultMessage(
        call_id="t1", name="weather", content="9C\nsunny", is_error=True
    )
    parts = [{"type": "text", "text": "9C"}, {"type": "text", "text": "sunny"}]
    chat = openai_wire.decode_request(
        {
            "model": "m",
            "messages": [
                {"role": "user", "content": parts},
                {"role": "tool", "tool_call_id": "c1", "content": parts},
            ],
        }
    )
    assert [m.content for m in chat.transcript.messages] == ["9C\nsunny", "9C\nsunny"]  # type: ignore[union-attr]
    inputs = [{"type": "input_text", "text": "9C"}, {"type": "input_text", "text": "sunny"}]
    output = {"type": "function_call_output", "call_id": "c1", "output": inputs}
    responses = responses_wire.decode_request({"model": "m", "input": [output]})
    assert responses.transcript.messages[0].content == "9C\nsunny"  # type: ignore[union-attr]


OMITTED = "[image omitted: this model reads text only]"


def test_an_image_is_a_placeholder_not_a_400() -> None:
    # A coding agent that reads an image file puts the image in a tool result,
    # and a user pastes one (Claude Code, for one): refused with a 400, every
    # later request of the conversation was refused too. It is a placeholder the
    # model reads, and can answer to, named alike on the three APIs.
    png = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}
    image = {"type": "image", "source": png}
    tool_use = {"type": "tool_use", "id": "t1", "name": "read", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": [
        {"type": "text", "text": "logo.png:"}, image,
    ]}
    call = anthropic_wire.decode_request({
        "model": "m", "max_tokens": 5,
        "messages": [
            {"role": "user", "content": "Look at logo.png"},
            {"role": "assistant", "content": [tool_use]},
            {"role": "user", "content": [result]},
            {"role": "assistant", "content": "I read it."},
            {"role": "user", "content": [{"type": "text", "text": "And this?"}, image]},
        ],
    })
    assert call.transcript.messages[2] == ToolResultMessage(
        call_id="t1", name="read", content=f"logo.png:\n{OMITTED}"
    )
    assert call.transcript.messages[4] == UserMessage(content=f"And this?\n{OMITTED}")
    url = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    chat = openai_wire.decode_request({
        "model": "m",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "And this?"}, url]},
            {"role": "tool", "tool_call_id": "c1", "content": [url]},
        ],
    })
    assert chat.transcript.messages[0] == UserMessage(content=f"And this?\n{OMITTED}")
    assert chat.transcript.messages[1].content == OMITTED  # type: ignore[union-attr]
    picture = {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}
    output = {"type": "function_call_output", "call_id": "c1", "output": [picture]}
    said = {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "And this?"}, picture,
    ]}
    responses = responses_wire.decode_request({"model": "m", "input": [output, said]})
    assert responses.transcript.messages == [
        ToolResultMessage(call_id="c1", name="tool", content=OMITTED),
        UserMessage(content=f"And this?\n{OMITTED}"),
    ]
    pdf = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                          "data": "JVBERi0xLjQ="}}
    doc = anthropic_wire.decode_request(
        {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": [pdf]}]}
    )
    assert doc.transcript.messages == [
        UserMessage(content="[document omitted: this model reads text only]")
    ]
    # a part of no type the APIs have is still a 400, one of an unhashable type too
    for kind in ("video", ["image"]):
        with pytest.raises(RequestError, match="is not supported"):
            anthropic_wire.decode_request({"model": "m", "max_tokens": 5, "messages": [
                {"role": "user", "content": [{"type": kind}]},
            ]})
        with pytest.raises(RequestError, match="is not supported"):
            openai_wire.decode_request(
                {"model": "m", "messages": [{"role": "user", "content": [{"type": kind}]}]}
            )


def test_anthropic_request_errors() -> None:
    with pytest.raises(RequestError, match="max_tokens"):
        anthropic_wire.decode_request(
            {"model": "m", "messages": [{"role": "user", "content": "x"}]}
        )
    with pytest.raises(RequestError, match="not among the request's tools"):
        anthropic_wire.decode_request(
            {
                "model": "m",
                "max_tokens": 5,
                "messages": [{"role": "user", "content": "x"}],
                "tools": [{"name": "a", "input_schema": WEATHER}],
                "tool_choice": {"type": "tool", "name": "b"},
            }
        )
    base: dict[str, Any] = {**_USER, "max_tokens": 5}
    cases: list[tuple[dict[str, Any], str]] = [
        ({"tools": {"name": "a"}}, "tools must be an array"),
        ({"tools": [{"name": "a", "input_schema": "x"}]}, "tools[0].input_schema must be"),
        ({"stop_sequences": [1]}, "stop_sequences must be a string or an array of strings"),
        ({"temperature": [0.5]}, "temperature must be a number"),
        ({"top_k": 2.5}, "top_k must be an integer"),
        ({"stream": 0}, "stream must be a boolean"),
        ({"top_p": "0.9"}, "top_p must be a number"),
        ({"output_config": []}, "output_config must be an object"),
        ({"output_config": {"format": {"type": "json"}}}, "must be an object of type json_schema"),
        (
            {"output_config": {"format": {"type": "json_schema", "schema": 1}}},
            "output_config.format of type json_schema needs a JSON Schema object",
        ),
        # a text that is not a string was str()'d: the model read "None" for null
        (
            {"messages": [{"role": "user", "content": [{"type": "text", "text": None}]}]},
            "messages[0]: a text block needs a string 'text'",
        ),
        (
            {"messages": [{"role": "assistant", "content": [{"type": "text"}]}]},
            "messages[0]: a text block needs a string 'text'",
        ),
    ]
    for extra, message in cases:
        with pytest.raises(RequestError, match=re.escape(message)):
            anthropic_wire.decode_request({**base, **extra})
    # a past call's input is never dropped: an object, a string of one, another
    # string as text (OpenAI arguments a client converted), or a 400
    inputs: list[tuple[Any, Any, str | None]] = [
        ({"city": "Oslo"}, {"city": "Oslo"}, None),
        ('{"city": "Oslo"}', {"city": "Oslo"}, None),
        (None, {}, None),
        (["Oslo"], None, None),
        ("Oslo", {}, "Oslo"),
    ]
    for sent, arguments, text in inputs:
        use = {"type": "tool_use", "id": "t1", "name": "weather", "input": sent}
        turn = {"role": "assistant", "content": [use]}
        body = {**base, "messages": [*base["messages"], turn]}
        if arguments is None:
            with pytest.raises(RequestError, match=r"messages\[1\]: tool_use.input"):
                anthropic_wire.decode_request(body)
        else:
            (reply,) = anthropic_wire.decode_request(body).transcript.messages[1:]
            assert isinstance(reply, AssistantMessage) and reply.calls[0].arguments == arguments
            assert reply.calls[0].arguments_text == text
    body = anthropic_wire.error_body(413, "too big", "too_large")
    assert body == {"type": "error", "error": {"type": "request_too_large", "message": "too big"}}


def test_empty_stop_strings_are_dropped_from_requests() -> None:
    messages = [{"role": "user", "content": "hi"}]
    openai_call = openai_wire.decode_request(
        {"model": "m", "messages": messages, "stop": ["", "END"]}
    )
    assert openai_call.stop == ["END"]
    assert openai_wire.decode_request({"model": "m", "messages": messages, "stop": ""}).stop == []
    anthropic_call = anthropic_wire.decode_request(
        {"model": "m", "max_tokens": 5, "messages": messages, "stop_sequences": ["", "END"]}
    )
    assert anthropic_call.stop == ["END"]


class CountedName(str):
    """A tool name that counts its comparisons with other names: the work of
    looking names up, which a set does once per name and a scan of a list once
    per name before it."""

    compared = 0
    __hash__ = str.__hash__

    def __eq__(self, other: object) -> bool:
        CountedName.compared += 1
        return str.__eq__(self, other)


def test_a_huge_tool_list_is_decoded_in_linear_work() -> None:
    # Each Responses tool was checked against every one before it (a name declared
    # twice counts once), and an allowed_tools choice scanned its list per tool:
    # 20k tools took seconds of the event loop, while the proxy served no other
    # stream. Work is counted, not timed: name comparisons, about one per tool.
    n = 2_000
    tools = [{"type": "function", "name": CountedName(f"t{i}"), "parameters": {}} for i in range(n)]
    allowed = [{"type": "function", "name": CountedName(f"t{i}")} for i in range(n)]
    body = {
        "model": "m",
        "input": "x",
        "tools": tools,
        "tool_choice": {"type": "allowed_tools", "mode": "auto", "tools": allowed},
    }
    CountedName.compared = 0
    shown = callable_tools(responses_wire.decode_request(body))
    assert len(shown) == n and shown[-1].name == f"t{n - 1}"
    assert CountedName.compared <= 4 * n  # quadratic: about n * n


def copies_counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Characters and calls copied into the messages the proxy builds (the
    transcript's assistant turns, the messages sent upstream), summed: each
    ``AssistantMessage`` and ``ChatMessage`` the package makes from now on adds
    its size to the one-item list returned. Building a turn or a run of user
    messages again at each of its parts copies the part so far each time."""
    copied = [0]

    class CountedTurn(AssistantMessage, frozen=True, kw_only=True, tag="assistant"):
        def __post_init__(self) -> None:
            copied[0] += len(self.text) + len(self.calls)

    class CountedMessage(ChatMessage, frozen=True, kw_only=True):
        def __post_init__(self) -> None:
            copied[0] += len(self.content) + len(self.tool_calls)

    for cls, counted in ((AssistantMessage, CountedTurn), (ChatMessage, CountedMessage)):
        for name, module in list(sys.modules.items()):
            if name.startswith("streamtools") and vars(module).get(cls.__name__) is cls:
                monkeypatch.setattr(module, cls.__name__, counted)
    return copied


def test_long_runs_of_messages_are_read_and_projected_in_linear_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Consecutive assistant messages (Anthropic) and a message's function_call
    # items (Responses) were merged into the turn so far at each part, and
    # adjacent user messages (short ones, or orphan results) were joined pairwise:
    # quadratic, 40k of them took seconds of the event loop (an 8 MiB body of them
    # minutes), while the proxy served no other stream. Work is counted, not
    # timed: doubling the run must about double what is copied into messages.
    def bodies(n: int) -> list[tuple[Any, dict[str, Any]]]:
        tool_use = {"type": "tool_use", "id": "t", "name": "f", "input": {}}
        return [
            (anthropic_wire, {"model": "m", "max_tokens": 5, "messages": [
                {"role": "user", "content": "go"},
                *({"role": "assistant", "content": [{**tool_use, "id": f"t{i}"}]}
                  for i in range(n)),
            ]}),
            (responses_wire, {"model": "m", "input": [
                {"role": "user", "content": "go"},
                *({"type": "function_call", "call_id": f"c{i}", "name": "f", "arguments": "{}"}
                  for i in range(n)),
            ]}),
            (openai_wire, {"model": "m", "messages": [{"role": "user", "content": "go"}] * n}),
            (openai_wire, {"model": "m", "messages": [
                {"role": "tool", "tool_call_id": f"c{i}", "content": "x"} for i in range(n)
            ]}),
        ]

    copied = copies_counted(monkeypatch)
    work: list[list[int]] = []
    for n in (1_000, 2_000):
        work.append([])
        for wire, body in bodies(n):
            copied[0] = 0
            messages = upstream_request(wire.decode_request(body), "am_xml").messages
            assert len(messages) <= 3  # (a system prompt,) the user's, one assistant turn
            work[-1].append(copied[0])
    for (wire, _), small, large in zip(bodies(0), *work, strict=True):
        assert large <= 2.2 * small, wire.__name__  # quadratic: 4 times as much


def test_an_anthropic_text_document_is_read_as_its_text() -> None:
    """A ``document`` whose source is text (plain, or text content blocks) is
    text the upstream can read: the model gets it, under its title, in a user
    message and in a tool's result, where it was a placeholder as a PDF is."""
    plain = {"type": "document", "title": "notes.txt",
             "source": {"type": "text", "media_type": "text/plain", "data": "line 1\nline 2"}}
    blocks = {"type": "document", "source": {"type": "content", "content": [
        {"type": "text", "text": "part a"}, {"type": "text", "text": "part b"},
    ]}}
    use = {"type": "tool_use", "id": "t1", "name": "read", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": [plain]}
    doc = anthropic_wire.decode_request({"model": "m", "max_tokens": 5, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Read these."}, plain, blocks]},
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [result]},
    ]})
    said, _, answer = doc.transcript.messages
    assert said == UserMessage(
        content="Read these.\n[document: notes.txt]\nline 1\nline 2\n[document]\npart a\npart b"
    )
    assert answer.content == "[document: notes.txt]\nline 1\nline 2"  # type: ignore[union-attr]


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
@pytest.mark.parametrize("name", ["temperature", "top_p"])
def test_a_sampling_value_that_is_not_finite_is_a_400(name: str, value: float) -> None:
    """A body decoded by a caller of ``decode_request`` (not by JSON, which has no
    infinity) may hold one; it went upstream as ``null``, which a server reads as
    absent. The proxy's fuzz property drew ``top_p: inf`` on the Responses wire."""
    user = {"role": "user", "content": "Hi"}
    bodies = [
        (openai_wire, {"model": "m", "messages": [user], name: value}),
        (anthropic_wire, {"model": "m", "max_tokens": 5, "messages": [user], name: value}),
        (responses_wire, {"model": "m", "input": "Hi", name: value}),
    ]
    for module, body in bodies:
        with pytest.raises(RequestError, match=f"{name} must be a finite number"):
            module.decode_request(body)
