"""What a model is told for an MCP tool result: ``result_text``.

Theory of operation
-------------------
A ``CallToolResult`` carries content blocks and maybe ``structuredContent``;
a model reads text. Text blocks go as they are. Images and audio become
placeholders (``[image: image/png, 1032 bytes]``): a text model cannot see
them, but it should know that something came back and how big it was.
An embedded text resource goes as a line naming its URI, then its text: a
tool that returns several files (a filesystem server's ``read_multiple_files``)
gave their texts one after another with nothing to tell where one ended or
which file each was. Binary resources become placeholders naming their URI;
a resource link names its URI and says its description (a search server's
results are links, and the description is what the model can read of each).
Blocks are joined by newlines, in order.

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
            sized = f", {block.size} bytes" if block.size is not None else ""
            about = f" {block.description}" if block.description else ""
            parts.append(f"[resource link: {block.name} <{block.uri}>{mime}{sized}]{about}")
        elif isinstance(block, EmbeddedResource):
            resource = block.resource
            if isinstance(resource, BlobResourceContents):
                mime = resource.mime_type or "application/octet-stream"
                size = _payload_size(resource.blob)
                parts.append(f"[resource: {resource.uri}, {mime}, {size} bytes]")
            else:
                has_text = True
                mime = f", {resource.mime_type}" if resource.mime_type else ""
                parts.append(f"[resource: {resource.uri}{mime}]\n{resource.text}")
        else:  # a content type newer than this code: say so rather than drop it
            parts.append(f"[{getattr(block, 'type', 'unknown')} content]")
    if not has_text and result.structured_content is not None:
        parts.insert(0, msgspec.json.encode(result.structured_content).decode())
    return "\n".join(parts)
