"""A result's structuredContent that only repeats its content blocks is not
shown to the model a second time.

FastMCP (the standalone package) gives a tool annotated ``-> list`` (or
``list[Any]``) an output schema ``{"result": [...]}``, and a call of it that
returns content blocks (pictures, sound, files) sends them as content blocks
and again, serialised, as ``structuredContent``. With no text block in the
content, the structured content was put before the blocks' placeholders: the
model read ``[image: image/png, 1032 bytes]`` and, before it, the same
picture's whole base64. The server here is the official SDK's (``MCPServer``)
sending those results as FastMCP does, over stdio; runs on asyncio and trio.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from streamtools.mcp import mcp_tools

pytestmark = pytest.mark.anyio

SERVER = '''
import base64
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import (
    AudioContent, BlobResourceContents, CallToolResult, EmbeddedResource, ImageContent,
)

server: MCPServer[Any] = MCPServer("lists")
PNG = base64.b64encode(bytes(range(256)) * 4).decode()
WAV = base64.b64encode(b"RIFF....WAVE").decode()
image = ImageContent(type="image", data=PNG, mime_type="image/png")
sound = AudioContent(type="audio", data=WAV, mime_type="audio/wav")


def copy(block: Any, **dump: Any) -> Any:
    return block.model_dump(mode="json", **dump)


@server.tool()
def charts() -> CallToolResult:
    """-> list: two pictures, and FastMCP's copy of them (camelCase, with nulls)."""
    copies = [copy(image, by_alias=True), copy(sound, by_alias=True)]
    return CallToolResult(content=[image, sound], structured_content={"result": copies})


@server.tool()
def archive() -> CallToolResult:
    """-> list: a file, and FastMCP's copy of it (its nested fields with nulls too)."""
    blob = BlobResourceContents(uri="file:///a.zip", blob=WAV, mime_type="application/zip")
    block = EmbeddedResource(type="resource", resource=blob)
    return CallToolResult(content=[block], structured_content={"result": [copy(block)]})


@server.tool()
def labelled() -> CallToolResult:
    """-> list[Any]: a picture and a plain value, which only the structured content holds."""
    copies = [copy(image, by_alias=True, exclude_none=True), {"label": "sales"}]
    return CallToolResult(content=[image], structured_content={"result": copies})


@server.tool()
def measured() -> CallToolResult:
    """A picture and structured data about it (no copy): the data is the model's to read."""
    return CallToolResult(content=[image], structured_content={"width": 32, "height": 32})


server.run("stdio")
'''


@pytest.fixture
def server(tmp_path: Path) -> str:
    script = tmp_path / "lists_server.py"
    script.write_text(SERVER)
    return f"{sys.executable} {script}"


async def test_structured_copies_of_content_blocks_are_not_shown_again(server: str) -> None:
    got: dict[str, str] = {}
    async with mcp_tools(server, call_timeout=30) as registry:
        for name in ("charts", "archive", "labelled", "measured"):
            found = registry.get(name)
            assert found is not None
            got[name] = await found.invoke({})
    assert got == {
        "charts": "[image: image/png, 1024 bytes]\n[audio: audio/wav, 12 bytes]",
        "archive": "[resource: file:///a.zip, application/zip, 12 bytes]",
        "labelled": '{"result":[{"label":"sales"}]}\n[image: image/png, 1024 bytes]',
        "measured": '{"width":32,"height":32}\n[image: image/png, 1024 bytes]',
    }
