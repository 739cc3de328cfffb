"""A server that asks its client something in the middle of a call (a
2025-06-18 server may: ``roots/list``, ``sampling/createMessage``,
``elicitation/create``, ``ping``) gets an answer at once: an error saying the
client does not support it (we declare none of those capabilities), or, for
``ping``, an empty result; a question for the user, with no ``on_elicit`` to
answer it, "decline", so that the tool goes on (``streamtools.mcp.elicit``).
Unanswered, the server would wait, and the call with it, until
``call_timeout``. A server that writes its JSON-RPC by hand
(no SDK), over stdio; runs on asyncio and trio."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp_servers.harness import raw_command

from streamtools.mcp import mcp_tools

pytestmark = pytest.mark.anyio


async def test_requests_we_do_not_support_are_refused_at_once() -> None:
    answers: dict[str, object] = {}
    async with mcp_tools(raw_command("asks"), call_timeout=30) as registry:
        for name in ("roots_list", "sampling_createMessage", "elicitation_create", "ping"):
            asking = registry.get(name)
            assert asking is not None
            with anyio.fail_after(10):
                answers[name] = json.loads(await asking.invoke({}))
    assert answers == {
        "roots_list": {"error": {"code": -32600, "message": "List roots not supported"}},
        "sampling_createMessage": {"error": {"code": -32600, "message": "Sampling not supported"}},
        "elicitation_create": {"result": {"action": "decline"}},
        "ping": {"result": {}},
    }
