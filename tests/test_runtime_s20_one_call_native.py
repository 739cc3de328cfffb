"""``Agent(max_calls_per_reply=1, native=True)`` tells an API that can take it:
OpenAI-compatible ``parallel_tool_calls: false``, Anthropic's
``tool_choice.disable_parallel_tool_use``. Before, the request said nothing, so
a model free to call in parallel wrote several calls, every one past the first
was refused, and a turn went on making them again one by one. A server that
refuses the field (OpenAI's reasoning models: "Unsupported parameter:
'parallel_tool_calls' is not supported with this model.") is asked again
without it, once, and not sent it after. Real servers on 127.0.0.1."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamtools.events import Final, ToolFailed, ToolResult
from streamtools.providers import AnthropicMessages, OpenAIChat
from streamtools.runtime import Agent
from streamtools.testing import FakeServer, ScriptedModel
from streamtools.testing.fake_server import Reply, Wire
from streamtools.testing.fake_wire import FakeCall
from streamtools.tools import tool

pytestmark = pytest.mark.anyio


@tool
def look(city: str) -> str:
    """Look a city up."""
    return f"{city}: sunny"


def one_call(request: dict[str, Any]) -> bool:
    """Whether the request asks for one call per reply, in its wire's words."""
    choice = request.get("tool_choice")
    anthropic = isinstance(choice, dict) and choice.get("disable_parallel_tool_use") is True
    return request.get("parallel_tool_calls") is False or anthropic


def model(request: dict[str, Any]) -> Reply:
    """Two calls at once unless told one per reply; the answer after a result."""
    if any(m.get("role") == "tool" or _has_result(m) for m in request["messages"]):
        return Reply(text="Both sunny." if not one_call(request) else "Oslo is sunny.")
    calls = [FakeCall(name="look", arguments={"city": "Oslo"}, id="c1")]
    if not one_call(request):
        calls.append(FakeCall(name="look", arguments={"city": "Rome"}, id="c2"))
    return Reply(calls=tuple(calls))


def _has_result(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)


def provider(wire: Wire, base_url: str) -> OpenAIChat | AnthropicMessages:
    if wire == "openai":
        return OpenAIChat("m", base_url=base_url, max_retries=0)
    return AnthropicMessages("m", base_url=base_url, max_retries=0, api_key="k")


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_one_call_per_reply_is_asked_of_the_api(anyio_backend: str, wire: Wire) -> None:
    async with FakeServer([model, model], wire=wire) as server:
        agent = Agent(provider(wire, server.base_url), [look], native=True,
                      max_calls_per_reply=1)
        async with agent.stream("weather in Oslo and Rome?") as stream:
            events = [e async for e in stream]
        sent = server.requests
    assert [one_call(body) for body in sent] == [True, True]
    # one call, run; none refused (before: Rome's refused, a turn more for it)
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["Oslo: sunny"]
    assert not any(isinstance(e, ToolFailed) for e in events)
    assert events[-1] == Final(text="Oslo is sunny.", turns=2)


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_without_the_limit_nothing_is_said(anyio_backend: str, wire: Wire) -> None:
    async with FakeServer([model, model], wire=wire) as server:
        agent = Agent(provider(wire, server.base_url), [look], native=True)
        result = await agent.run("weather in Oslo and Rome?")
        sent = server.requests
    assert result.text == "Both sunny."
    assert not any(one_call(body) or "parallel_tool_calls" in body for body in sent)


O_SERIES = json.dumps({"error": {
    "message": "Unsupported parameter: 'parallel_tool_calls' is not supported with this model.",
    "type": "invalid_request_error", "param": "parallel_tool_calls",
    "code": "unsupported_parameter"}})
ANTHROPIC_LIKE = json.dumps({"type": "error", "error": {
    "type": "invalid_request_error",
    "message": "tool_choice.disable_parallel_tool_use: Extra inputs are not permitted"}})


def refusing(body: str) -> Any:
    def answer(request: dict[str, Any]) -> Reply:
        choice = request.get("tool_choice")
        if "parallel_tool_calls" in request or (
            isinstance(choice, dict) and "disable_parallel_tool_use" in choice
        ):
            return Reply(status=400, body=body, content_type="application/json")
        return model(request)

    return answer


@pytest.mark.parametrize(
    ("wire", "body"),
    [("openai", O_SERIES), ("anthropic", ANTHROPIC_LIKE)],
    ids=["openai", "anthropic"],
)
async def test_a_server_that_refuses_the_field_is_asked_without_it(
    anyio_backend: str, wire: Wire, body: str
) -> None:
    answer = refusing(body)
    async with FakeServer([answer] * 3, wire=wire) as server:
        chosen = provider(wire, server.base_url)
        agent = Agent(chosen, [look], native=True, max_calls_per_reply=1)
        async with agent.stream("weather in Oslo and Rome?") as stream:
            events = [e async for e in stream]
        sent = server.requests
    assert [one_call(b) for b in sent] == [True, False, False]  # refused once, then not sent
    assert chosen.supports_parallel_tool_calls is False
    # the limit holds all the same: the second call is refused by the runtime
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["Oslo: sunny"]
    assert [e.kind for e in events if isinstance(e, ToolFailed)] == ["refused"]
    assert isinstance(events[-1], Final)


async def test_an_anthropic_tool_choice_keeps_its_kind(anyio_backend: str) -> None:
    async with FakeServer([model, model], wire="anthropic") as server:
        agent = Agent(provider("anthropic", server.base_url), [look], native=True,
                      max_calls_per_reply=1, tool_choice="required")
        await agent.run("weather in Oslo?")
        sent = server.requests
    assert sent[0]["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    assert sent[1]["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}


def hermes(city: str) -> str:
    body = json.dumps({"name": "look", "arguments": {"city": city}})
    return f"<tool_call>{body}</tool_call>"


@pytest.mark.parametrize("honor_stop", [True, False])
async def test_a_prompt_dialect_stops_the_reply_at_its_first_call(honor_stop: bool) -> None:
    # The dialect's closing marker goes as ``stop``: a provider that honours it ends
    # the reply there, so no second call (nor a made-up result) is written; one that
    # ignores it still has the calls past the first refused, as before.
    two = hermes("Oslo") + "\nResult: sunny.\n" + hermes("Rome")
    model = ScriptedModel([two, "Oslo is sunny."], honor_stop=honor_stop)
    agent = Agent(model, [look], dialect="hermes", max_calls_per_reply=1)
    async with agent.stream("weather in Oslo and Rome?") as stream:
        events = [e async for e in stream]
    assert "</tool_call>" in model.requests[0].stop
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["Oslo: sunny"]
    refused = [e.name for e in events if isinstance(e, ToolFailed)]
    assert refused == ([] if honor_stop else ["look"])
    assert events[-1] == Final(text="Oslo is sunny.", turns=2)
