"""The usage objects' details, as the APIs always write them, through the
official SDKs. Clients and agent frameworks read them with no check:
``usage.prompt_tokens_details.cached_tokens`` (a TypeError when an
OpenAI-compatible server leaves the details out), and Anthropic's
``input_tokens + cache_creation_input_tokens + cache_read_input_tokens`` for the
context's size (NaN in a JavaScript client when the cache fields are missing)."""

from __future__ import annotations

import json
from typing import Any

import httpx
from test_proxy import PARIS, WEATHER, _anthropic, _openai, _stream, proxy

USER: Any = [{"role": "user", "content": "Weather in Paris?"}]


def test_chat_usage_has_the_token_details() -> None:
    with proxy([PARIS, PARIS]) as (url, _):
        client = _openai(url)
        whole = client.chat.completions.create(model="m", messages=USER, tools=[WEATHER])
        chunks, _ = _stream(
            client, model="m", messages=USER, tools=[WEATHER],
            stream_options={"include_usage": True},
        )
    streamed = chunks[-1].usage
    for usage in (whole.usage, streamed):
        assert usage is not None and usage.prompt_tokens > 0
        assert usage.prompt_tokens_details is not None
        assert usage.prompt_tokens_details.cached_tokens == 0
        assert usage.completion_tokens_details is not None
        assert usage.completion_tokens_details.reasoning_tokens == 0
        assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def _cache_fields(usage: dict[str, Any]) -> tuple[Any, Any]:
    return usage.get("cache_creation_input_tokens"), usage.get("cache_read_input_tokens")


def test_anthropic_usage_has_the_cache_counts() -> None:
    """Raw, as a JavaScript client reads them (``message_start`` and the body),
    and through the anthropic SDK, whose fields were None."""
    tool: Any = {"name": "weather", "input_schema": WEATHER["function"]["parameters"]}
    body: Any = {"model": "c", "max_tokens": 64, "messages": USER, "tools": [tool]}
    with proxy([PARIS] * 4) as (url, _):
        headers = {"anthropic-version": "2023-06-01"}
        whole = httpx.post(f"{url}/v1/messages", json=body, headers=headers, timeout=20).json()
        text = httpx.post(
            f"{url}/v1/messages", json={**body, "stream": True}, headers=headers, timeout=20
        ).text
        client = _anthropic(url)
        message = client.messages.create(**body)
        with client.messages.stream(**body) as stream:
            final = stream.get_final_message()
    start = json.loads(text.split("data: ", 1)[1].split("\n", 1)[0])
    assert start["type"] == "message_start"
    for usage in (whole["usage"], start["message"]["usage"]):
        assert _cache_fields(usage) == (0, 0) and usage["input_tokens"] > 0
    for sdk in (message.usage, final.usage):
        assert sdk.cache_creation_input_tokens == 0 and sdk.cache_read_input_tokens == 0
        assert sdk.input_tokens > 0
