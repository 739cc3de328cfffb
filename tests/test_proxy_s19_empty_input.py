"""A Responses request whose ``input`` is empty (``[]``, ``""`` or left out) but
that has ``instructions`` is answered, as OpenAI's API answers it: clients send
their whole prompt as instructions so (openclaw/openclaw#74558; Fabric through
decolua/9router#419). The proxy refused it with a 400. The instructions stay
the system prompt, and a user turn says that no message was sent, since many
chat templates refuse a conversation without one (Qwen3's "No user query found
in messages"); a chat request of system messages alone is sent the same way. With neither input nor
instructions there is nothing to answer: a 400 that says so. The openai SDK is
the client, ``FakeServer`` the upstream."""

from __future__ import annotations

from typing import Any

import openai
import pytest
from test_proxy import PARIS, WEATHER, _openai, proxy

from streamtools.proxy.upstream import NO_INPUT

TOOL: Any = {"type": "function", "name": "weather",
             "parameters": WEATHER["function"]["parameters"]}


@pytest.mark.parametrize("given", [[], "", None], ids=["list", "text", "absent"])
@pytest.mark.parametrize("stream", [False, True])
def test_instructions_alone_are_answered(given: Any, stream: bool) -> None:
    kw: Any = {"model": "m", "instructions": "Summarize: the sky is blue."}
    if given is not None:
        kw["input"] = given
    with proxy(["Blue sky."]) as (url, upstream):
        client = _openai(url)
        if stream:  # (the SDK's responses.stream() wants an input: create's does not)
            events = list(client.responses.create(stream=True, **kw))
            (response,) = [e.response for e in events if e.type == "response.completed"]
        else:
            response = client.responses.create(**kw)
        sent = upstream.requests[0]["messages"]
    assert response.status == "completed" and response.output_text == "Blue sky."
    assert sent == [
        {"role": "system", "content": "Summarize: the sky is blue."},
        {"role": "user", "content": NO_INPUT},
    ]


def test_with_tools_the_instructions_stay_the_system_prompt() -> None:
    with proxy([PARIS]) as (url, upstream):
        response = _openai(url).responses.create(
            model="m", instructions="Get the weather in Paris.", input=[], tools=[TOOL]
        )
        sent = upstream.requests[0]["messages"]
    (call,) = [o for o in response.output if o.type == "function_call"]
    assert call.name == "weather"
    assert [m["role"] for m in sent] == ["system", "user"]  # the tools' prompt, then the ask
    assert sent[0]["content"].startswith("Get the weather in Paris.")
    assert "<am:tools>" in sent[0]["content"]
    assert sent[1]["content"].startswith(NO_INPUT)


def test_a_chat_of_system_messages_alone_gets_a_user_turn() -> None:
    with proxy(["Hello."]) as (url, upstream):
        answer = _openai(url).chat.completions.create(
            model="m", messages=[{"role": "system", "content": "Say hello."}]
        )
        sent = upstream.requests[0]["messages"]
    assert answer.choices[0].message.content == "Hello."
    assert sent == [{"role": "system", "content": "Say hello."},
                    {"role": "user", "content": NO_INPUT}]


def test_nothing_to_answer_is_a_400() -> None:
    with proxy([]) as (url, upstream):
        with pytest.raises(openai.BadRequestError, match="no 'instructions' to answer"):
            _openai(url).responses.create(model="m", input=[])
        assert upstream.requests == []
