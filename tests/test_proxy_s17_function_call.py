"""The legacy ``function_call`` beside ``tools``, through the openai SDK.

OpenAI's API reads ``function_call`` given with ``tools`` as their
``tool_choice`` (``"none"``, ``"auto"``, ``{"name": X}``); the proxy refused
every such request with a 400 ("give tools and tool_choice, or the legacy
functions, not both"), so a client that still sends ``function_call: "none"``
could not use it. Both ``function_call`` and ``tool_choice`` stay a 400."""

from __future__ import annotations

from typing import Any

import openai
import pytest
from test_proxy import PARIS, TIME, UTC, WEATHER, _openai, _stream, proxy

USER: Any = [{"role": "user", "content": "Weather in Paris?"}]


@pytest.mark.parametrize("stream", [False, True])
def test_function_call_none_with_tools_is_tool_choice_none(stream: bool) -> None:
    with proxy([f"I would call {PARIS}", "I would call it."]) as (url, upstream):
        client = _openai(url)
        kw: Any = {"model": "m", "messages": USER, "tools": [WEATHER], "function_call": "none"}
        if stream:
            chunks, message = _stream(client, **kw)
            finish = [c.choices[0].finish_reason for c in chunks if c.choices][-1]
            message = message.choices[0].message
        else:
            reply = client.chat.completions.create(**kw)
            message, finish = reply.choices[0].message, reply.choices[0].finish_reason
        assert len(upstream.requests) == 2  # the call re-prompted, as with tool_choice none
    # no call may be made: the answer is the model's text
    assert finish == "stop" and not message.tool_calls and message.function_call is None
    assert message.content == "I would call it."


def test_function_call_auto_and_named_with_tools_are_their_tool_choices() -> None:
    with proxy([UTC, "It is sunny.", PARIS]) as (url, upstream):
        client = _openai(url)
        auto = client.chat.completions.create(
            model="m", messages=USER, tools=[WEATHER, TIME], function_call="auto"
        )
        named = client.chat.completions.create(
            model="m", messages=USER, tools=[WEATHER, TIME], function_call={"name": "weather"}
        )
        shown = upstream.requests[1]["messages"][-1]["content"]
        assert len(upstream.requests) == 3  # the named choice re-prompted once
    (call,) = auto.choices[0].message.tool_calls or []
    assert call.type == "function" and call.function.name == "clock.now"
    assert auto.choices[0].finish_reason == "tool_calls"
    # the named choice: that tool named to the model, and its call in the tools' shape
    assert "must call the tool `weather`" in shown
    (call,) = named.choices[0].message.tool_calls or []
    assert call.type == "function" and call.function.name == "weather"
    assert named.choices[0].finish_reason == "tool_calls"
    assert named.choices[0].message.function_call is None


@pytest.mark.parametrize(
    "tool_choice",
    ["auto", {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [WEATHER]}}],
)
def test_function_call_and_tool_choice_together_are_a_400(tool_choice: Any) -> None:
    with proxy([]) as (url, upstream):
        with pytest.raises(openai.BadRequestError, match="tool_choice or the legacy function_call"):
            _openai(url).chat.completions.create(
                model="m", messages=USER, tools=[WEATHER], function_call="none",
                tool_choice=tool_choice,
            )
        assert upstream.requests == []


def test_an_unknown_function_call_with_tools_is_a_400_that_names_it() -> None:
    kw: Any = {"model": "m", "messages": USER, "tools": [WEATHER], "function_call": "always"}
    with proxy([]) as (url, _):
        with pytest.raises(openai.BadRequestError, match="unsupported function_call"):
            _openai(url).chat.completions.create(**kw)
