"""A stdio MCP server that cannot import its module: the ``MCPLoadError`` says
so in its message, but, chained to the SDK's exception, an uncaught one printed
the SDK's whole nested ExceptionGroup under it. The SDK's exception is kept as
``detail`` (and logged at debug level), not printed with the error."""

from __future__ import annotations

import logging
import sys
import traceback

import pytest

from streamtools.mcp import MCPLoadError, mcp_tools

pytestmark = pytest.mark.anyio

COMMAND = f"{sys.executable} -m streamtools.mcp s17b_no_such_module:tools"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # one backend is enough: the error is built the same on both


async def test_the_error_prints_as_its_message(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="streamtools.mcp")
    with pytest.raises(MCPLoadError) as caught:
        async with mcp_tools(COMMAND, load_timeout=30):
            pytest.fail("the server loaded")
    error = caught.value
    assert "closed the connection before the handshake completed" in str(error)
    printed = "".join(traceback.format_exception(error))
    assert "ExceptionGroup" not in printed
    assert "direct cause" not in printed and "During handling" not in printed
    assert printed.count("Traceback (most recent call last)") == 1
    # for debugging: the SDK's exception, on the error and in the debug log
    assert error.detail is not None
    assert "Connection closed" in "".join(traceback.format_exception(error.detail))
    assert any(
        record.levelno == logging.DEBUG and record.exc_info is not None
        for record in caplog.records
    )
