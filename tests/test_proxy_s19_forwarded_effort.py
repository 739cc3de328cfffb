"""A client's reasoning effort (chat ``reasoning_effort``, Responses
``reasoning.effort``, Anthropic ``output_config.effort``) and its
``prompt_cache_key`` reach an OpenAI-compatible upstream as
``reasoning_effort`` / ``prompt_cache_key``, which llama.cpp's server, Ollama's
``/v1``, vLLM and OpenAI read; they were dropped. An upstream that refuses one
with a 400 gets the request again without it, once per upstream
(``proxy.learned``). The official SDKs are the clients, ``FakeServer`` the
upstream."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest
from test_proxy import USER, _anthropic, _openai, proxy

from streamtools.testing.fake_server import Reply

EXTRA_REFUSED = json.dumps({"detail": [{
    "type": "extra_forbidden", "loc": ["body", "reasoning_effort"],
    "msg": "Extra inputs are not permitted", "input": "low"}]})


def test_each_clients_effort_and_cache_key_reach_the_upstream() -> None:
    with proxy(["Hi."] * 4) as (url, upstream):
        client = _openai(url)
        client.chat.completions.create(
            model="m", messages=USER, reasoning_effort="low", prompt_cache_key="conv-1"
        )
        client.responses.create(
            model="m", input="Hi", reasoning={"effort": "high"}, prompt_cache_key="conv-2"
        )
        claude = _anthropic(url)
        kw: Any = {"model": "c", "max_tokens": 50, "messages": USER}
        claude.messages.create(**kw, extra_body={"output_config": {"effort": "max"}})
        client.chat.completions.create(model="m", messages=USER)  # none asked: none sent
        sent = [{k: b.get(k) for k in ("reasoning_effort", "prompt_cache_key")}
                for b in upstream.requests]
    assert sent == [
        {"reasoning_effort": "low", "prompt_cache_key": "conv-1"},
        {"reasoning_effort": "high", "prompt_cache_key": "conv-2"},
        {"reasoning_effort": "high", "prompt_cache_key": None},  # Anthropic's max
        {"reasoning_effort": None, "prompt_cache_key": None},
    ]


def test_an_anthropic_upstream_gets_none_of_them() -> None:
    with proxy(["Hi."], wire="anthropic") as (url, upstream):
        _openai(url).chat.completions.create(
            model="m", messages=USER, reasoning_effort="low", prompt_cache_key="conv-1"
        )
        body = upstream.requests[0]
    assert "reasoning_effort" not in body and "prompt_cache_key" not in body


def _refusing(request: dict[str, Any]) -> Reply:
    if "reasoning_effort" in request:
        return Reply(status=400, body=EXTRA_REFUSED, content_type="application/json")
    return Reply(text="Hello there.")


@pytest.mark.parametrize("stream", [False, True])
def test_a_refused_field_is_left_out_and_remembered(stream: bool) -> None:
    with proxy([_refusing] * 6) as (url, upstream):
        client = _openai(url)
        for _ in range(3):
            kw: Any = {"model": "m", "messages": USER, "reasoning_effort": "low",
                       "prompt_cache_key": "conv-1"}
            if stream:
                text = "".join(c.choices[0].delta.content or ""
                               for c in client.chat.completions.create(stream=True, **kw)
                               if c.choices)
            else:
                text = client.chat.completions.create(**kw).choices[0].message.content or ""
            assert text == "Hello there."
        sent = [("reasoning_effort" in b, b.get("prompt_cache_key")) for b in upstream.requests]
    # the first request pays the refusal, the later ones send it no more; the
    # field the upstream took still goes
    assert sent == [(True, "conv-1"), (False, "conv-1"), (False, "conv-1"), (False, "conv-1")]


def test_a_field_of_the_wrong_type_is_a_400_that_names_it() -> None:
    with proxy([]) as (url, upstream):
        with pytest.raises(openai.BadRequestError, match="reasoning_effort must be a string"):
            _openai(url).chat.completions.create(
                model="m", messages=USER, extra_body={"reasoning_effort": 3}
            )
        with pytest.raises(anthropic.BadRequestError, match="output_config.effort must be one"):
            _anthropic(url).messages.create(
                model="c", max_tokens=5, messages=USER,
                extra_body={"output_config": {"effort": "extreme"}},
            )
        assert upstream.requests == []
