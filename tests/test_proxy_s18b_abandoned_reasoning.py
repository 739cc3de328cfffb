"""The reasoning of an upstream request the proxy closes early is counted.

When the proxy closes an upstream stream before its end (a broken call to
repair, one call allowed, a stop string), the upstream's counts never come, and
the output is the guess of what the model wrote (``proxy.turn``,
tests/test_proxy_s17_abandoned_usage.py). An upstream that splits reasoning into
its own field (``reasoning_content``, Anthropic's and Ollama's thinking) sent
that reasoning too, often most of the tokens, which the guess left out: the
client's usage had no reasoning tokens, and an output short by all of them."""

from __future__ import annotations

from typing import Any

import pytest
from test_proxy import PARIS, USER, WEATHER, _anthropic, _openai, _stream, proxy

from streamtools.model import UsageChunk
from streamtools.testing import Reply

A_WEATHER: Any = {"name": "weather", "input_schema": WEATHER["function"]["parameters"]}
THOUGHT = "The user asks about Paris, so I will look at the forecast for the city. " * 40
BROKEN = 'I will look. <am:tool_call name="forecast"><city>Paris</city></am:tool_call> More.'
SECOND = UsageChunk(input_tokens=560, output_tokens=8)


def _replies() -> list[Any]:
    first = Reply(reasoning=THOUGHT, text=BROKEN, usage=UsageChunk(output_tokens=900))
    return [first, Reply(text=f"Let me check. {PARIS}", usage=SECOND)]


@pytest.mark.parametrize("wire", ["openai", "anthropic", "ollama"])
@pytest.mark.parametrize("stream", [False, True])
def test_the_reasoning_of_a_closed_request_is_counted(wire: str, stream: bool) -> None:
    with proxy(_replies(), wire=wire) as (url, upstream):
        client = _openai(url)
        kw: Any = {"model": "m", "messages": USER, "tools": [WEATHER]}
        if stream:
            chunks, _ = _stream(client, stream_options={"include_usage": True}, **kw)
            usage = chunks[-1].usage
        else:
            usage = client.chat.completions.create(**kw).usage
        assert len(upstream.requests) == 2  # the broken call was repaired
    assert usage is not None and usage.completion_tokens_details is not None
    thought = usage.completion_tokens_details.reasoning_tokens or 0
    assert thought >= len(THOUGHT.split())  # at least a token a word
    assert usage.completion_tokens >= 8 + thought  # the second request's and the first's


def test_an_anthropic_client_counts_it_too() -> None:
    with proxy(_replies()) as (url, _):
        message = _anthropic(url).messages.create(
            model="m", max_tokens=500, messages=USER, tools=[A_WEATHER]
        )
    assert message.stop_reason == "tool_use"
    assert message.usage.output_tokens >= 8 + len(THOUGHT.split())
