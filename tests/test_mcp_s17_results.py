"""What the model reads for each kind of MCP tool result, from a real server over stdio.

The server is a small ``MCPServer`` script (the official SDK's FastMCP) written to a
temporary directory; an agent with a scripted model calls its tools in the hermes
dialect, and the tests read the results where the model reads them: in the next
request's messages. Runs on asyncio and trio.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from streamtools.events import Event, ToolFailed, ToolResult
from streamtools.mcp import mcp_tools
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel

pytestmark = pytest.mark.anyio

SERVER = '''
import base64
from typing import Any

from mcp.server.mcpserver import Image, MCPServer
from mcp.types import (
    AudioContent, BlobResourceContents, CallToolResult, EmbeddedResource, ResourceLink,
    TextContent, TextResourceContents,
)
from pydantic import BaseModel

server: MCPServer[Any] = MCPServer("contents")


class Weather(BaseModel):
    city: str
    temp_c: float


@server.tool()
def read_files() -> CallToolResult:
    """Two files, embedded."""
    return CallToolResult(content=[
        EmbeddedResource(type="resource", resource=TextResourceContents(
            uri="file:///a.txt", mime_type="text/plain", text="alpha one")),
        EmbeddedResource(type="resource", resource=TextResourceContents(
            uri="file:///b.md", text="beta two")),
    ])


@server.tool()
def search() -> CallToolResult:
    """Results as resource links."""
    return CallToolResult(content=[
        ResourceLink(type="resource_link", name="plan", uri="https://x.test/plan",
                     description="the migration plan, approved in May", mime_type="text/html"),
        ResourceLink(type="resource_link", name="notes", uri="file:///notes.md", size=321),
    ])


@server.tool()
def media() -> CallToolResult:
    """An image, a sound and a blob, with a caption."""
    return CallToolResult(content=[
        TextContent(type="text", text="caption"),
        AudioContent(type="audio", data=base64.b64encode(b"abcd").decode(), mime_type="audio/wav"),
        EmbeddedResource(type="resource", resource=BlobResourceContents(
            uri="file:///c.bin", blob=base64.b64encode(bytes(5)).decode())),
    ])


@server.tool()
def big_picture() -> Image:
    """A 3 MB picture."""
    return Image(data=bytes(3 * 1024 * 1024), format="png")


@server.tool()
def weather(city: str) -> Weather:
    """Structured content with an output schema."""
    return Weather(city=city, temp_c=18.5)


@server.tool()
def bare() -> CallToolResult:
    """Structured content with no text."""
    return CallToolResult(content=[], structured_content={"x": 1})


@server.tool()
def refuse() -> CallToolResult:
    """An error said in structured content only."""
    return CallToolResult(content=[], structured_content={"code": "E42"}, is_error=True)


server.run("stdio")
'''


@pytest.fixture
def server(tmp_path: Path) -> str:
    script = tmp_path / "contents_server.py"
    script.write_text(SERVER)
    return f"{sys.executable} {script}"


def hermes_call(name: str, **arguments: object) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


async def results(server: str, *calls: str) -> tuple[list[Event], str]:
    """Run one turn making ``calls``; the events, and the text of the request the
    model got next (where it reads the results)."""
    model = ScriptedModel(["".join(calls), "done"])
    events: list[Event] = []
    async with mcp_tools(server) as registry:
        agent = Agent(model, tools=registry, dialect="hermes")
        async with agent.stream("go") as stream:
            async for event in stream:
                events.append(event)
    return events, "\n".join(m.content for m in model.requests[-1].messages)


def contents(events: list[Event]) -> dict[str, str]:
    found: dict[str, str] = {}
    for event in events:
        if isinstance(event, ToolResult):
            found[event.name] = event.content
        elif isinstance(event, ToolFailed):
            found[event.name] = f"failed: {event.message}"
    return found


async def test_each_embedded_file_is_named_before_its_text(server: str) -> None:
    events, _ = await results(server, hermes_call("read_files"))
    assert contents(events)["read_files"].splitlines() == [
        "[resource: file:///a.txt, text/plain]",
        "alpha one",
        "[resource: file:///b.md]",
        "beta two",
    ]


async def test_resource_links_say_their_description_and_size(server: str) -> None:
    events, _ = await results(server, hermes_call("search"))
    assert contents(events)["search"].splitlines() == [
        "[resource link: plan <https://x.test/plan>, text/html]"
        " the migration plan, approved in May",
        "[resource link: notes <file:///notes.md>, 321 bytes]",
    ]


async def test_every_other_kind_reaches_the_model_readable(server: str) -> None:
    events, seen = await results(
        server,
        hermes_call("media"),
        hermes_call("big_picture"),
        hermes_call("weather", city="Oslo"),
        hermes_call("bare"),
        hermes_call("refuse"),
    )
    got = contents(events)
    assert got["media"].splitlines() == [
        "caption",
        "[audio: audio/wav, 4 bytes]",
        "[resource: file:///c.bin, application/octet-stream, 5 bytes]",
    ]
    # a placeholder, not three megabytes of base64
    assert got["big_picture"] == f"[image: image/png, {3 * 1024 * 1024} bytes]"
    assert json.loads(got["weather"]) == {"city": "Oslo", "temp_c": 18.5}
    assert json.loads(got["bare"]) == {"x": 1}
    assert got["refuse"].endswith('MCPToolError: {"code":"E42"}')
    # and the model is told each, in its next request
    for text in ("[audio: audio/wav, 4 bytes]", "[image: image/png, 3145728 bytes]", "E42"):
        assert text in seen
    assert len(seen) < 10_000
