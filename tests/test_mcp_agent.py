"""An agent (scripted model) calls the tools of real MCP servers, end to end.

Dialects am_xml, hermes and json_action, and native mode; the SDK test server over stdio and
over streamable HTTP; a tool error, a server crash and a slow call in the
middle of a run. Runs on asyncio and trio.
"""

from __future__ import annotations

import pytest
from mcp_servers.harness import memory_command, memory_http_server

from streamtools.events import Event, Final, ToolFailed, ToolResult
from streamtools.mcp import mcp_tools
from streamtools.model import CallChunk, FinishChunk
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel
from streamtools.tools import ToolRegistry

pytestmark = pytest.mark.anyio


async def run(agent: Agent, prompt: str) -> list[Event]:
    events: list[Event] = []
    async with agent.stream(prompt) as stream:
        async for event in stream:
            events.append(event)
    return events


def outcomes(events: list[Event]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for event in events:
        if isinstance(event, ToolResult):
            found.append((event.name, event.content))
        elif isinstance(event, ToolFailed):
            found.append((event.name, f"{event.kind}: {event.message}"))
    return found


def final_text(events: list[Event]) -> str:
    finals = [e for e in events if isinstance(e, Final)]
    assert len(finals) == 1
    return finals[0].text


def last_request_text(model: ScriptedModel) -> str:
    return "\n".join(m.content for m in model.requests[-1].messages)


async def test_am_xml_agent_uses_a_stdio_server() -> None:
    model = ScriptedModel(
        [
            'Let me look.<am:tool_call name="memory.search_memory">'
            "<query>miso</query><limit>1</limit></am:tool_call>",
            "Miso is the cat.",
        ]
    )
    async with mcp_tools(memory_command(), namespace="memory") as registry:
        events = await run(Agent(model, tools=registry, dialect="am_xml"), "Who is Miso?")
    assert outcomes(events) == [("memory.search_memory", "the cat is called Miso")]
    assert final_text(events) == "Miso is the cat."
    # the tool was offered under its namespaced name, and its result reached the model
    assert 'name="memory.search_memory"' in model.requests[0].messages[0].content
    assert "the cat is called Miso" in last_request_text(model)


async def test_hermes_agent_uses_an_http_server() -> None:
    model = ScriptedModel(
        [
            '<tool_call>{"name": "add", "arguments": {"a": 20, "b": 22}}</tool_call>',
            "The sum is 42.",
        ]
    )
    with memory_http_server() as (url, _):
        async with mcp_tools(url) as registry:
            events = await run(Agent(model, tools=registry, dialect="hermes"), "20 + 22?")
    assert outcomes(events) == [("add", '{\n  "sum": 42\n}')]
    assert final_text(events) == "The sum is 42."
    assert '<tool_response>\n{"name": "add", "content": "{\\n  \\"sum\\": 42\\n}"}' in (
        last_request_text(model)
    )


async def test_tool_error_and_crash_reach_the_model_and_the_loop_goes_on() -> None:
    model = ScriptedModel(
        [
            '```json action\n{"tool": "fail", "parameters": {"reason": "no key"}}\n```',
            '```json action\n{"tool": "crash", "parameters": {}}\n```',
            '```json action\n{"tool": "add", "parameters": {"a": 1, "b": 1}}\n```',
            "The memory server crashed once and came back.",
        ]
    )
    async with mcp_tools(memory_command()) as registry:
        agent = Agent(model, tools=registry, dialect="json_action")
        events = await run(agent, "Try the tools.")
    (fail, crash, after) = outcomes(events)
    assert fail[0] == "fail" and "refused: no key" in fail[1]
    assert crash[0] == "crash" and "closed the connection during the call" in crash[1]
    assert crash[1].endswith("(it may have crashed; the next call restarts it)")
    # the next call went to a fresh server process
    assert after == ("add", '{\n  "sum": 2\n}')
    assert "refused: no key" in model.requests[1].messages[-1].content
    assert final_text(events) == "The memory server crashed once and came back."


async def test_agent_tool_timeout_cancels_the_call_and_the_session_survives() -> None:
    model = ScriptedModel(
        [
            '<tool_call>{"name": "slow", "arguments": {"seconds": 60}}</tool_call>',
            '<tool_call>{"name": "search_memory", "arguments": {"query": "tuna"}}</tool_call>',
            "Done.",
        ]
    )
    async with mcp_tools(memory_command()) as registry:
        agent = Agent(model, tools=registry, dialect="hermes", tool_timeout=0.5)
        events = await run(agent, "Wait, then search.")
    (slow, search) = outcomes(events)
    assert slow[0] == "slow" and slow[1].startswith("timeout")
    assert search == ("search_memory", "Miso likes tuna")
    assert final_text(events) == "Done."


async def test_local_and_mcp_tools_in_one_run() -> None:
    registry = ToolRegistry()

    @registry.add
    def shout(text: str) -> str:
        """Upper-case a text."""
        return text.upper()

    model = ScriptedModel(
        [
            '<am:tool_call name="shout"><text>hi</text></am:tool_call>'
            '<am:tool_call name="m.search_memory"><query>meeting</query></am:tool_call>',
            "ok",
        ]
    )
    async with mcp_tools(memory_command(), registry=registry, namespace="m"):
        events = await run(Agent(model, tools=registry, dialect="am_xml"), "go")
    assert sorted(outcomes(events)) == [
        ("m.search_memory", "the meeting moved to Tuesday"),
        ("shout", "HI"),
    ]


async def test_native_mode_offers_the_mcp_schemas_and_calls_the_server() -> None:
    model = ScriptedModel(
        [
            [
                CallChunk(index=0, id="c1", name="memory.add", arguments='{"a": 1, '),
                CallChunk(index=0, arguments='"b": 2}'),
                FinishChunk(reason="tool_calls"),
            ],
            "3.",
        ]
    )
    async with mcp_tools(memory_command(), namespace="memory") as registry:
        events = await run(Agent(model, tools=registry, native=True), "1 + 2?")
        expected_schema = registry.schema("memory.add")
    offered = {spec.name: spec for spec in model.requests[0].tools or ()}
    assert offered["memory.add"].parameters == expected_schema
    assert offered["memory.add"].description == "Add two integers."
    assert outcomes(events) == [("memory.add", '{\n  "sum": 3\n}')]
    assert final_text(events) == "3."
