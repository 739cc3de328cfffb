"""The endpoint in front of a real ``Agent`` (ScriptedModel, real tools, real
parser): what the browser gets, and that a disconnect cancels the model
request and the running tools."""

from __future__ import annotations

import threading

import anyio
import httpx
import pytest
from test_ui_support import read_ui_stream, serve

from streamtools.model import FinishChunk, TextChunk
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool
from streamtools.ui import UIMessageFramer, create_app, pump

CHAT = {"messages": [{"role": "user", "content": "What is 2 + 3, and how is the news?"}]}


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def news(topic: str) -> str:
    """Headlines about a topic."""
    raise RuntimeError("news feed unreachable")


def test_a_real_agent_turn_reaches_the_client_as_text_tool_cards_and_an_error_card() -> None:
    model = ScriptedModel(
        [
            'Adding.<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>'
            '<tool_call>{"name": "news", "arguments": {"topic": "sums"}}</tool_call>',
            "The sum is 5; the news feed is down.",
        ],
        seed=3,
    )
    agent = Agent(model, [add, news], dialect="hermes")
    with serve(create_app(agent)) as server:
        response = httpx.post(server.url + "/api/chat", json=CHAT, timeout=30)
    reader = read_ui_stream(response.content)
    assert reader.errors == []
    assert reader.text == "Adding.The sum is 5; the news feed is down."
    cards = [(p["toolName"], p["state"], p.get("input")) for p in reader.tool_parts]
    assert cards == [
        ("add", "output-available", {"a": 2, "b": 3}),
        ("news", "output-error", {"topic": "sums"}),
    ]
    assert reader.tool_parts[0]["output"] == "5"
    assert "news feed unreachable" in reader.tool_parts[1]["errorText"]
    # Arguments streamed as deltas (before the call completed) rebuild the input.
    assert reader.tool_parts[0]["raw"].replace(" ", "") == '{"a":2,"b":3}'
    assert model.requests[0].messages[-1].content == CHAT["messages"][0]["content"]


def test_a_model_stream_that_fails_after_a_complete_call_does_not_end_the_answer() -> None:
    """The agent runs the call and asks the model again; the stream's error was an
    ``error`` chunk mid-answer, where the SDK's chat stops reading and aborts,
    which cancelled the agent and left the card running."""
    model = ScriptedModel(
        [
            [
                TextChunk(text='<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}'),
                TextChunk(text="</tool_call>"),
                FinishChunk(reason="error", message="connection reset"),
            ],
            "It is 5.",
        ]
    )
    agent = Agent(model, [add, news], dialect="hermes")
    with serve(create_app(agent)) as server:
        response = httpx.post(server.url + "/api/chat", json=CHAT, timeout=30)
    reader = read_ui_stream(response.content)  # raises at a chunk after an error
    assert reader.errors == []
    assert reader.text == "It is 5."
    assert [(p["toolName"], p["state"]) for p in reader.tool_parts] == [
        ("add", "output-available")
    ]


def test_a_request_for_more_tools_is_not_a_card_left_running() -> None:
    """``<am:request_tools>`` is reported as a call, but the agent answers it by
    offering the tools, with no result: its card stayed "running" after the
    answer ended, and came back in the history as a call of a tool that does not
    exist."""
    model = ScriptedModel(
        [
            "Need add.<am:request_tools>add</am:request_tools>",
            '<am:tool_call name="add"><a>2</a><b>3</b></am:tool_call>',
            "It is 5.",
        ],
        seed=1,
    )
    agent = Agent(model, [add, news], dialect="am_xml", offer=["news"])
    with serve(create_app(agent)) as server:
        response = httpx.post(server.url + "/api/chat", json=CHAT, timeout=30)
    reader = read_ui_stream(response.content)
    assert reader.text == "Need add.It is 5."
    cards = [(p["toolName"], p["state"], p.get("output")) for p in reader.tool_parts]
    assert cards == [("add", "output-available", "5")]
    offered = ['<am:tool name="add"' in r.messages[0].content for r in model.requests]
    assert offered == [False, True, True]  # the request was honoured


def test_a_disconnect_cancels_the_running_tool_and_closes_the_model_stream() -> None:
    started, cancelled = threading.Event(), threading.Event()

    @tool
    async def slow(seconds: int) -> str:
        """Wait a while."""
        started.set()
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise
        return "done"

    model = ScriptedModel(
        ['<tool_call>{"name": "slow", "arguments": {"seconds": 60}}</tool_call> and more text'],
        delay=0.05,
    )
    agent = Agent(model, [slow], dialect="hermes", tool_timeout=None)
    with serve(create_app(agent)) as server:
        with httpx.stream("POST", server.url + "/api/chat", json=CHAT, timeout=30) as response:
            for line in response.iter_lines():
                if "tool-input-available" in line:
                    break
        assert started.wait(10), "the tool never started"
        assert cancelled.wait(10), "the running tool was not cancelled"
        for _ in range(200):  # the stream closes as the cancellation unwinds: bounded wait
            if model.open_streams == 0:
                break
            threading.Event().wait(0.05)
    assert model.open_streams == 0, "the model request was left open"


@pytest.mark.anyio
async def test_a_tool_running_when_the_server_shuts_down_ends_as_failed() -> None:
    """The card of a tool cut off by the end of the stream must not stay running."""
    started = anyio.Event()

    @tool
    async def slow(seconds: int) -> str:
        """Wait a while."""
        started.set()
        await anyio.sleep(seconds)
        return "done"

    model = ScriptedModel(['<tool_call>{"name": "slow", "arguments": {"seconds": 60}}</tool_call>'])
    agent = Agent(model, [slow], dialect="hermes", tool_timeout=None)
    stop = anyio.Event()
    written: list[bytes] = []

    async def send(data: bytes) -> None:
        written.append(data)

    async def shut_down_once_the_tool_runs() -> None:
        await started.wait()
        stop.set()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(shut_down_once_the_tool_runs)
            await pump(agent.stream("wait"), UIMessageFramer(), send, keepalive=5, stop=stop)
    reader = read_ui_stream(b"".join(written))
    assert [(p["toolName"], p["state"]) for p in reader.tool_parts] == [("slow", "output-error")]
    assert reader.tool_parts[0]["errorText"] == (
        "stopped before it finished: the server is shutting down"
    )
    assert reader.errors == ["the server is shutting down"]
