"""Input tokens on the Anthropic wire, as clients read them.

The API writes a request's input tokens in ``message_start``; some clients
(IDE agents that track a conversation's context) read them there only. The
proxy's ``message_start`` said 0 for every request, since the upstream's count
comes with its answer. It now says a guess at the request it sends upstream
(``tokens.expected_tokens``), and ``message_delta`` the upstream's exact
count, which the anthropic SDK's accumulator keeps in the end."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from test_proxy import _anthropic, _openai, serve

from streamtools.model import Chunk, FinishChunk, TextChunk, UsageChunk
from streamtools.proxy import ProxyConfig, create_app
from streamtools.proxy.tokens import estimate_tokens, expected_tokens
from streamtools.testing import ScriptedModel

USER: Any = [{"role": "user", "content": "What is the weather like in Paris today? " * 20}]
WEATHER: Any = {
    "name": "weather",
    "description": "The weather in a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}
EXACT = UsageChunk(input_tokens=123, output_tokens=4)


def _model(usage: UsageChunk | None) -> ScriptedModel:
    """An upstream that answers one text, with ``usage`` or no count at all."""
    chunks: list[Chunk] = [TextChunk(text="Sunny.")]
    if usage is not None:
        chunks.append(usage)
    return ScriptedModel([[*chunks, FinishChunk(reason="stop")]])


@contextmanager
def _proxy(model: ScriptedModel) -> Iterator[str]:
    """The proxy, in front of ``model``, on 127.0.0.1; yields its URL."""
    app = create_app(ProxyConfig(ping_interval=0), model_factory=lambda name, key: model)
    with serve(app) as url:
        yield url


def test_message_start_says_the_estimated_input_tokens() -> None:
    """Read as a client that reads only ``message_start`` would (raw SSE)."""
    model = _model(EXACT)
    body = {"model": "c", "max_tokens": 50, "messages": USER, "tools": [WEATHER], "stream": True}
    with _proxy(model) as url:
        text = httpx.post(f"{url}/v1/messages", json=body, timeout=20).text
    events = [json.loads(line[6:]) for line in text.split("\n") if line[:6] == "data: "]
    start, delta = events[0], next(e for e in events if e["type"] == "message_delta")
    guess = expected_tokens(model.requests[0])  # the tools' prompt and all
    assert start["type"] == "message_start"
    assert start["message"]["usage"]["input_tokens"] == guess > 0
    # more than the client's words alone (9 tokens a sentence), only part of it
    assert guess > 9 * 20
    assert delta["usage"] == {"input_tokens": 123, "output_tokens": 4}  # the upstream's


def test_the_sdks_accumulator_ends_with_the_upstreams_exact_count() -> None:
    with _proxy(_model(EXACT)) as url:
        with _anthropic(url).messages.stream(model="c", max_tokens=50, messages=USER) as stream:
            message = stream.get_final_message()
    assert message.usage.input_tokens == 123 and message.usage.output_tokens == 4


@pytest.mark.parametrize("stream", [False, True])
def test_an_upstream_without_a_count_leaves_the_estimate(stream: bool) -> None:
    """Not streamed, the message said 0 input tokens too; streamed, the
    estimate in ``message_start`` is what the accumulator keeps."""
    model = _model(None)
    with _proxy(model) as url:
        client = _anthropic(url)
        if stream:
            with client.messages.stream(model="c", max_tokens=50, messages=USER) as s:
                usage = s.get_final_message().usage
        else:
            usage = client.messages.create(model="c", max_tokens=50, messages=USER).usage
    assert usage.input_tokens == estimate_tokens(model.requests[0]) > 0


@pytest.mark.parametrize("stream", [False, True])
def test_openai_clients_get_the_estimate_from_an_upstream_without_a_count(stream: bool) -> None:
    """The chat and Responses APIs' usage said 0 input tokens, which clients
    that track their context by it (Codex compacts by it) took for none."""
    model = ScriptedModel([[TextChunk(text="Sunny.")]] * 2)
    chat: Any = {"model": "m", "messages": USER, "stream": stream}
    if stream:
        chat["stream_options"] = {"include_usage": True}
    with _proxy(model) as url:
        client = _openai(url)
        if stream:
            chunks = list(client.chat.completions.create(**chat))
            usage = chunks[-1].usage
            with client.responses.stream(model="m", input=USER[0]["content"]) as events:
                final = events.get_final_response().usage
        else:
            usage = client.chat.completions.create(**chat).usage
            final = client.responses.create(model="m", input=USER[0]["content"]).usage
    estimates = [estimate_tokens(r) for r in model.requests]
    assert usage is not None and usage.prompt_tokens == estimates[0] > 0
    assert final is not None and final.input_tokens == estimates[1] > 0


def test_a_non_streamed_message_keeps_the_upstreams_count() -> None:
    with _proxy(_model(EXACT)) as url:
        message = _anthropic(url).messages.create(model="c", max_tokens=50, messages=USER)
    assert message.usage.input_tokens == 123


@pytest.mark.anyio
async def test_a_bug_building_the_upstream_request_is_a_500_in_the_clients_format(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first upstream request is built before the turn (its estimate opens
    the stream), on a path without Starlette's exception handlers: a bug there
    must still be answered in the client's format, not as Uvicorn's text."""
    import streamtools.proxy.app as proxy_app

    def broken(*args: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(proxy_app, "upstream_request", broken)
    app = create_app(ProxyConfig(), model_factory=lambda name, key: _model(EXACT))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as client:
        body = {"model": "c", "max_tokens": 50, "messages": USER, "stream": True}
        answer = await client.post("/v1/messages", json=body)
    assert answer.status_code == 500
    assert answer.json() == {
        "type": "error", "error": {"type": "api_error", "message": "internal error in the proxy"}
    }
