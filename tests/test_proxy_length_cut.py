"""A call the upstream's token limit cuts off after it began streaming ends the
response as the client's own API ends one (not with an error): OpenAI chat
``finish_reason: "length"`` with the partial ``arguments``, Anthropic's
``tool_use`` block closed and ``stop_reason: "max_tokens"``, the Responses API's
``response.incomplete`` with ``max_output_tokens``. The official SDKs are the
clients, Uvicorn on 127.0.0.1 the server and ``FakeServer`` the upstream."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest
from test_proxy import A_WEATHER, PARIS, USER, WEATHER, _anthropic, _openai, _stream, proxy

from streamtools.testing.fake_server import Reply

FN_WEATHER: Any = {"type": "function", **WEATHER["function"]}
# two calls in one reply, the second cut off by the token limit inside its value
CUT = Reply(text=f'{PARIS}\n<am:tool_call name="weather"><city>Os', finish="length")
# a call that breaks for another reason: malformed markup after its name was sent
BROKEN = '<am:tool_call name="weather"><city>Paris</town></am:tool_call>'


def test_openai_stream_ends_with_length_and_the_partial_arguments() -> None:
    with proxy([CUT]) as (url, _):
        chunks, completion = _stream(_openai(url), model="m", messages=USER, tools=[WEATHER])
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert [f for f in finishes if f] == ["length"]
    first, cut = completion.choices[0].message.tool_calls
    assert json.loads(first.function.arguments) == {"city": "Paris"}
    assert cut.function.name == "weather" and cut.function.arguments == '{"city": "Os'


def test_openai_non_streaming_ends_with_length() -> None:
    with proxy([CUT]) as (url, _):
        response = _openai(url).chat.completions.create(model="m", messages=USER, tools=[WEATHER])
    choice = response.choices[0]
    assert choice.finish_reason == "length"
    arguments = [c.function.arguments for c in choice.message.tool_calls or []]  # type: ignore[union-attr]
    assert arguments == ['{"city": "Paris"}', '{"city": "Os']


def test_anthropic_stream_closes_the_block_and_says_max_tokens() -> None:
    with proxy([CUT]) as (url, _):
        with _anthropic(url).messages.stream(
            model="m", max_tokens=64, messages=USER, tools=[A_WEATHER]
        ) as stream:
            events = list(stream)
            message = stream.get_final_message()
    kinds = [e.type for e in events]
    assert kinds.count("content_block_start") == kinds.count("content_block_stop") == 2
    assert kinds[-2:] == ["message_delta", "message_stop"]
    assert message.stop_reason == "max_tokens"
    first, cut = message.content
    assert first.type == cut.type == "tool_use"
    assert first.input == {"city": "Paris"}
    assert cut.input == {}  # its one value still open: the SDK keeps whole values only


def test_anthropic_non_streaming_says_max_tokens() -> None:
    with proxy([CUT]) as (url, _):
        message = _anthropic(url).messages.create(
            model="m", max_tokens=64, messages=USER, tools=[A_WEATHER]
        )
    assert message.stop_reason == "max_tokens"
    assert [(b.type, b.input) for b in message.content] == [  # type: ignore[union-attr]
        ("tool_use", {"city": "Paris"}),
        ("tool_use", {}),
    ]


def test_responses_stream_ends_incomplete() -> None:
    with proxy([CUT]) as (url, _):
        with _openai(url).responses.stream(
            model="m", input="Weather?", tools=[FN_WEATHER], max_output_tokens=64
        ) as stream:
            events = list(stream)
    last = events[-1]
    assert last.type == "response.incomplete"
    response = last.response
    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"
    calls: list[Any] = list(response.output)
    assert [(c.type, c.status) for c in calls] == [
        ("function_call", "completed"),
        ("function_call", "incomplete"),
    ]
    assert json.loads(calls[0].arguments) == {"city": "Paris"}
    assert calls[1].arguments == '{"city": "Os'
    assert not any(e.type in ("error", "response.failed") for e in events)


def test_responses_non_streaming_is_incomplete() -> None:
    with proxy([CUT]) as (url, _):
        response = _openai(url).responses.create(model="m", input="Weather?", tools=[FN_WEATHER])
    assert response.status == "incomplete"
    assert response.incomplete_details.reason == "max_output_tokens"  # type: ignore[union-attr]
    assert [(o.status, o.arguments) for o in response.output] == [  # type: ignore[union-attr]
        ("completed", '{"city": "Paris"}'),
        ("incomplete", '{"city": "Os'),
    ]


def test_a_call_broken_otherwise_still_ends_with_an_error() -> None:
    with proxy([BROKEN, BROKEN]) as (url, _):
        with pytest.raises(openai.APIError, match="malformed call"):
            _stream(_openai(url), model="m", messages=USER, tools=[WEATHER])
        with pytest.raises(anthropic.APIStatusError, match="malformed call"):
            _anthropic(url).messages.create(
                model="m", max_tokens=64, messages=USER, tools=[A_WEATHER]
            )


def test_partial_object_keeps_whole_members_as_the_anthropic_sdk_does() -> None:
    from streamtools.proxy.request import partial_object

    cases = {
        '{"a": 1, "b": "hel': {"a": 1},
        '{"a": {"b": [1, 2': {"a": {"b": [1, 2]}},
        '{"a": 12': {"a": 12},
        '{"a": tr': {},
        '{"a": "x", "b": ': {"a": "x"},
        '{"a": [1, {"b": "c"}, "d': {"a": [1, {"b": "c"}]},
        '{"a": "x\\"y", "b": [true, null': {"a": 'x"y', "b": [True, None]},
        "": {},
        "[1, 2": {},
    }
    for text, want in cases.items():
        assert partial_object(text) == want, text
