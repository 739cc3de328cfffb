"""Call ids: shortened only for servers that refuse long ones (OpenAI's API,
Azure OpenAI, or where ``call_id_limit`` says so), the same way in every
request of a conversation; a self-hosted server gets its own ids back. Ollama's
own call ids: ``test_providers_s16_ollama_ids``."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from provider_support import collect, mock

from streamtools.errors import UsageError
from streamtools.model import ChatMessage, ModelRequest, NativeCall, ToolSpec
from streamtools.providers import OpenAIChat
from streamtools.testing import FakeServer

pytestmark = pytest.mark.anyio

VLLM_IDS = [f"chatcmpl-tool-{n:032x}" for n in (1, 2)]  # 46 characters each
TOOLS = (ToolSpec(name="search", description="Search.", parameters={"type": "object"}),)
DONE = 'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'


def conversation(ids: list[str], turns: int = 1) -> ModelRequest:
    """A conversation whose ``turns`` assistant replies each called ``search``
    with one of ``ids`` (cycled), each call answered."""
    messages = [ChatMessage(role="user", content="Look it up.")]
    for turn in range(turns):
        calls = tuple(NativeCall(id=i, name="search", arguments={"n": turn}) for i in ids)
        messages.append(ChatMessage(role="assistant", content="", tool_calls=calls))
        messages.extend(
            ChatMessage(role="tool", content=f"result {turn} of {i}", tool_call_id=i, name="search")
            for i in ids
        )
        messages.append(ChatMessage(role="user", content="And again."))
    return ModelRequest(messages=tuple(messages), tools=TOOLS)


def sent_ids(body: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The ids of the calls, and the ids the results answer, as sent."""
    calls = [c["id"] for m in body["messages"] for c in m.get("tool_calls") or ()]
    answered = [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
    return calls, answered


async def bodies_to(base_url: str, *requests: ModelRequest, **options: Any) -> list[Any]:
    """The bodies ``OpenAIChat`` sends to ``base_url`` (MockTransport) for ``requests``."""
    seen: list[httpx.Request] = []
    client = mock(DONE, seen=seen)
    model = OpenAIChat("m", base_url=base_url, client=client, **options)
    for request in requests:
        await collect(model, request)
    return [json.loads(r.content) for r in seen]


async def test_a_self_hosted_server_gets_its_own_long_ids_back(anyio_backend: str) -> None:
    """vLLM's 46-character ids were cut to 40 for every server since OpenAI's
    API refuses longer ones: vLLM, llama.cpp and Kimi saw ids they never gave."""
    async with FakeServer(["Done."], wire="openai") as server:
        await collect(OpenAIChat("m", base_url=server.base_url), conversation(VLLM_IDS))
        (body,) = server.requests
    assert sent_ids(body) == (VLLM_IDS, VLLM_IDS)


@pytest.mark.parametrize(
    "base_url",
    [
        "https://api.openai.com/v1",
        "https://API.OpenAI.com./v1",
        "https://my-team.openai.azure.com/openai/deployments/gpt/",
    ],
)
async def test_openai_and_azure_get_ids_of_at_most_40_stable_over_the_conversation(
    anyio_backend: str, base_url: str
) -> None:
    ids = [*VLLM_IDS, "x" * 41, "call_1"]
    first, later = await bodies_to(base_url, conversation(ids), conversation(ids, turns=2))
    calls, answered = sent_ids(first)
    assert all(len(i) <= 40 for i in calls) and len(set(calls)) == len(ids)
    assert answered == calls and calls[-1] == "call_1"
    assert calls[0] != VLLM_IDS[0]
    # the next request of the conversation sends the same ids for the same calls
    again, answered_again = sent_ids(later)
    assert again == calls * 2 and answered_again == again


async def test_call_id_limit_shortens_for_any_server(anyio_backend: str) -> None:
    """A gateway in front of OpenAI under its own name: the limit is asked for."""
    async with FakeServer(["Done.", "Done."], wire="openai") as server:
        for limit in (40, 5):
            model = OpenAIChat("m", base_url=server.base_url, call_id_limit=limit)
            await collect(model, conversation([*VLLM_IDS, "c1"]))
        forty, five = server.requests
    calls, answered = sent_ids(forty)
    assert [len(i) for i in calls] == [40, 40, 2] and answered == calls
    assert calls[0][:31] == VLLM_IDS[0][:31] and calls[0] != calls[1]
    calls, answered = sent_ids(five)
    assert [len(i) for i in calls] == [5, 5, 2] and answered == calls
    assert calls[0] != calls[1]


@pytest.mark.parametrize("limit", [0, -1, True, 2.5, "40"])
def test_a_call_id_limit_that_is_no_positive_int_is_a_usage_error(limit: Any) -> None:
    with pytest.raises(UsageError, match="call_id_limit"):
        OpenAIChat("m", call_id_limit=limit)
