"""``--think-open`` in front of an upstream that splits reasoning into its own
field (vLLM's and SGLang's reasoning parsers, llama-server's default
``--reasoning-format``, Ollama's ``thinking``): the server has read the
template's ``<think>`` itself, so its text holds the answer only and no
``</think>`` ever comes. The provider's reasoning ends the opening reasoning
(``runtime.decoders.TextReader``), so the answer and its call reach the client,
on each API the proxy serves, streamed and not. The official SDKs are the
clients, ``FakeServer`` the upstream."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_proxy import A_WEATHER, PARIS, USER, WEATHER, _anthropic, _openai, _stream, proxy

from streamtools.testing import Reply

R_WEATHER: Any = {"type": "function", **WEATHER["function"]}
THOUGHT = "The user wants the weather. I should call the tool."

Answer = tuple[str, list[tuple[str, dict[str, Any]]]]  # the text, the calls (name, arguments)


def _chat(url: str, stream: bool, tools: bool) -> Answer:
    kw: dict[str, Any] = {"model": "m", "messages": USER}
    if tools:
        kw["tools"] = [WEATHER]
    client = _openai(url)
    if stream:
        _, message = _stream(client, **kw)
        message = message.choices[0].message
    else:
        message = client.chat.completions.create(**kw).choices[0].message
    calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]
    return message.content or "", calls


def _messages(url: str, stream: bool, tools: bool) -> Answer:
    kw: dict[str, Any] = {"model": "m", "max_tokens": 200, "messages": USER}
    if tools:
        kw["tools"] = [A_WEATHER]
    client = _anthropic(url)
    if stream:
        with client.messages.stream(**kw) as events:
            message = events.get_final_message()
    else:
        message = client.messages.create(**kw)
    text = "".join(b.text for b in message.content if b.type == "text")
    calls = [(b.name, dict(b.input)) for b in message.content if b.type == "tool_use"]
    return text, calls


def _responses(url: str, stream: bool, tools: bool) -> Answer:
    kw: dict[str, Any] = {"model": "m", "input": "Weather in Paris?"}
    if tools:
        kw["tools"] = [R_WEATHER]
    client = _openai(url)
    if stream:
        with client.responses.stream(**kw) as events:
            response = events.get_final_response()
    else:
        response = client.responses.create(**kw)
    calls = [
        (item.name, json.loads(item.arguments))
        for item in response.output
        if item.type == "function_call"
    ]
    return response.output_text, calls


CLIENTS = {"chat": _chat, "messages": _messages, "responses": _responses}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("api", list(CLIENTS))
def test_the_split_reasoning_ends_the_opening_reasoning(api: str, stream: bool) -> None:
    reply = Reply(reasoning=THOUGHT, text=f"Let me check. {PARIS}")
    with proxy([reply], think_open=True) as (url, upstream):
        text, calls = CLIENTS[api](url, stream, True)
        assert len(upstream.requests) == 1  # no re-prompt for a reply with no call
    assert calls == [("weather", {"city": "Paris"})]
    assert text == "Let me check. "  # reasoning is still not forwarded


@pytest.mark.parametrize("wire", ["openai", "ollama", "anthropic"])
@pytest.mark.parametrize("stream", [False, True])
def test_a_request_without_tools_gets_the_answer(wire: str, stream: bool) -> None:
    # the NO_CALLS parser of a tool-less request with think_open: the same end
    reply = Reply(reasoning=THOUGHT, text="It is sunny in Paris.")
    with proxy([reply], wire=wire, think_open=True) as (url, _):
        assert _chat(url, stream, False) == ("It is sunny in Paris.", [])

