"""A tool's text with a lone UTF-16 surrogate (a file name that is not UTF-8,
as ``os.listdir`` gives it: ``"report-\\udce9.txt"``) cannot be written as
UTF-8. The result the model reads, a tool's error message and what an MCP
server sends carry U+FFFD in its place: the run goes on, nothing is lost, and
no ``UnicodeEncodeError`` escapes. Real HTTP (FakeServer, an MCP server on
127.0.0.1)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from mcp import Client
from mcp.types import TextContent
from mcp_servers.harness import asgi_server
from provider_support import provider_for

from streamtools.errors import describe_exception
from streamtools.events import Event, Final, ToolFailed, ToolResult
from streamtools.mcp import http_app
from streamtools.results import format_result
from streamtools.runtime import Agent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Wire
from streamtools.tools import ToolRegistry, tool
from streamtools.transcript import AssistantMessage, ToolCall, Transcript, UserMessage

pytestmark = pytest.mark.anyio

NAME = "report-\udce9.txt"  # os.fsdecode(b"report-\xe9.txt") on a UTF-8 system
SHOWN = "report-\ufffd.txt"


@tool
def list_files() -> list[str]:
    """The files here."""
    return [NAME, "notes.txt"]


@tool
def first_file() -> str:
    """The first file here."""
    return NAME


@tool
def open_file() -> str:
    """Open the first file."""
    raise ValueError(f"cannot open {NAME}")


def test_format_result_replaces_lone_halves_and_keeps_pairs() -> None:
    assert format_result(NAME) == SHOWN
    assert format_result([NAME, "notes.txt"]) == f'["{SHOWN}","notes.txt"]'
    assert format_result({NAME: 1}) == f'{{"{SHOWN}":1}}'
    assert format_result("\ud83d\ude00 \ud83d") == "\U0001f600 \ufffd"  # a pair is one character
    assert format_result("plain \U0001f600") == "plain \U0001f600"
    assert describe_exception(ValueError(NAME)) == f"ValueError: {SHOWN}"


@pytest.mark.parametrize("wire", ["openai", "anthropic", "ollama"])
async def test_agent_run_goes_on_and_the_model_reads_replacements(
    anyio_backend: str, wire: Wire
) -> None:
    replies = [
        '<am:tool_call name="list_files"></am:tool_call>'
        '<am:tool_call name="first_file"></am:tool_call>'
        '<am:tool_call name="open_file"></am:tool_call>',
        "Done.",
    ]
    async with FakeServer(replies, wire=wire) as server:
        agent = Agent(provider_for(server), [list_files, first_file, open_file])
        async with agent.stream("Which files?") as stream:
            events: list[Event] = [e async for e in stream]
        sent = str(server.requests[1])
    assert events[-1] == Final(text="Done.", turns=2)
    results = {e.name: e.content for e in events if isinstance(e, ToolResult)}
    assert results == {"list_files": f'["{SHOWN}","notes.txt"]', "first_file": SHOWN}
    (failed,) = [e for e in events if isinstance(e, ToolFailed)]
    assert failed.message.endswith(f"ValueError: cannot open {SHOWN}")
    assert sent.count(SHOWN) == 3  # the second request carried all three


def _texts(content: Sequence[object]) -> list[str]:
    return [c.text for c in content if isinstance(c, TextContent)]


async def test_mcp_server_answers_and_keeps_serving() -> None:
    tools = ToolRegistry([list_files, first_file, open_file])
    with asgi_server(lambda: http_app(tools)) as base:
        async with Client(base + "/mcp") as client:
            listed = await client.call_tool("list_files", {})
            first = await client.call_tool("first_file", {})
            failed = await client.call_tool("open_file", {})
            again = await client.call_tool("first_file", {})
    assert _texts(listed.content) == [f'["{SHOWN}","notes.txt"]']
    assert _texts(first.content) == _texts(again.content) == [SHOWN]
    assert failed.is_error
    assert _texts(failed.content) == [f"Tool `open_file` failed: ValueError: cannot open {SHOWN}"]


async def test_a_prompt_with_a_lone_half_is_sent_with_a_replacement(anyio_backend: str) -> None:
    """A prompt that names such a file (``sys.argv`` and ``input()`` decode
    bytes that are not UTF-8 the same way) reaches the model with U+FFFD; the
    request failed with ``UnicodeEncodeError`` before it was sent."""
    async with FakeServer(["It is a report."]) as server:
        agent = Agent(provider_for(server))
        result = await agent.run(f"What is {NAME}?")
        sent = str(server.requests[0])
    assert result.text == "It is a report."
    assert f"What is {SHOWN}?" in sent
    assert Transcript.decode(result.transcript.encode()) == result.transcript


async def test_a_system_prompt_with_a_lone_half_is_sent_with_a_replacement(
    anyio_backend: str,
) -> None:
    """``Agent(system=...)`` is the caller's own string, not a transcript's."""
    async with FakeServer(["Noted."]) as server:
        agent = Agent(provider_for(server), [list_files], system=f"Start from {NAME}.")
        result = await agent.run("Go.")
        sent = str(server.requests[0])
    assert result.text == "Noted." and f"Start from {SHOWN}." in sent


def test_a_transcript_with_a_lone_half_still_encodes() -> None:
    """A message built with a lone half and ``add``-ed (not through ``user``)
    is written with U+FFFD, not a ``UnicodeEncodeError``; pairs are kept."""
    transcript = Transcript()
    transcript.add(UserMessage(content=NAME))
    transcript.add(
        AssistantMessage(
            calls=(ToolCall(id="c", name="open", arguments={NAME: [NAME, "\U0001f600"]}),)
        )
    )
    back = Transcript.decode(transcript.encode())
    assert back.messages == [
        UserMessage(content=SHOWN),
        AssistantMessage(
            calls=(ToolCall(id="c", name="open", arguments={SHOWN: [SHOWN, "\U0001f600"]}),)
        ),
    ]
