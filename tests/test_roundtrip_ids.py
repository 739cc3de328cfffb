"""Call ids minted by one provider, sent to another: a transcript is provider-neutral,
so a conversation begun on one API may go on with another."""

from __future__ import annotations

import re
from typing import Any

import pytest
from provider_support import collect, provider_for

from streamtools.model import ModelRequest, ToolSpec
from streamtools.prompts import project
from streamtools.testing import FakeServer
from streamtools.transcript import AssistantMessage, ToolCall, Transcript

pytestmark = pytest.mark.anyio

_ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]+$")  # what the Messages API takes
# Kimi K2 names its calls ``functions.NAME:N``; others use ``|`` or ``.``; two
# ids here differ only in characters the API refuses
_IDS = ["functions.search:0", "functions.search:1", "a.b", "a:b", "call_ok-1", "call|fc_9"]
_TOOLS = [ToolSpec(name="search", description="Search.", parameters={"type": "object"})]


def _history() -> Transcript:
    transcript = Transcript()
    transcript.user("Look these up.")
    calls = [ToolCall(id=i, name="search", arguments={"q": str(n)}) for n, i in enumerate(_IDS)]
    transcript.add(AssistantMessage(text="Searching.", calls=tuple(calls)))
    for call in calls:
        transcript.result(call, f"result of {call.id}")
    transcript.user("Thanks.")
    return transcript


def _request() -> ModelRequest:
    messages = project(_history(), "am_xml", _TOOLS, native=True)
    return ModelRequest(messages=tuple(messages), tools=tuple(_TOOLS))


def _blocks(body: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [
        block
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == kind
    ]


async def test_anthropic_gets_ids_it_takes_each_result_still_paired(anyio_backend: str) -> None:
    """A call id another provider minted (Kimi's ``functions.search:0``) went to
    the Messages API as it was, which refuses every request of the conversation
    with a 400 (``tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'``)."""
    async with FakeServer(["Done."], wire="anthropic") as server:
        await collect(provider_for(server), _request())
        (body,) = server.requests
    uses, results = _blocks(body, "tool_use"), _blocks(body, "tool_result")
    ids = [use["id"] for use in uses]
    assert all(_ANTHROPIC_ID.match(i) for i in ids), ids
    assert len(set(ids)) == len(_IDS)  # ids that differ stay apart
    assert "call_ok-1" in ids  # an id the API takes goes as it is
    assert [r["tool_use_id"] for r in results] == ids  # each result answers its call
    by_id = {r["tool_use_id"]: r["content"] for r in results}
    assert [by_id[use["id"]] for use in uses] == [f"result of {i}" for i in _IDS]


async def test_openai_keeps_the_ids_it_takes_as_they_were(anyio_backend: str) -> None:
    async with FakeServer(["Done."], wire="openai") as server:
        await collect(provider_for(server), _request())
        (body,) = server.requests
    calls = [call["id"] for m in body["messages"] for call in m.get("tool_calls", ())]
    answered = [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
    assert calls == _IDS and answered == _IDS


async def test_openai_gets_ids_of_at_most_40_characters(anyio_backend: str) -> None:
    """OpenAI's API refuses a past call whose id is longer than 40 characters
    (400 "Invalid 'messages[2].tool_calls[0].id': string too long"), and vLLM
    names its calls ``chatcmpl-tool-`` and 32 hex digits (46): a conversation
    begun on vLLM could not go on with OpenAI. Such an id is shortened, the
    same for the call and its result; ids that differ stay apart. (Only for
    OpenAI's hosts, or where ``call_id_limit`` asks, as here, where the fake
    server on 127.0.0.1 stands for OpenAI: ``test_providers_s16_call_ids``.)"""
    long_ids = [f"chatcmpl-tool-{n:032x}" for n in (1, 2)] + ["x" * 41]
    transcript = Transcript()
    transcript.user("Look these up.")
    calls = [ToolCall(id=i, name="search", arguments={}) for i in [*long_ids, "call_1"]]
    transcript.add(AssistantMessage(text="", calls=tuple(calls)))
    for call in calls:
        transcript.result(call, f"result of {call.id}")
    messages = project(transcript, "am_xml", _TOOLS, native=True)
    request = ModelRequest(messages=tuple(messages), tools=tuple(_TOOLS))
    async with FakeServer(["Done."], wire="openai") as server:
        await collect(provider_for(server, call_id_limit=40), request)
        (body,) = server.requests
    sent = [call["id"] for m in body["messages"] for call in m.get("tool_calls", ())]
    answered = [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
    assert all(len(i) <= 40 for i in sent) and len(set(sent)) == len(calls), sent
    assert sent[-1] == "call_1" and answered == sent
    contents = [m["content"] for m in body["messages"] if m["role"] == "tool"]
    assert contents == [f"result of {call.id}" for call in calls]
