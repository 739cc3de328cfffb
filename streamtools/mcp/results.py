"""What a model is told for an MCP tool result: ``result_text``.

Theory of operation
-------------------
A ``CallToolResult`` carries content blocks and maybe ``structuredContent``;
a model reads text. Text blocks go as they are. Images and audio become
placeholders (``[image: image/png, 1032 bytes]``): a text model cannot see
them, but it should know that something came back and how big it was.
Embedded text resources go by their text; binary ones and resource links
become placeholders naming their URI. Blocks are joined by newlines, in order.

``structuredContent`` is used only when the result has no text block: the spec
asks servers to repeat structured content as JSON text, so using both would
show the model the same data twice.
"""

from __future__ import annotations

import msgspec
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)

__all__ = ["result_text"]


def _payload_size(data: str) -> int:
    # Decoded size of base64 text without decoding it (an image may be megabytes).
    stripped = "".join(data.split()).rstrip("=")
    return len(stripped) * 3 // 4


def result_text(result: CallToolResult) -> str:
    """The text a model is given for an MCP tool result (see the module docstring)."""
    parts: list[str] = []
    has_text = False
    for block in result.content:
        if isinstance(block, TextContent):
            has_text = True
            parts.append(block.text)
        elif isinstance(block, ImageContent):
            parts.append(f"[image: {block.mime_type}, {_payload_size(block.data)} bytes]")
        elif isinstance(block, AudioContent):
            parts.append(f"[audio: {block.mime_type}, {_payload_size(block.data)} bytes]")
        elif isinstance(block, ResourceLink):
            mime = f", {block.mime_type}" if block.mime_type else ""
            parts.append(f"[resource link: {block.name} <{block.uri}>{mime}]")
        elif isinstance(block, EmbeddedResource):
            resource = block.resource
            if isinstance(resource, BlobResourceContents):
                mime = resource.mime_type or "application/octet-stream"
                size = _payload_size(resource.blob)
                parts.append(f"[resource: {resource.uri}, {mime}, {size} bytes]")
            else:
                has_text = True
                parts.append(resource.text)
        else:  # a content type newer than this code: say so rather than drop it
            parts.append(f"[{getattr(block, 'type', 'unknown')} content]")
    if not has_text and result.structured_content is not None:
        parts.insert(0, msgspec.json.encode(result.structured_content).decode())
    return "\n".join(parts)
