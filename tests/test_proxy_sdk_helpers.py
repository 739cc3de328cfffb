"""The official SDKs' helpers and less common endpoints through the proxy: the
anthropic SDK's ``tool_runner`` and message threads, the openai SDK's
``responses.input_tokens.count``. ``FakeServer`` is the plain-chat upstream."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest
from anthropic import beta_tool
from test_proxy import A_WEATHER, PARIS, USER, WEATHER, _anthropic, _openai, proxy

from streamtools.testing.fake_wire import chat_template, token_pieces

R_WEATHER: Any = {"type": "function", **WEATHER["function"]}


@beta_tool
def weather(city: str) -> str:
    """Weather for a city.

    Args:
        city: the city
    """
    return f"9C in {city}"


@pytest.mark.parametrize("stream", [False, True])
def test_the_anthropic_tool_runner_sends_the_whole_conversation(stream: bool) -> None:
    # The runner asks for a server-held thread ({"type": "create"}), then sends
    # only the tool result with {"type": "continue"}: ignored, the model got a
    # result for a call it never saw, and no tools
    with proxy([f"Checking. {PARIS}", "It is 9C in Paris."]) as (url, upstream):
        runner = _anthropic(url).beta.messages.tool_runner(
            model="m", max_tokens=200, messages=USER, tools=[weather], stream=stream
        )
        if stream:
            reasons = [s.get_final_message().stop_reason for s in runner]  # type: ignore[union-attr]
        else:
            reasons = [m.stop_reason for m in runner]  # type: ignore[union-attr]
        sent = upstream.requests
    assert reasons == ["tool_use", "end_turn"]
    assert len(sent) == 2  # a refused thread never reaches the upstream
    system, *turns = sent[1]["messages"]
    assert '<am:tool name="weather"' in system["content"]
    assert [m["role"] for m in turns] == ["user", "assistant", "user"]
    assert turns[0]["content"] == USER[0]["content"]
    assert '<am:tool_call name="weather">' in turns[1]["content"]
    assert '<am:tool_result name="weather">9C in Paris</am:tool_result>' in turns[2]["content"]


@pytest.mark.parametrize(
    "thread", [{"type": "create"}, {"type": "continue", "previous_message_id": "msg_1"}]
)
def test_a_thread_is_refused_with_the_code_that_says_go_on_without_one(thread: object) -> None:
    with proxy([]) as (url, upstream):
        with pytest.raises(anthropic.BadRequestError) as info:
            _anthropic(url).beta.messages.create(
                model="m", max_tokens=10, messages=USER, extra_body={"thread": thread}
            )
        assert upstream.requests == []
    body = info.value.body
    assert isinstance(body, dict) and body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"
    assert body["error"]["details"] == {"error_code": "thread_unsupported_request"}
    assert "thread" in body["error"]["message"]


@pytest.mark.parametrize("configured", [None, "plain-7b"])
def test_responses_input_tokens_counts_what_goes_upstream(configured: str | None) -> None:
    # POST /v1/responses/input_tokens was a 404; it counts as count_tokens does:
    # the tools as the dialect's prompt, with the upstream's tokenizer
    with proxy([], tokenizer="vllm", model=configured) as (url, upstream):
        client = _openai(url)
        model: Any = openai.omit if configured else "m"  # optional: then the configured one
        counted = client.responses.input_tokens.count(
            model=model, instructions="Be brief.", input="Weather in Paris?", tools=[R_WEATHER]
        )
        asked = upstream.received[0]
        with pytest.raises(openai.BadRequestError) as refused:
            client.responses.input_tokens.count(model="m", input="hi", previous_response_id="r")
    assert counted.object == "response.input_tokens"
    assert asked.path == "/tokenize" and asked.body["model"] == (configured or "m")
    system, user = asked.body["messages"]
    assert '<am:tool name="weather"' in system["content"] and "Be brief." in system["content"]
    assert user == {"role": "user", "content": "Weather in Paris?"}
    assert counted.input_tokens == len(token_pieces(chat_template(asked.body["messages"])))
    assert refused.value.code is None and "previous_response_id" in refused.value.message


def test_responses_input_tokens_is_estimated_without_a_tokenizer() -> None:
    with proxy([]) as (url, _):
        answer = _openai(url).responses.input_tokens.with_raw_response.count(
            model="m", input="Weather in Paris? " * 30
        )
    assert answer.headers["x-streamtools-token-count"] == "estimate"
    assert answer.parse().input_tokens >= len("Weather in Paris? " * 30) // 3


def test_mcp_servers_are_refused_as_server_tools_are() -> None:
    # ignored, the model answered without the tools the client had given it
    server: Any = {"type": "url", "url": "https://mcp.example/sse", "name": "docs"}
    with proxy(["I have no tools."]) as (url, upstream):
        with pytest.raises(anthropic.BadRequestError) as info:
            _anthropic(url).beta.messages.create(
                model="m", max_tokens=10, messages=USER, mcp_servers=[server]
            )
        assert upstream.requests == []
    body = info.value.body
    assert isinstance(body, dict) and body["error"]["type"] == "invalid_request_error"
    assert "mcp_servers" in body["error"]["message"]


def _found(title: str, text: str) -> Any:
    return {
        "type": "search_result", "source": f"https://docs.example/{title}", "title": title,
        "content": [{"type": "text", "text": text}], "citations": {"enabled": True},
    }


def test_search_results_are_read_as_their_text() -> None:
    # a search tool's results (Anthropic's search_result blocks) reached the
    # model as "[search_result omitted: this model reads text only]"
    call: Any = {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}}
    results: Any = [_found("paris", "9C and sunny."), _found("oslo", "3C.")]
    question = {"type": "text", "text": USER[0]["content"]}
    messages: Any = [
        {"role": "user", "content": [_found("intro", "Read this first."), question]},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": results},
        ]},
    ]
    with proxy(["It is 9C."]) as (url, upstream):
        answer = _anthropic(url).messages.create(
            model="m", max_tokens=10, messages=messages, tools=[A_WEATHER]
        )
        sent = upstream.requests[0]["messages"]
    assert answer.content[0].type == "text"
    assert sent[1]["content"] == (
        "[search result: intro, https://docs.example/intro]\nRead this first.\n"
        + USER[0]["content"]
    )
    assert sent[3]["content"].startswith(
        '<am:tool_result name="weather">'
        "[search result: paris, https://docs.example/paris]\n9C and sunny.\n"
        "[search result: oslo, https://docs.example/oslo]\n3C.</am:tool_result>"
    )
    assert "omitted" not in str(sent)


def test_the_deprecated_output_format_asks_for_json_as_output_config_does() -> None:
    # anthropic SDKs before output_config sent output_format at the top level:
    # ignored, the upstream was never asked for JSON
    schema: Any = {"type": "object", "properties": {"city": {"type": "string"}}}
    fmt: Any = {"type": "json_schema", "schema": schema}
    with proxy(['{"city": "Paris"}']) as (url, upstream):
        _anthropic(url).messages.create(
            model="m", max_tokens=20, messages=USER, extra_body={"output_format": fmt}
        )
        with pytest.raises(anthropic.BadRequestError, match="output_format must be an object"):
            _anthropic(url).messages.create(
                model="m", max_tokens=20, messages=USER, extra_body={"output_format": "json"}
            )
        sent = upstream.requests[0]
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["schema"] == schema


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"web_search_options": {}}, "web_search_options is not supported"),
        ({"modalities": ["text", "audio"], "audio": {"voice": "alloy", "format": "wav"}}, "audio"),
    ],
)
def test_chat_options_the_upstream_cannot_honour_are_400s(options: Any, says: str) -> None:
    # ignored, the answer came back unsearched, or without the audio asked for
    with proxy(["From memory: 9C."]) as (url, upstream):
        with pytest.raises(openai.BadRequestError, match=says) as info:
            _openai(url).chat.completions.create(model="m", messages=USER, **options)
        plain = _openai(url).chat.completions.create(model="m", messages=USER, modalities=["text"])
        assert len(upstream.requests) == 1
    assert info.value.type == "invalid_request_error"
    assert plain.choices[0].message.content == "From memory: 9C."
