"""A tool result with one content block the SDK cannot read keeps the rest.

The SDK validates a ``tools/call`` answer as a whole: an image without
``mimeType``, a content type newer than it or a text block whose text is null
made the whole result a tool error ("ValidationError: 13 validation errors for
CallToolResult"), and the text beside the block was lost, though the tool had
run. The screen now replaces each such block by a text block saying what it
was, with one warning per answer; a result with no ``content`` (structured
content alone) is read by its structured content. A server that writes its
JSON-RPC by hand (no SDK), over stdio; runs on asyncio and trio.
"""

from __future__ import annotations

import logging

import pytest
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCRequest, JSONRPCResponse
from mcp_servers.harness import raw_command

from streamtools.mcp import MCPToolError, mcp_tools
from streamtools.mcp.screen import _Screen


@pytest.mark.anyio
async def test_bad_blocks_are_named_and_the_rest_reaches_the_caller(
    caplog: pytest.LogCaptureFixture
) -> None:
    got: dict[str, str] = {}
    with caplog.at_level(logging.WARNING, logger="streamtools.mcp"):
        async with mcp_tools(raw_command("bad-content"), call_timeout=30) as registry:
            for name in ("no_mime", "newer_type", "null_text", "structured_only", "fine"):
                found = registry.get(name)
                assert found is not None
                got[name] = await found.invoke({})
            hopeless = registry.get("hopeless")
            assert hopeless is not None
            with pytest.raises(MCPToolError, match="validation error"):  # at once, as before
                await hopeless.invoke({})
    assert got == {
        "no_mime": "the chart:\n[image content that is not valid MCP (mimeType: Field required)]",
        "newer_type": "rows:\n[table content]",
        "null_text": (
            "[text content that is not valid MCP (text: Input should be a valid string)]\nkept"
        ),
        "structured_only": '{"temp":18}',
        "fine": "all good",
    }
    warnings = [r.getMessage() for r in caplog.records if r.name == "streamtools.mcp"]
    assert len(warnings) == 4, warnings
    assert "the result of 'no_mime' holds content that is not valid MCP" in warnings[0]
    assert "content[1]: mimeType: Field required" in warnings[0]
    assert "a content type this client does not know, 'table'" in warnings[1]
    assert "content[0]: text:" in warnings[2]
    assert "the result of 'structured_only' has no content" in warnings[3]


def test_a_request_for_input_is_left_as_the_server_sent_it() -> None:
    """A 2026-07-28 server may answer a call with ``resultType: input_required``
    (it needs the user's input first), which has no ``content``: given an empty
    one, the SDK read it as a finished call that returned nothing."""
    screen = _Screen("raw", lambda: "2026-07-28")
    request = JSONRPCRequest(
        jsonrpc="2.0", id=7, method="tools/call", params={"name": "confirm", "arguments": {}}
    )
    screen.sent(SessionMessage(request))
    asking = {"resultType": "input_required", "inputRequests": {}, "requestState": "s1"}
    answer = SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=7, result=dict(asking)))
    passed = screen.received(answer)
    assert isinstance(passed, SessionMessage)
    assert isinstance(passed.message, JSONRPCResponse)
    assert passed.message.result == asking
