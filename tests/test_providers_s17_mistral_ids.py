"""Mistral's API takes only call ids of exactly nine letters and digits (its
own ids are so) and refuses any other: 400 "Tool call id was call_0 but must
be a-z, A-Z, 0-9, with a length of 9". A conversation whose calls another
server named (vLLM's 46-character ids, Anthropic's ``toolu_…``) or
``NativeCalls`` named (``call_0``) failed at its next request to Mistral; such
ids now go as nine letters and digits of their digest, the same for a call
and its result, in every request. A MockTransport that checks ids as
Mistral's API does."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest
from provider_support import collect

from streamtools.model import ChatMessage, ModelRequest, NativeCall, ToolSpec
from streamtools.providers import OpenAIChat

pytestmark = pytest.mark.anyio

OTHERS = ["call_0", "chatcmpl-tool-" + "0" * 31 + "1", "toolu_01A09q90qw90lq917835lq9"]
OWN = "D681PevKs"  # an id Mistral gave: sent back as it is
TOOLS = (ToolSpec(name="search", description="Search.", parameters={"type": "object"}),)
DONE = 'data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n'


def _request(ids: list[str]) -> ModelRequest:
    calls = tuple(NativeCall(id=i, name="search", arguments={"q": i}) for i in ids)
    return ModelRequest(
        messages=(
            ChatMessage(role="user", content="Look it up."),
            ChatMessage(role="assistant", content="", tool_calls=calls),
            *(ChatMessage(role="tool", content=f"found {i}", tool_call_id=i) for i in ids),
        ),
        tools=TOOLS,
    )


def _mistral(seen: list[dict[str, Any]]) -> httpx.AsyncClient:
    """Answers as Mistral's API: a 400 for an id of another shape."""

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body)
        for msg in body["messages"]:
            ids = [c["id"] for c in msg.get("tool_calls") or ()] + [msg.get("tool_call_id")]
            for i in ids:
                if i is not None and not re.fullmatch(r"[a-zA-Z0-9]{9}", i):
                    error = {"object": "error", "type": "invalid_function_call", "code": "3280",
                             "message": f"Tool call id was {i} but must be a-z, A-Z, 0-9, "
                                        "with a length of 9."}
                    return httpx.Response(400, json=error)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=DONE)

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


async def test_other_servers_ids_are_sent_in_mistral_s_shape(anyio_backend: str) -> None:
    seen: list[dict[str, Any]] = []
    model = OpenAIChat("mistral-large-latest", base_url="https://api.mistral.ai/v1",
                       client=_mistral(seen), max_retries=0)
    request = _request([*OTHERS, OWN])
    await collect(model, request)
    await collect(model, request)  # the next turn sends the same ids again
    first, second = seen
    calls = [c["id"] for c in first["messages"][1]["tool_calls"]]
    results = [m["tool_call_id"] for m in first["messages"][2:]]
    assert calls == results  # each result answers its call
    assert calls[-1] == OWN
    assert len(set(calls)) == len(calls)
    assert all(re.fullmatch(r"[a-zA-Z0-9]{9}", i) for i in calls)
    assert second["messages"] == first["messages"]


async def test_other_hosts_get_the_ids_as_they_are(anyio_backend: str) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=DONE)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    model = OpenAIChat("mistral-small", base_url="http://vllm:8000/v1", client=client)
    await collect(model, _request(OTHERS))
    body = json.loads(seen[0].content)
    assert [c["id"] for c in body["messages"][1]["tool_calls"]] == OTHERS
