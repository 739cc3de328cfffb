"""``result_text``: what a model is told for each kind of MCP tool result content."""

from __future__ import annotations

import base64

import pytest
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from streamtools.mcp import MCPHttp, MCPLoadError, MCPStdio, parse_server, result_text


def b64(size: int) -> str:
    return base64.b64encode(bytes(size)).decode()


@pytest.mark.parametrize("size", [0, 1, 2, 3, 1234])
def test_image_placeholder_counts_decoded_bytes(size: int) -> None:
    image = ImageContent(type="image", data=b64(size), mime_type="image/png")
    assert result_text(CallToolResult(content=[image])) == f"[image: image/png, {size} bytes]"


def test_blocks_in_order_joined_by_newlines() -> None:
    result = CallToolResult(
        content=[
            TextContent(type="text", text="two files:"),
            AudioContent(type="audio", data=b64(10), mime_type="audio/wav"),
            ResourceLink(
                type="resource_link", name="notes", uri="file:///n.md", mime_type="text/markdown"
            ),
            EmbeddedResource(
                type="resource", resource=TextResourceContents(uri="file:///a.txt", text="alpha")
            ),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(uri="file:///b.bin", blob=b64(5)),
            ),
        ]
    )
    assert result_text(result).splitlines() == [
        "two files:",
        "[audio: audio/wav, 10 bytes]",
        "[resource link: notes <file:///n.md>, text/markdown]",
        "[resource: file:///a.txt]",
        "alpha",
        "[resource: file:///b.bin, application/octet-stream, 5 bytes]",
    ]


def test_structured_content_is_used_only_without_text() -> None:
    alone = CallToolResult(content=[], structured_content={"temp_c": 21, "city": "Oslo"})
    assert result_text(alone) == '{"temp_c":21,"city":"Oslo"}'
    with_image = CallToolResult(
        content=[ImageContent(type="image", data=b64(3), mime_type="image/gif")],
        structured_content={"ok": True},
    )
    assert result_text(with_image) == '{"ok":true}\n[image: image/gif, 3 bytes]'
    repeated = CallToolResult(
        content=[TextContent(type="text", text='{"temp_c": 21}')], structured_content={"temp_c": 21}
    )
    assert result_text(repeated) == '{"temp_c": 21}'


def test_empty_result_is_empty_text() -> None:
    assert result_text(CallToolResult(content=[])) == ""


def test_parse_server() -> None:
    assert parse_server("https://example.org/mcp", namespace="x") == MCPHttp(
        "https://example.org/mcp", namespace="x"
    )
    assert parse_server("uvx 'my server' --port 3") == MCPStdio("uvx", ("my server", "--port", "3"))
    given = MCPStdio("node", ("s.js",), namespace="own")
    assert parse_server(given, namespace="ignored") is given
    with pytest.raises(MCPLoadError, match="empty MCP server command"):
        parse_server("  ")
