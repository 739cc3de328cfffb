"""A named ``tool_choice`` is a ``UseTool``, never a keyword, even for a tool
called ``none``, ``auto`` or ``required``: through the providers' native bodies,
the ``Agent``, and the proxy (the official ``openai`` and ``anthropic`` SDKs as
clients, ``FakeServer`` as the plain-chat upstream)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_proxy import _anthropic, _openai, proxy

from streamtools import UseTool
from streamtools.errors import UsageError
from streamtools.events import CallEnd, Event, Final, Retry
from streamtools.model import CallChunk, Chunk, FinishChunk, ModelRequest, ToolSpec
from streamtools.providers import AnthropicMessages, OpenAIChat
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool

USER: Any = [{"role": "user", "content": "Weather in Paris?"}]
SCHEMA: Any = {"type": "object", "properties": {"city": {"type": "string"}}}
CHAT_NONE: Any = {"type": "function", "function": {"name": "none", "parameters": SCHEMA}}
CHAT_WEATHER: Any = {"type": "function", "function": {"name": "weather", "parameters": SCHEMA}}
# the model first answers without a call, then calls the tool named "none"
REPLIES = ["Sunny, I think.", '<am:tool_call name="none"><city>Paris</city></am:tool_call>']


def _told(upstream: Any) -> tuple[str, str]:
    """The first upstream request's system prompt and its last message."""
    messages = upstream.requests[0]["messages"]
    return messages[0]["content"], messages[-1]["content"]


def _check_upstream(upstream: Any) -> None:
    system, last = _told(upstream)
    # every tool stays in the system prompt (31c984e: a named choice changes only the
    # instruction, so the prompt's start is the same for the next request's cache)
    assert 'name="none"' in system and 'name="weather"' in system
    assert "you must call the tool `none`" in last
    assert len(upstream.requests) == 2  # the answer without a call was re-prompted


def test_openai_chat_client_forces_a_tool_named_none() -> None:
    with proxy(REPLIES) as (url, upstream):
        response = _openai(url).chat.completions.create(
            model="m",
            messages=USER,
            tools=[CHAT_NONE, CHAT_WEATHER],
            tool_choice={"type": "function", "function": {"name": "none"}},
        )
        _check_upstream(upstream)
    message = response.choices[0]
    assert message.finish_reason == "tool_calls" and message.message.content is None
    call = message.message.tool_calls[0]  # type: ignore[index]
    assert call.function.name == "none"  # type: ignore[union-attr]
    assert json.loads(call.function.arguments) == {"city": "Paris"}  # type: ignore[union-attr]


def test_anthropic_client_forces_a_tool_named_none() -> None:
    with proxy(REPLIES) as (url, upstream):
        message = _anthropic(url).messages.create(
            model="c",
            max_tokens=100,
            messages=USER,
            tools=[
                {"name": "none", "input_schema": SCHEMA},
                {"name": "weather", "input_schema": SCHEMA},
            ],
            tool_choice={"type": "tool", "name": "none"},
        )
        _check_upstream(upstream)
    assert message.stop_reason == "tool_use"
    assert [b.type for b in message.content] == ["tool_use"]
    assert message.content[0].name == "none"  # type: ignore[union-attr]
    assert message.content[0].input == {"city": "Paris"}  # type: ignore[union-attr]


def test_responses_client_forces_a_tool_named_none_and_gets_it_echoed() -> None:
    with proxy(REPLIES) as (url, upstream):
        response = _openai(url).responses.create(
            model="m",
            input="Weather in Paris?",
            tools=[
                {"type": "function", "name": "none", "parameters": SCHEMA, "strict": False},
                {"type": "function", "name": "weather", "parameters": SCHEMA, "strict": False},
            ],
            tool_choice={"type": "function", "name": "none"},
        )
        _check_upstream(upstream)
    assert [(o.type, o.name) for o in response.output] == [("function_call", "none")]  # type: ignore[union-attr]
    # the response object echoes the named choice, not the keyword
    assert response.tool_choice.type == "function"  # type: ignore[union-attr]
    assert response.tool_choice.name == "none"  # type: ignore[union-attr]


def test_keyword_none_allows_no_call_even_of_a_tool_named_none() -> None:
    # since 3a60660 the tools stay shown under the keyword (the prompt's start is the
    # conversation's) and the instruction forbids calls; a call of the tool named
    # "none" is re-prompted like any other, never taken as the named choice
    with proxy(REPLIES[::-1]) as (url, upstream):
        response = _openai(url).chat.completions.create(
            model="m", messages=USER, tools=[CHAT_NONE], tool_choice="none"
        )
        system, last = _told(upstream)
        asked = len(upstream.requests)
    assert 'name="none"' in system
    assert "may not call any tool" in last and "you must call" not in last
    assert asked == 2  # the call written anyway was re-prompted
    message = response.choices[0].message
    assert message.tool_calls is None and message.content == REPLIES[0]


