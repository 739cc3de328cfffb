"""A ``FakeServer`` that ran out of replies (or whose reply function raised)
answered a plain 500, which clients retry: the OpenAI and Anthropic SDKs asked
again with their backoff, so the test's mistake cost seconds and showed up as
extra requests in ``received``. The answer now carries ``x-should-retry:
false``, which those SDKs obey."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx
import openai
import pytest

from streamtools.testing import FakeServer


def _raises(body: dict[str, Any]) -> str:
    raise RuntimeError("the script's own bug")


def test_running_out_says_not_to_retry() -> None:
    with FakeServer([], wire="openai") as server:
        reply = httpx.post(server.base_url + "/chat/completions", json={"messages": []})
    assert reply.status_code == 500
    assert reply.headers["x-should-retry"] == "false"
    assert "no scripted reply left" in reply.text


@pytest.mark.parametrize("script", [[], [_raises]], ids=["ran-out", "raised"])
def test_the_openai_sdk_asks_once(script: list[Any]) -> None:
    with FakeServer(script, wire="openai") as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=2)
        with pytest.raises(openai.InternalServerError):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        client.close()
        assert len(server.requests) == 1


def test_the_anthropic_sdk_asks_once() -> None:
    with FakeServer([], wire="anthropic") as server:
        client = anthropic.Anthropic(base_url=server.base_url, api_key="k", max_retries=2)
        with pytest.raises(anthropic.InternalServerError):
            client.messages.create(
                model="m", max_tokens=8, messages=[{"role": "user", "content": "hi"}]
            )
        client.close()
        assert len(server.requests) == 1


def test_a_reply_still_answers_as_before() -> None:
    with FakeServer(["Hi."], wire="openai") as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=2)
        reply = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
        client.close()
    assert reply.choices[0].message.content == "Hi."
