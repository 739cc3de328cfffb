"""The token limit cut a reply in a call the model began after calls it had
finished, before that call's name was written (so it never reached the client):
the reply said ``finish_reason: "length"`` / ``stop_reason: "max_tokens"``
beside whole calls and nothing cut that the client could see, and an agent
took its calls for a truncated answer instead of running them. What follows a
call is never forwarded, so the reply is those calls and says ``tool_calls`` /
``tool_use``; a call cut after its name was sent still says the limit (as
before). The official SDKs are the clients, ``FakeServer`` the upstream."""

from __future__ import annotations

from typing import Any

import pytest
from test_proxy import PARIS, USER, WEATHER, _anthropic, _openai, _stream, proxy

from streamtools.testing.fake_server import Reply

A_WEATHER: Any = {"name": "weather", "input_schema": WEATHER["function"]["parameters"]}
UNNAMED = Reply(text=f"{PARIS}\n<am:tool_call na", finish="length")
NAMED = Reply(text=f'{PARIS}\n<am:tool_call name="weather"><city>Os', finish="length")


@pytest.mark.parametrize("stream", [False, True])
def test_openai_a_call_cut_before_its_name_after_whole_calls(stream: bool) -> None:
    with proxy([UNNAMED, NAMED]) as (url, _):
        client = _openai(url)
        finishes, calls = [], []
        for _ in range(2):
            kw: Any = {"model": "m", "messages": USER, "tools": [WEATHER]}
            if stream:
                chunks, completion = _stream(client, **kw)
                finishes.append([c.choices[0].finish_reason for c in chunks if c.choices][-1])
                message = completion.choices[0].message
            else:
                answer = client.chat.completions.create(**kw).choices[0]
                finishes.append(answer.finish_reason)
                message = answer.message
            calls.append([c.function.arguments for c in message.tool_calls or []])
    assert finishes == ["tool_calls", "length"]
    assert calls[0] == ['{"city": "Paris"}']


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_a_call_cut_before_its_name_after_whole_calls(stream: bool) -> None:
    with proxy([UNNAMED]) as (url, _):
        kw: Any = {"model": "c", "max_tokens": 100, "messages": USER, "tools": [A_WEATHER]}
        client = _anthropic(url)
        if stream:
            with client.messages.stream(**kw) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(**kw)
    assert message.stop_reason == "tool_use"
    assert [(b.type, getattr(b, "input", None)) for b in message.content] == [
        ("tool_use", {"city": "Paris"})
    ]
