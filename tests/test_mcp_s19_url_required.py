"""A server that refuses a call until the user opens a page (the error
``URL_ELICITATION_REQUIRED``, -32042, spec 2025-11-25: a sign-in) failed the
call saying only "URL elicitation required": neither the model nor the user
learned where to go. The page now goes to ``on_elicit`` and, accepted, the
call is made once more (the server never ran it); without a handler, or
declined, the tool error names the page's message and URL. The SDK's
``MCPServer`` over stdio (``mcp_servers/asking_server.py``, ``files``)."""

from __future__ import annotations

import sys

import anyio
import pytest
from mcp_servers.harness import HERE

from streamtools.mcp import ElicitAnswer, Elicitation, MCPToolError, mcp_tools

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("anyio_backend", ["asyncio"])]

ASKING = f"{sys.executable} {HERE / 'asking_server.py'} legacy"
PAGE = "Authorization required for your files <https://example.com/oauth/authorize>"


async def test_an_accepted_page_is_followed_by_the_call_once_more() -> None:
    asked: list[Elicitation] = []

    def on_elicit(question: Elicitation) -> ElicitAnswer:
        asked.append(question)
        return ElicitAnswer("accept")

    async with mcp_tools(ASKING, on_elicit=on_elicit) as registry:
        files = registry.get("files")
        assert files is not None
        with anyio.fail_after(30):
            assert await files.invoke({}) == "a.txt b.txt"
    [page] = asked
    assert (page.mode, page.url, page.elicitation_id) == (
        "url", "https://example.com/oauth/authorize", "auth-001"
    )
    assert page.message == "Authorization required for your files"


@pytest.mark.parametrize("answer", [None, "decline"])
async def test_otherwise_the_error_names_the_page(answer: str | None) -> None:
    def on_elicit(question: Elicitation) -> ElicitAnswer:
        return ElicitAnswer("decline")

    async with mcp_tools(ASKING, on_elicit=on_elicit if answer else None) as registry:
        files = registry.get("files")
        assert files is not None
        with anyio.fail_after(30), pytest.raises(MCPToolError) as failed:
            await files.invoke({})
    why = (
        "was not run: the user chose decline for the page"
        if answer
        else "needs the user to open a page first, then to call it again"
    )
    assert str(failed.value) == f"MCP tool 'files' {why}: {PAGE}"
