"""A result whose text is a summary and whose data is only in
``structuredContent`` reaches the model whole: the structured content was used
only when the result had no text block, so the data a tool returned was never
shown (Open WebUI's client did the same: open-webui/open-webui#28926). It is
still left out when the text repeats it, as the spec asks servers to do (as
JSON, pretty-printed, escaped, or one text block per item of FastMCP's
``{"result": [...]}``). ``result_text`` over the SDK's result type, and one
result through the SDK's ``MCPServer`` over stdio."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mcp.types import CallToolResult, ContentBlock, TextContent

from streamtools.mcp import mcp_tools, result_text

pytestmark = pytest.mark.anyio

CHUNKS = {"chunks": [{"url": "https://example.com", "text": "Example Domain is for use in docs"}]}


def _text(*texts: str) -> list[ContentBlock]:
    return [TextContent(type="text", text=t) for t in texts]


def test_a_summary_is_followed_by_the_data_it_does_not_say() -> None:
    summary = "Scraped 1 URLs: 1 useful, 0 failed.\nTop evidence chunks are in structured content."
    result = CallToolResult(content=_text(summary), structured_content=CHUNKS)
    said = result_text(result)
    assert said.startswith(summary + "\n")
    assert json.loads(said[len(summary) + 1 :]) == CHUNKS


@pytest.mark.parametrize(
    "texts",
    [
        (json.dumps(CHUNKS),),
        (json.dumps(CHUNKS, indent=2),),
        ("Found https://example.com: Example Domain is for use in docs",),
    ],
)
def test_text_that_repeats_the_data_is_not_followed_by_it(texts: tuple[str, ...]) -> None:
    result = CallToolResult(content=_text(*texts), structured_content=CHUNKS)
    assert result_text(result) == "\n".join(texts)


def test_escaped_and_fastmcp_list_repeats_are_recognised() -> None:
    quoted = {"line": 'say "hé"\nthen go', "n": 21.0}
    for text in (json.dumps(quoted), json.dumps(quoted, ensure_ascii=False)):
        assert result_text(CallToolResult(content=_text(text), structured_content=quoted)) == text
    listed = CallToolResult(
        content=_text("oslo", "bergen"), structured_content={"result": ["oslo", "bergen"]}
    )
    assert result_text(listed) == "oslo\nbergen"


SERVER = '''
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ContentBlock, TextContent

server: MCPServer[Any] = MCPServer("scraper")


@server.tool()
def scrape(url: str) -> CallToolResult:
    """Scrape a page."""
    return CallToolResult(
        content=[TextContent(type="text", text="Scraped 1 URL; the text is elsewhere.")],
        structured_content={"url": url, "text": "Example Domain"},
    )


server.run("stdio")
'''


async def test_through_an_sdk_server(tmp_path: Path) -> None:
    script = tmp_path / "scraper.py"
    script.write_text(SERVER)
    async with mcp_tools(f"{sys.executable} {script}") as registry:
        scrape = registry.get("scrape")
        assert scrape is not None
        said = await scrape.invoke({"url": "https://example.com"})
    summary, data = said.split("\n", 1)
    assert summary == "Scraped 1 URL; the text is elsewhere."
    assert json.loads(data) == {"url": "https://example.com", "text": "Example Domain"}
