"""``<think>…</think>`` that an upstream writes in its text (llama-server with
``--reasoning-format none``, vLLM without a reasoning parser, Ollama's OpenAI
endpoint without ``think``: DeepSeek-R1 distills, Qwen3) is reasoning, which
the proxy does not forward, whether the request has tools or not: a request
with tools always left it out (the dialect's parser reads it), one without
passed it on as the answer's text, tags and all. The agent reads it as
reasoning in both modes (7185991). The official SDKs are the clients,
``FakeServer`` the upstream."""

from __future__ import annotations

from typing import Any

import pytest
from test_proxy import PARIS, proxy
from test_proxy_s18b_think_open_split import CLIENTS

THINK = "<think>The user wants the weather; no tool here.</think>"


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("api", list(CLIENTS))
@pytest.mark.parametrize("tools", [False, True], ids=["no-tools", "tools"])
def test_think_in_the_text_is_left_out(api: str, stream: bool, tools: bool) -> None:
    reply = f"{THINK}It is sunny in Paris." + (f" {PARIS}" if tools else "")
    with proxy([reply]) as (url, upstream):
        text, calls = CLIENTS[api](url, stream, tools)
        assert len(upstream.requests) == 1
    assert text == ("It is sunny in Paris. " if tools else "It is sunny in Paris.")
    assert calls == ([("weather", {"city": "Paris"})] if tools else [])


def test_tool_choice_none_leaves_it_out_and_stop_strings_still_cut() -> None:
    # tool_choice none: no call is read, the text is the answer, its reasoning aside;
    # the client's stop string ends it as before
    from test_proxy import USER, WEATHER, _openai

    reply = f"{THINK}Sunny.\nObservation: it rains"
    with proxy([reply, reply]) as (url, _):
        client = _openai(url)
        kw: Any = {"model": "m", "messages": USER, "tools": [WEATHER], "tool_choice": "none"}
        whole = client.chat.completions.create(**kw).choices[0]
        cut = client.chat.completions.create(**kw, stop=["\nObservation:"]).choices[0]
    assert whole.message.content == "Sunny.\nObservation: it rains"
    assert whole.finish_reason == "stop" and not whole.message.tool_calls
    assert cut.message.content == "Sunny." and cut.finish_reason == "stop"
