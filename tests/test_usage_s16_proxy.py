"""The proxy passes its upstream's prompt-cache and reasoning counts on, in each
API's words, to the official SDKs (their parsed usage objects show them):
before, every cache and reasoning field it wrote was 0 whatever the upstream
said. Anthropic's ``input_tokens`` leaves the cached tokens out, OpenAI's
``prompt_tokens`` holds them. Unknown counts stay 0 (test_proxy_s16_usage_details)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from test_proxy import PARIS, WEATHER, _anthropic, _openai, _stream, proxy

from streamtools.events import Usage
from streamtools.model import UsageChunk
from streamtools.proxy.usage import reported
from streamtools.testing.fake_server import Reply

USER: Any = [{"role": "user", "content": "Weather in Paris?"}]
ANTHROPIC_TOOL: Any = {"name": "weather", "input_schema": WEATHER["function"]["parameters"]}
FN_WEATHER: Any = {"type": "function", **WEATHER["function"]}
# all the input is 900: 600 read from the cache, 100 written to it, 200 neither
COUNTS = UsageChunk(
    input_tokens=900, output_tokens=40, cache_read_tokens=600, cache_write_tokens=100,
    reasoning_tokens=12,
)
UPSTREAMS = ["openai", "anthropic"]


def _replies(n: int) -> list[Any]:
    return [Reply(text=f"Let me check. {PARIS}", usage=COUNTS) for _ in range(n)]


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_chat_clients_see_the_cached_and_reasoning_tokens(upstream: str) -> None:
    with proxy(_replies(2), wire=upstream) as (url, _):
        client = _openai(url)
        whole = client.chat.completions.create(model="m", messages=USER, tools=[WEATHER])
        chunks, _ = _stream(
            client, model="m", messages=USER, tools=[WEATHER],
            stream_options={"include_usage": True},
        )
    for usage in (whole.usage, chunks[-1].usage):
        assert usage is not None
        assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (900, 40, 940)
        assert usage.prompt_tokens_details is not None
        assert usage.prompt_tokens_details.cached_tokens == 600
        assert usage.prompt_tokens_details.cache_write_tokens == 100
        assert usage.completion_tokens_details is not None
        assert usage.completion_tokens_details.reasoning_tokens == 12


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_anthropic_clients_see_the_cache_counts_in_the_apis_meaning(upstream: str) -> None:
    body: Any = {"model": "c", "max_tokens": 64, "messages": USER, "tools": [ANTHROPIC_TOOL]}
    with proxy(_replies(3), wire=upstream) as (url, _):
        client = _anthropic(url)
        message = client.messages.create(**body)
        with client.messages.stream(**body) as stream:
            final = stream.get_final_message()
        headers = {"anthropic-version": "2023-06-01"}
        text = httpx.post(
            f"{url}/v1/messages", json={**body, "stream": True}, headers=headers, timeout=20
        ).text
    for usage in (message.usage, final.usage):
        assert usage.input_tokens == 200  # the API's input_tokens: without the cache's
        assert usage.cache_read_input_tokens == 600
        assert usage.cache_creation_input_tokens == 100
        assert usage.output_tokens == 40
        assert usage.output_tokens_details is not None
        assert usage.output_tokens_details.thinking_tokens == 12
    # message_start goes out before the upstream answers: its estimate, no cache
    # counts yet; the upstream's come in message_delta, which the SDK took over it
    events = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
    start = events[0]["message"]["usage"]
    assert start["cache_read_input_tokens"] == 0 and start["input_tokens"] > 0
    delta = next(e for e in events if e["type"] == "message_delta")["usage"]
    assert delta["cache_read_input_tokens"] == 600 and delta["input_tokens"] == 200


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_responses_clients_see_the_cached_and_reasoning_tokens(upstream: str) -> None:
    with proxy(_replies(2), wire=upstream) as (url, _):
        client = _openai(url)
        whole = client.responses.create(model="m", input="Weather in Paris?", tools=[FN_WEATHER])
        with client.responses.stream(
            model="m", input="Weather in Paris?", tools=[FN_WEATHER]
        ) as stream:
            final = stream.get_final_response()
    for usage in (whole.usage, final.usage):
        assert usage is not None
        assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (900, 40, 940)
        assert usage.input_tokens_details.cached_tokens == 600
        assert usage.input_tokens_details.cache_write_tokens == 100
        assert usage.output_tokens_details.reasoning_tokens == 12


def test_a_re_prompt_keeps_the_cache_counts_of_the_largest_request() -> None:
    first = UsageChunk(input_tokens=500, output_tokens=30, cache_write_tokens=480,
                       reasoning_tokens=4)
    second = UsageChunk(input_tokens=560, output_tokens=8, cache_read_tokens=480)
    both = reported(reported(Usage(), first), second)
    assert both == Usage(
        input_tokens=560, output_tokens=38, cache_read_tokens=480, reasoning_tokens=4
    )
    # a later request with a smaller count (a paused turn's) leaves the input's as it was
    assert reported(both, UsageChunk(input_tokens=100, output_tokens=2, cache_read_tokens=90)) == (
        Usage(input_tokens=560, output_tokens=40, cache_read_tokens=480, reasoning_tokens=4)
    )


def test_a_re_prompted_answer_reaches_the_client_with_the_last_requests_cache() -> None:
    # a call is required and the first reply has none: the proxy re-prompts once
    bare = Reply(
        text="Paris is sunny, I think.",
        usage=UsageChunk(input_tokens=500, output_tokens=30, cache_write_tokens=480),
    )
    good = Reply(
        text=f"Let me check. {PARIS}",
        usage=UsageChunk(input_tokens=560, output_tokens=8, cache_read_tokens=480),
    )
    with proxy([bare, good]) as (url, upstream):
        whole = _openai(url).chat.completions.create(
            model="m", messages=USER, tools=[WEATHER], tool_choice="required"
        )
        assert len(upstream.requests) == 2
    assert whole.choices[0].finish_reason == "tool_calls"
    usage = whole.usage
    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens) == (560, 38)
    assert usage.prompt_tokens_details is not None
    assert usage.prompt_tokens_details.cached_tokens == 480
    assert usage.prompt_tokens_details.cache_write_tokens == 0  # the last request wrote none
