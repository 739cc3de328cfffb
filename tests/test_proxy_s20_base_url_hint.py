"""A client pointed at the wrong base URL (an OpenAI client without ``/v1``,
an Anthropic client with it: the commonest setup mistake, cline/cline#7116,
cline/cline#1068) got "404: Not Found" and nothing that said what to change.
The 404 now names the path the proxy serves and the base URL each client
needs. The official SDKs are the clients."""

from __future__ import annotations

import anthropic
import httpx
import openai
import pytest
from test_proxy import USER, proxy


def test_an_openai_client_without_v1_is_told_the_base_url() -> None:
    with proxy([]) as (url, upstream):
        client = openai.OpenAI(base_url=url, api_key="k", max_retries=0)
        with client, pytest.raises(openai.NotFoundError) as caught:
            client.chat.completions.create(model="m", messages=USER)
        assert upstream.requests == []
    said = str(caught.value)
    assert "POST /chat/completions" in said and "/v1/chat/completions" in said
    assert f"an OpenAI client's base URL is {url}/v1" in said


def test_an_anthropic_client_with_v1_is_told_the_base_url() -> None:
    with proxy([]) as (url, _):
        client = anthropic.Anthropic(base_url=f"{url}/v1", api_key="k", max_retries=0)
        with client, pytest.raises(anthropic.NotFoundError) as caught:
            client.messages.create(model="c", max_tokens=5, messages=USER)
    said = str(caught.value)
    assert "/v1/v1/messages" in said and "'type': 'not_found_error'" in said
    assert f"an Anthropic client's is {url}" in said


def test_another_unknown_path_is_a_plain_404() -> None:
    with proxy([]) as (url, _):
        answer = httpx.get(f"{url}/v2/things")
    assert answer.status_code == 404
    assert answer.json()["error"]["message"] == "GET /v2/things: 404: Not Found"
