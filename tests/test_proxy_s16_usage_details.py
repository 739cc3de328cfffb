"""The usage objects' details, as the APIs always write them, through the
official SDKs. Clients and agent frameworks read them with no check:
``usage.prompt_tokens_details.cached_tokens`` (a TypeError when an
OpenAI-compatible server leaves the details out), and Anthropic's
``input_tokens + cache_creation_input_tokens + cache_read_input_tokens`` for the
context's size (NaN in a JavaScript client when the cache fields are missing)."""

from __future__ import annotations

from typing import Any

from test_proxy import PARIS, WEATHER, _openai, _stream, proxy

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

