"""A tool whose definition is wrong only where no call needs it is kept.

The listing screen left out a tool whose definition was not valid MCP anywhere:
an ``outputSchema`` that is not an object schema (as servers declare for a tool
that returns a list), an icon without a string ``src``, a title that is not a
string. None of those is needed to call the tool; the tool was lost for them.
They are now taken out of the definition, with a warning, and the tool kept. A
tool wrong where a call needs it (its input schema) is still left out. A server
that writes its JSON-RPC by hand (no SDK), over stdio; asyncio and trio.
"""

from __future__ import annotations

import logging

import pytest
from mcp_servers.harness import raw_command

from streamtools.mcp import mcp_tools

pytestmark = pytest.mark.anyio



async def test_tools_wrong_only_in_extras_are_kept_and_called(
    caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="streamtools.mcp"):
        async with mcp_tools(raw_command("tool-extras")) as registry:
            assert set(registry) == {"list_files", "iconic"}
            files = registry.get("list_files")
            iconic = registry.get("iconic")
            assert files is not None and iconic is not None
            assert files.description == "Files."
            assert files.parameters["properties"] == {"q": {"type": "string"}}
            # the call goes out and its (text) result comes back: no schema to miss
            assert await files.invoke({"q": "a"}) == '["list_files", {"q": "a"}]'
            assert await iconic.invoke({}) == '["iconic", {}]'
    warnings = [r.getMessage() for r in caplog.records if r.name == "streamtools.mcp"]
    assert any(
        "tool 'list_files' kept without its outputSchema, which is not valid MCP "
        "(outputSchema.type: Input should be 'object')" in w
        for w in warnings
    ), warnings
    assert any("tool 'iconic' kept without its icons and title, which are" in w for w in warnings)
    assert any(
        "tool 'no_input' left out: its definition is not valid MCP (inputSchema" in w
        for w in warnings
    ), warnings
