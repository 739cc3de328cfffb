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

``structuredContent`` is used when the result has no text block, and after
the text when the text does not repeat it. The spec asks servers to repeat
structured content as JSON text, so using both would show the model the same
data twice; but many servers send a summary as text ("Scraped 1 URL. Top
evidence chunks are in structured content.") and the data only as structured
content, which was then never shown (the data a model asked for, lost; Open
WebUI's client did the same: open-webui/open-webui#28926). The text repeats
it when each of its first ``_LEAVES_CHECKED`` strings and numbers appears in
the text, as it is or JSON-escaped (booleans and nulls are not looked for: a
summary need not spell them). Nor is what in it only repeats the
content blocks: FastMCP gives a tool annotated ``-> list`` the output schema
``{"result": [...]}``, and when such a tool returns pictures or files it sends
each as a block and again, serialised, in the structured content, which put a
picture's whole base64 before its placeholder. An object there with a
``type`` whose other fields all match one of the result's blocks is such a
copy and is left out (a list or object left empty by that goes too); the rest
of the structured content is shown, and none of it if nothing is left.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import msgspec
from mcp.client.session import ClientSession
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)

__all__ = ["lenient_output_schemas", "result_text"]

logger = logging.getLogger("streamtools.mcp")


def _payload_size(data: str) -> int:
    # Decoded size of base64 text without decoding it (an image may be megabytes).
    stripped = "".join(data.split()).rstrip("=")
    return len(stripped) * 3 // 4


_GONE = object()  # what is left of a value that only repeated content blocks


def _without_nulls(value: Any) -> Any:
    # a copy may spell out the fields a block leaves unset, as null, at any depth
    if isinstance(value, dict):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


def _copy_of_a_block(value: object, blocks: list[dict[str, Any]]) -> bool:
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        return False
    fields = _without_nulls(value)
    return any(all(block.get(k) == v for k, v in fields.items()) for block in blocks)


def _without_copies(value: Any, blocks: list[dict[str, Any]]) -> Any:
    """``value`` without the copies of ``blocks`` in it; ``_GONE`` if only copies were."""
    if _copy_of_a_block(value, blocks):
        return _GONE
    if isinstance(value, list) and value:
        items = [_without_copies(item, blocks) for item in value]
        kept = [item for item in items if item is not _GONE]
        return kept if kept else _GONE
    if isinstance(value, dict) and value:
        pairs = ((key, _without_copies(item, blocks)) for key, item in value.items())
        left = {key: item for key, item in pairs if item is not _GONE}
        return left if left else _GONE
    return value


def _structured(result: CallToolResult) -> str | None:
    """The structured content as JSON, without what repeats the content blocks."""
    value: Any = result.structured_content
    if value is None:
        return None
    if result.content:
        blocks: list[dict[str, Any]] = []
        for block in result.content:  # a copy may name the fields either way
            blocks.append(block.model_dump(mode="json", by_alias=True, exclude_none=True))
            blocks.append(block.model_dump(mode="json", exclude_none=True))
        value = _without_copies(value, blocks)
        if value is _GONE:
            return None
    return msgspec.json.encode(value).decode()


# How many of the structured content's values are looked for in the text: the
# check costs a search of the text for each.
_LEAVES_CHECKED = 100


def _leaves(value: Any, found: list[str]) -> None:
    """The strings and numbers in ``value`` as text, depth first, up to the cap."""
    if len(found) >= _LEAVES_CHECKED:
        return
    if isinstance(value, dict):
        for item in value.values():
            _leaves(item, found)
    elif isinstance(value, list):
        for item in value:
            _leaves(item, found)
    elif isinstance(value, str):
        if value:
            found.append(value)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        found.append(repr(value))


def _repeats(text: str, structured: str) -> bool:
    """Whether ``text`` already says what ``structured`` (JSON) holds."""
    found: list[str] = []
    _leaves(msgspec.json.decode(structured), found)
    for leaf in found:
        if leaf in text:
            continue
        if json.dumps(leaf, ensure_ascii=False)[1:-1] in text or json.dumps(leaf)[1:-1] in text:
            continue  # JSON-escaped, with non-ASCII characters as they are or as \u escapes
        if leaf.endswith(".0") and leaf[:-2] in text:  # 21.0 written as 21
            continue
        return False
    return True


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
    structured = _structured(result)
    if structured is None:
        return "\n".join(parts)
    if not has_text:
        return "\n".join([structured, *parts])
    text = "\n".join(parts)
    return text if _repeats(text, structured) else f"{text}\n{structured}"


def lenient_output_schemas(session: ClientSession, label: str) -> None:
    """Make ``session`` log, once per tool, a result that does not match the tool's
    output schema, instead of raising (``streamtools.mcp.connection``'s docstring
    says why). The SDK raises
    ``RuntimeError`` for that only (no structured content, content off the
    schema, a schema that is not valid); anything else still raises."""
    strict = session.validate_tool_result
    warned: set[str] = set()

    async def validate_tool_result(name: str, result: CallToolResult) -> None:
        try:
            await strict(name, result)
        except RuntimeError as exc:
            if name not in warned:
                warned.add(name)
                logger.warning(
                    "MCP server %r: the result of %r does not match its output schema (%s); "
                    "its content is used as it is",
                    label, name, str(exc).splitlines()[0],
                )

    session.validate_tool_result = validate_tool_result  # type: ignore[method-assign]