# --- providers: the native body ---------------------------------------------------

NONE_SPEC = ToolSpec(name="none", description="", parameters=SCHEMA)


def test_providers_send_a_named_choice_for_use_tool_none() -> None:
    named = ModelRequest(messages=(), tools=(NONE_SPEC,), tool_choice=UseTool("none"))
    keyword = ModelRequest(messages=(), tools=(NONE_SPEC,), tool_choice="none")
    chat, messages = OpenAIChat("m"), AnthropicMessages("c")
    assert chat.request_body(named)["tool_choice"] == {
        "type": "function",
        "function": {"name": "none"},
    }
    assert chat.request_body(keyword)["tool_choice"] == "none"
    assert messages.request_body(named)["tool_choice"] == {"type": "tool", "name": "none"}
    assert messages.request_body(keyword)["tool_choice"] == {"type": "none"}


# --- the Agent -------------------------------------------------------------------


@tool(name="auto")
async def auto_tool(city: str) -> str:
    """Weather for a city."""
    return f"sunny in {city}"


@tool
async def weather(city: str) -> str:
    """Weather for a city."""
    return f"rain in {city}"


@pytest.mark.anyio
async def test_agent_use_tool_auto_requires_the_tool_named_auto() -> None:
    call = '<tool_call>{"name": "auto", "arguments": {"city": "Oslo"}}</tool_call>'
    model = ScriptedModel(["No tool needed.", call, "Sunny."])
    agent = Agent(model, [auto_tool], dialect="hermes", tool_choice=UseTool("auto"))
    assert agent.tool_choice == UseTool("auto")
    async with agent.stream("Weather in Oslo?") as stream:
        events: list[Event] = [e async for e in stream]
    # not the keyword "auto": an answer without the call is re-prompted
    assert [e.reason for e in events if isinstance(e, Retry)] == ["missing_call"]
    assert [e.name for e in events if isinstance(e, CallEnd)] == ["auto"]
    assert events[-1] == Final(text="Sunny.", turns=3)


@pytest.mark.anyio
async def test_agent_native_request_carries_use_tool() -> None:
    script: list[list[Chunk] | str] = [
        [
            CallChunk(index=0, id="n1", name="auto", arguments='{"city": "Oslo"}'),
            FinishChunk(reason="tool_calls"),
        ],
        "Sunny.",
    ]
    model = ScriptedModel(script)
    await Agent(model, [auto_tool], native=True, tool_choice=UseTool("auto")).run("Oslo?")
    assert model.requests[0].tool_choice == UseTool("auto")
    keyword = ScriptedModel(["Hi."])
    await Agent(keyword, [auto_tool], native=True, tool_choice="auto").run("hi")
    assert keyword.requests[0].tool_choice == "auto"  # the bare string is the keyword
    # a bare tool name is short for UseTool; a UseTool must name a tool it has
    # when a run starts (the registry may be filled after the agent is made)
    assert Agent(model, [weather], tool_choice="weather").tool_choice == UseTool("weather")
    with pytest.raises(UsageError, match="tool_choice must be"):
        await Agent(model, [auto_tool], tool_choice=UseTool("weather")).run("Oslo?")


@pytest.mark.anyio
async def test_agent_use_tool_is_met_by_a_call_to_that_tool_only() -> None:
    """With ``UseTool("weather")`` in a prompt dialect, a call to another tool
    counted as the required call: the model's answer after it ended the run and
    ``weather`` never ran. The re-prompt now comes, and names ``weather``."""
    other = '<tool_call>{"name": "auto", "arguments": {"city": "Oslo"}}</tool_call>'
    wanted = '<tool_call>{"name": "weather", "arguments": {"city": "Oslo"}}</tool_call>'
    model = ScriptedModel([other, "Sunny.", wanted, "Rain."])
    agent = Agent(model, [auto_tool, weather], dialect="hermes", tool_choice="weather")
    async with agent.stream("Weather in Oslo?") as stream:
        events: list[Event] = [e async for e in stream]
    assert [e.reason for e in events if isinstance(e, Retry)] == ["missing_call"]
    assert model.requests[2].messages[-1].content.startswith(
        "A call to `weather` is required before you answer."
    )
    assert [e.name for e in events if isinstance(e, CallEnd)] == ["auto", "weather"]
    assert events[-1] == Final(text="Rain.", turns=4)
