"""A call's arguments encoded twice: the ``arguments`` text is a JSON string
whose text is the JSON object (vLLM's hermes parser for Granite 4, which
writes its arguments as a string, vllm-project/vllm#54964; gpt-5.5's MCP
calls through the Responses API, justrach/codegraff2#141). The call was a
``CallError`` (invalid_json: "must be a JSON object") and the model was asked
to fix arguments it wrote right. Now they are that object. FakeServer over
HTTP, OpenAI wire, through the agent."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_support import DONE, sse

from streamtools.events import ArgsDelta, CallEnd, CallError, Event, ToolResult
from streamtools.model import CallChunk
from streamtools.native import NativeCalls
from streamtools.providers import OpenAIChat
from streamtools.runtime.agent import Agent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply
from streamtools.tools import ToolRegistry, tool

pytestmark = pytest.mark.anyio


@tool
def get_db_config(param: str) -> str:
    """A database setting."""
    return f"{param}=100"


def _call(arguments: str, pieces: int) -> str:
    size = -(-len(arguments) // pieces)
    parts = [arguments[i : i + size] for i in range(0, len(arguments), size)]
    head = {"index": 0, "id": "c1", "type": "function",
            "function": {"name": "get_db_config", "arguments": ""}}
    events: list[Any] = [{"choices": [{"index": 0, "delta": {"tool_calls": [head]}}]}]
    events += [{"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "function": {"arguments": part}}]}}]} for part in parts]
    events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return sse(*events, DONE)


async def _run(arguments: str) -> list[Event]:
    reply = Reply(raw=_call(arguments, 3).encode(), content_type="text/event-stream")
    async with FakeServer([reply, "Done."], wire="openai") as server:
        agent = Agent(OpenAIChat("granite-4", base_url=server.base_url), [get_db_config],
                      native=True)
        async with agent.stream("max_connections?") as events:
            return [e async for e in events]


async def test_arguments_encoded_twice_are_the_object(anyio_backend: str) -> None:
    twice = json.dumps('{\n  "param": "max_connections"\n}')
    seen = await _run(twice)
    assert [e for e in seen if isinstance(e, CallError)] == []
    ends = [e for e in seen if isinstance(e, CallEnd)]
    assert [(e.name, e.arguments, e.raw) for e in ends] == [
        ("get_db_config", {"param": "max_connections"}, twice)
    ]
    assert "".join(e.delta for e in seen if isinstance(e, ArgsDelta)) == twice  # as streamed
    results = [(r.name, r.content) for r in seen if isinstance(r, ToolResult)]
    assert results == [("get_db_config", "max_connections=100")]


@pytest.mark.parametrize("text", ['"max_connections"', '"[1, 2]"', '"{oops}"'])
async def test_a_string_that_holds_no_object_is_still_refused(
    anyio_backend: str, text: str
) -> None:
    seen = await _run(text)
    errors = [(e.reason, e.raw) for e in seen if isinstance(e, CallError)]
    assert errors == [("invalid_json", text)]
    assert [e for e in seen if isinstance(e, CallEnd)] == []


@tool
def save(payload: str) -> str:
    """Save a JSON text as it is."""
    return payload


def _ended(arguments: str) -> list[tuple[str, Any]]:
    calls = NativeCalls(ToolRegistry([save]))
    chunk = CallChunk(index=0, id="c1", name="save", arguments=arguments, done=True)
    return [(e.reason, e.message) if isinstance(e, CallError) else ("end", e.arguments)
            for e in calls.feed(chunk) if isinstance(e, CallEnd | CallError)]


def test_a_string_parameter_that_holds_json_stays_a_string() -> None:
    """Only the arguments themselves, which must be an object, are read through
    a string: a value the schema says is a string keeps its JSON text, one
    level encoded twice or not, and an object that does not fit the schema is
    refused by it (it may have been the string parameter's value: not run)."""
    held = json.dumps({"payload": '{"a": 1}'})
    assert _ended(held) == [("end", {"payload": '{"a": 1}'})]
    assert _ended(json.dumps(held)) == [("end", {"payload": '{"a": 1}'})]
    assert _ended(json.dumps('{"a": 1}')) == [(
        "invalid_arguments",
        "Invalid arguments for tool `save`: Object contains unknown field `a`. "
        "Allowed parameters at `$`: payload.",
    )]
