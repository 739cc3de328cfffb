"""Gemini 3 refuses a request whose past function call carries no thought
signature (400, "Function call is missing a thought_signature in functionCall
parts": openai/openai-agents-python#2137 through Google's OpenAI-compatible
endpoint). A call Gemini made goes back with its ``extra_content`` and its
signature; a call made on another server or model (a conversation begun on
Claude or GPT and continued on Gemini 3) has none, and every later request
failed. Google documents a sentinel for such calls,
``skip_thought_signature_validator``, which clients now send for them
(vercel/ai's @ai-sdk/google 3.0.80, strands-agents/sdk-python#1298): it goes
on the first call of a reply that has no signature, in ``extra_content``, to
a model named Gemini 3 or later (FakeServer over HTTP, and the request body)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_support import collect, text_of

from streamtools.model import ChatMessage, FinishChunk, ModelRequest, NativeCall, ToolSpec
from streamtools.providers import OpenAIChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio
SKIP = "skip_thought_signature_validator"
SIGNED = {"google": {"thought_signature": "CrICAdHtim827fQ"}}


def _history(*calls: NativeCall) -> ModelRequest:
    results = tuple(ChatMessage(role="tool", content="5", tool_call_id=c.id, name=c.name)
                    for c in calls)
    return ModelRequest(
        messages=(
            ChatMessage(role="user", content="What is 2 + 3, and 1 + 1?"),
            ChatMessage(role="assistant", content="", tool_calls=calls),
            *results,
        ),
        tools=(ToolSpec(name="add", description="Add.", parameters={"type": "object"}),),
    )


def _call(call_id: str, extra: dict[str, Any] | None = None) -> NativeCall:
    return NativeCall(id=call_id, name="add", arguments={"a": 2, "b": 3}, extra=extra)


def _gemini(body: dict[str, Any]) -> Reply:
    """Gemini 3's check: each reply's first call must carry a signature."""
    for message in body["messages"]:
        calls = message.get("tool_calls") or []
        if calls and "thought_signature" not in calls[0].get("extra_content", {}).get(
            "google", {}
        ):
            error = {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message":
                     "Function call is missing a thought_signature in functionCall parts."}}
            return Reply(status=400, body=json.dumps(error), content_type="application/json")
    return Reply(text="It is 5, and 2.")


async def test_calls_made_elsewhere_go_to_gemini_3_with_the_sentinel(anyio_backend: str) -> None:
    async with FakeServer([_gemini], wire="openai") as server:
        model = OpenAIChat("gemini-3-flash-preview", base_url=server.base_url, max_retries=0)
        chunks = await collect(model, _history(_call("toolu_1"), _call("toolu_2")))
        [sent] = server.requests
    assert text_of(chunks) == "It is 5, and 2." and chunks[-1] == FinishChunk(reason="stop")
    [assistant] = [m for m in sent["messages"] if m["role"] == "assistant"]
    first, second = assistant["tool_calls"]
    assert first["extra_content"] == {"google": {"thought_signature": SKIP}}
    assert "extra_content" not in second  # parallel calls: Gemini signs the first only


@pytest.mark.parametrize("model, calls, extras", [
    # Gemini's own calls keep their signature, and its unsigned parallel ones stay so
    ("gemini-3-pro-preview", (_call("c1", SIGNED), _call("c2")), [SIGNED, None]),
    # other content in extra_content is kept beside the sentinel
    ("google/gemini-3.1-pro", (_call("c1", {"other": 1}),),
     [{"other": 1, "google": {"thought_signature": SKIP}}]),
    ("gemini-flash-latest", (_call("c1"),), [{"google": {"thought_signature": SKIP}}]),
    # models before Gemini 3 do not check, and other models are sent nothing new
    ("gemini-2.5-flash", (_call("c1"),), [None]),
    ("gpt-5", (_call("c1"),), [None]),
])
def test_the_sentinel_goes_only_where_it_is_wanted(
    model: str, calls: tuple[NativeCall, ...], extras: list[dict[str, Any] | None]
) -> None:
    body = OpenAIChat(model, base_url="http://127.0.0.1:9/v1").request_body(_history(*calls))
    [assistant] = [m for m in body["messages"] if m["role"] == "assistant"]
    assert [c.get("extra_content") for c in assistant["tool_calls"]] == extras
