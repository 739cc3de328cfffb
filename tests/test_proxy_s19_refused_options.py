"""A sampling option the client set and the upstream refuses with a 400 is left
out, the request asked again, and the refusal remembered for the upstream's
later requests (``proxy.learned``), on every kind of upstream: OpenAI's
reasoning models refuse a ``temperature`` other than 1, Anthropic's newer ones
``temperature`` beside ``top_p``. Every such request failed, and only an
OpenAI-compatible upstream's own fields (``stop``, ``max_tokens``) were learned.
The official SDKs are the clients, ``FakeServer`` the upstream."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from test_proxy import USER, _anthropic, _openai, proxy

from streamtools.testing.fake_server import Reply

TEMPERATURE_REFUSED = json.dumps({"error": {
    "message": "Unsupported value: 'temperature' does not support 0.2 with this model. "
    "Only the default (1) value is supported.",
    "type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"}})
BOTH_REFUSED = json.dumps({"type": "error", "error": {
    "type": "invalid_request_error",
    "message": "`temperature` and `top_p` cannot both be specified for this model. "
    "Please use only one."}})
SERVER_DOWN = json.dumps({"error": {"message": "temperature sensor on fire"}})


def _openai_upstream(request: dict[str, Any]) -> Reply:
    if "temperature" in request:
        return Reply(status=400, body=TEMPERATURE_REFUSED, content_type="application/json")
    return Reply(text="Hello there.")


def _anthropic_upstream(request: dict[str, Any]) -> Reply:
    if "temperature" in request and "top_p" in request:
        return Reply(status=400, body=BOTH_REFUSED, content_type="application/json")
    return Reply(text="Hello there.")


@pytest.mark.parametrize("stream", [False, True])
def test_an_openai_upstream_that_refuses_temperature(stream: bool) -> None:
    with proxy([_openai_upstream] * 6) as (url, upstream):
        client = _openai(url)
        for _ in range(3):
            kw: Any = {"model": "o3", "messages": USER, "temperature": 0.2, "top_p": 0.9}
            if stream:
                text = "".join(c.choices[0].delta.content or ""
                               for c in client.chat.completions.create(stream=True, **kw)
                               if c.choices)
            else:
                text = client.chat.completions.create(**kw).choices[0].message.content
            assert text == "Hello there."
        sent = [(b.get("temperature"), b.get("top_p")) for b in upstream.requests]
    # one refusal, then neither this request nor the later ones send it; top_p stays
    assert sent == [(0.2, 0.9), (None, 0.9), (None, 0.9), (None, 0.9)]


@pytest.mark.parametrize("stream", [False, True])
def test_an_anthropic_upstream_that_refuses_temperature_beside_top_p(stream: bool) -> None:
    with proxy([_anthropic_upstream] * 6, wire="anthropic") as (url, upstream):
        claude = _anthropic(url)
        for _ in range(3):
            # (this SDK takes them as extra fields: its newest models refuse them)
            kw: Any = {"model": "c", "max_tokens": 50, "messages": USER,
                       "extra_body": {"temperature": 0.5, "top_p": 0.9}}
            if stream:
                with claude.messages.stream(**kw) as events:
                    message = events.get_final_message()
            else:
                message = claude.messages.create(**kw)
            assert [getattr(b, "text", None) for b in message.content] == ["Hello there."]
        sent = [(b.get("temperature"), b.get("top_p")) for b in upstream.requests]
    # top_p, named first, is given up; temperature goes on
    assert sent == [(0.5, 0.9), (0.5, None), (0.5, None), (0.5, None)]


def test_another_400_is_the_clients() -> None:
    # a refusal that names no option the client set is not retried
    refuse = Reply(status=400, body=SERVER_DOWN, content_type="application/json")
    with proxy([refuse, refuse]) as (url, upstream):
        with pytest.raises(openai.BadRequestError, match="on fire"):
            _openai(url).chat.completions.create(model="m", messages=USER, top_p=0.5)
        assert len(upstream.requests) == 1
