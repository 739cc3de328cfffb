"""The SDKs' parsing helpers through the proxy: the openai SDK's
``chat.completions.parse`` / ``.stream`` with a pydantic tool or format and
``responses.parse``, and the anthropic SDK's ``messages.parse``, each of which
reads the proxy's answer into the caller's type."""

from __future__ import annotations

from typing import Any

import openai
from pydantic import BaseModel
from test_proxy import PARIS, USER, _anthropic, _openai, proxy

ANSWER = '{"temp": 9, "sky": "rain"}'


class Weather(BaseModel):
    city: str


class Answer(BaseModel):
    temp: int
    sky: str


def test_chat_parse_reads_a_call_into_its_tool_type_streamed_or_not() -> None:
    tool: Any = openai.pydantic_function_tool(Weather, name="weather")
    with proxy([PARIS, PARIS]) as (url, _):
        client = _openai(url)
        whole = client.chat.completions.parse(model="m", messages=USER, tools=[tool])
        with client.chat.completions.stream(model="m", messages=USER, tools=[tool]) as stream:
            done = [e for e in stream if e.type == "tool_calls.function.arguments.done"]
            streamed = stream.get_final_completion()
    for completion in (whole, streamed):
        (call,) = completion.choices[0].message.tool_calls or []
        assert call.function.parsed_arguments == Weather(city="Paris")
        assert completion.choices[0].finish_reason == "tool_calls"
    assert [e.parsed_arguments for e in done] == [Weather(city="Paris")]


def test_chat_and_responses_parse_read_the_json_asked_for() -> None:
    with proxy([ANSWER] * 3) as (url, upstream):
        client = _openai(url)
        chat = client.chat.completions.parse(model="m", messages=USER, response_format=Answer)
        with client.chat.completions.stream(
            model="m", messages=USER, response_format=Answer
        ) as stream:
            for _ in stream:
                pass
            streamed = stream.get_final_completion()
        response = client.responses.parse(model="m", input="Weather?", text_format=Answer)
        sent = upstream.requests
    assert chat.choices[0].message.parsed == Answer(temp=9, sky="rain")
    assert streamed.choices[0].message.parsed == Answer(temp=9, sky="rain")
    assert response.output_parsed == Answer(temp=9, sky="rain")
    assert [s["response_format"]["type"] for s in sent] == ["json_schema"] * 3


def test_anthropic_parse_reads_the_json_asked_for() -> None:
    with proxy([ANSWER, ANSWER]) as (url, upstream):
        client = _anthropic(url)
        message = client.messages.parse(
            model="c", max_tokens=50, messages=USER, output_format=Answer
        )
        with client.messages.stream(
            model="c", max_tokens=50, messages=USER, output_format=Answer
        ) as stream:
            streamed = stream.get_final_message()
        sent = upstream.requests[0]
    assert message.parsed_output == Answer(temp=9, sky="rain")
    assert streamed.parsed_output == Answer(temp=9, sky="rain")
    assert sent["response_format"]["json_schema"]["schema"]["required"] == ["temp", "sky"]
