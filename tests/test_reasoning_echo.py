"""A reply's reasoning as the OpenAI-compatible provider sends it back: in the
field it came in, once (OpenRouter's goes as its ``reasoning_details``), only
to the server and model that streamed it unless ``send_reasoning`` says
otherwise, and with one origin for replies merged into one.
"""

from __future__ import annotations

from typing import Any

import pytest
from reasoning_support import MODEL, call, mock, multiply, sse

from streamtools.model import ChatMessage, ModelRequest, ReasoningChunk, ReasoningOrigin
from streamtools.prompts import project
from streamtools.providers import OpenAIChat
from streamtools.runtime import Agent
from streamtools.transcript import AssistantMessage, ToolCall, Transcript

pytestmark = pytest.mark.anyio


async def test_reasoning_goes_back_in_the_field_it_came_in() -> None:
    # OpenRouter, Ollama's OpenAI endpoint, Groq: ``reasoning``
    seen: list[dict[str, Any]] = []
    replies = [
        sse([{"reasoning": "Multiply."}, call("call_a", 6, 7)], "tool_calls"),
        sse([{"content": "42"}], "stop"),
    ]
    base = "https://gateway.test/v1"
    provider = OpenAIChat("m", base_url=base, client=mock(replies, seen), max_retries=0)
    result = await Agent(provider, [multiply], native=True).run("6*7?")
    assert result.text == "42"
    reply = next(m for m in seen[1]["messages"] if m["role"] == "assistant")
    assert reply["reasoning"] == "Multiply."
    assert "reasoning_content" not in reply


async def test_openrouter_reasoning_goes_back_as_its_details_only() -> None:
    # the same text comes in ``reasoning`` and ``reasoning_details``: it goes
    # back once, as the details OpenRouter asks for
    seen: list[dict[str, Any]] = []
    detail = {"type": "reasoning.text", "text": "Multiply.", "index": 0, "signature": "s"}
    replies = [
        sse([{"reasoning": "Multiply.", "reasoning_details": [detail]},
              call("call_a", 6, 7)], "tool_calls"),
        sse([{"content": "42"}], "stop"),
    ]  # fmt: skip
    base = "https://openrouter.test/api/v1"
    provider = OpenAIChat("m", base_url=base, client=mock(replies, seen), max_retries=0)
    await Agent(provider, [multiply], native=True).run("6*7?")
    reply = next(m for m in seen[1]["messages"] if m["role"] == "assistant")
    assert reply["reasoning_details"] == [detail]
    assert "reasoning" not in reply


def _history(origin_server: str) -> Transcript:
    origin = ReasoningOrigin(field="reasoning_content", server=origin_server)
    transcript = Transcript()
    transcript.user("6*7, then 1+1?")
    call = ToolCall(id="call_a", name="multiply", arguments={"a": 6, "b": 7})
    transcript.add(AssistantMessage(calls=(call,), reasoning="Multiply.", reasoning_origin=origin))
    transcript.result(call, "42")
    # a reply whose reasoning came from nowhere it can go back to (Anthropic's
    # unsigned text, a ``<think>`` block in the text): it never goes
    plain = ToolCall(id="call_b", name="multiply", arguments={"a": 1, "b": 1})
    transcript.add(AssistantMessage(calls=(plain,), reasoning="<think> text"))
    transcript.result(plain, "1")
    return transcript


def _sent(provider: OpenAIChat, transcript: Transcript) -> list[dict[str, Any]]:
    messages = project(transcript, "am_xml", [], native=True)
    body = provider.request_body(ModelRequest(messages=tuple(messages)))
    return [m for m in body["messages"] if m["role"] == "assistant"]


async def _origin_of(base_url: str, model: str) -> str:
    """The origin a stream of this server and model stamps on its reasoning."""
    data = sse([{"reasoning_content": "x"}, {"reasoning_content": "y"}], "stop")
    seen: list[dict[str, Any]] = []
    probe = OpenAIChat(model, base_url=base_url, client=mock([data], seen))
    request = ModelRequest(messages=(ChatMessage(role="user", content="hi"),))
    async with probe.stream(request) as chunks:
        reasoning = [c async for c in chunks if isinstance(c, ReasoningChunk)]
    # said once, on the first chunk
    assert [c.origin is not None for c in reasoning] == [True, False]
    origin = reasoning[0].origin
    assert origin is not None and origin.field == "reasoning_content"
    return origin.server


async def test_send_reasoning_forces_it_on_or_off() -> None:
    base = "https://api.deepseek.test"
    server = await _origin_of(base, MODEL)
    auto = OpenAIChat(MODEL, base_url=base)
    assert [m.get("reasoning_content") for m in _sent(auto, _history(server))] == [
        "Multiply.",
        None,
    ]
    fields = {"reasoning_content", "reasoning"}
    off = OpenAIChat(MODEL, base_url=base, send_reasoning=False)
    assert [set(m) & fields for m in _sent(off, _history(server))] == [set(), set()]
    # no URL is kept: the origin is a digest
    assert "deepseek" not in server
    # forced, for a conversation begun elsewhere: every reply with calls gets
    # the field, a single space where it has no reasoning that can go back
    # (DeepSeek takes no "")
    forced = OpenAIChat(MODEL, base_url="https://elsewhere.test", send_reasoning=True)
    assert [m.get("reasoning_content") for m in _sent(forced, _history(server))] == [
        "Multiply.",
        " ",
    ]
    elsewhere = OpenAIChat(MODEL, base_url="https://elsewhere.test")
    assert [set(m) & fields for m in _sent(elsewhere, _history(server))] == [set(), set()]


async def test_merged_replies_keep_one_origin_only() -> None:
    a = ReasoningOrigin(field="reasoning_content", server="a")
    b = ReasoningOrigin(field="reasoning", server="b")

    def merged(first: ReasoningOrigin | None, second: ReasoningOrigin | None) -> ChatMessage:
        transcript = Transcript()
        transcript.user("hi")
        transcript.add(AssistantMessage(text="one", reasoning="r1", reasoning_origin=first))
        transcript.add(AssistantMessage(text="two", reasoning="r2", reasoning_origin=second))
        messages = project(transcript, "am_xml", [], native=True)
        (reply,) = [m for m in messages if m.role == "assistant"]
        return reply

    assert merged(a, a).reasoning_origin == a
    assert merged(a, a).reasoning == "r1\n\nr2"
    assert merged(a, b).reasoning_origin is None
    assert merged(a, None).reasoning_origin is None


