"""FakeServer's whole answers, for requests that ask for no stream (``fake_whole``),
read by the official SDKs' non-streaming calls as they read the APIs' own."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import openai

from streamtools.model import (
    CallChunk,
    Chunk,
    FinishChunk,
    ReasoningChunk,
    TextChunk,
    UsageChunk,
)
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import FakeCall, Reply, Wire

WEATHER = FakeCall(name="weather", arguments={"city": "Oslo", "days": 2})


def _openai(server: FakeServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)


def test_openai_sdk_reads_a_whole_text_answer() -> None:
    with FakeServer([Reply(text="Hello there", reasoning="hm")]) as server:
        with _openai(server) as client:
            done = client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}]
            )
    assert server.requests[0].get("stream") in (None, False)
    choice = done.choices[0]
    assert choice.message.content == "Hello there" and choice.finish_reason == "stop"
    assert choice.message.tool_calls is None
    assert getattr(choice.message, "reasoning_content", None) == "hm"  # as DeepSeek sends it
    assert done.usage is not None and done.usage.completion_tokens > 0


def test_openai_sdk_reads_whole_tool_calls() -> None:
    reply = Reply(calls=(WEATHER, FakeCall(name="clock", arguments={})))
    with FakeServer([reply]) as server:
        with _openai(server) as client:
            done = client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}]
            )
    message = done.choices[0].message
    assert message.content is None and done.choices[0].finish_reason == "tool_calls"
    calls = message.tool_calls or []
    assert [c.function.name for c in calls] == ["weather", "clock"]  # type: ignore[union-attr]
    assert json.loads(calls[0].function.arguments) == {"city": "Oslo", "days": 2}  # type: ignore[union-attr]
    assert len({c.id for c in calls}) == 2


def test_the_request_stop_strings_cut_a_whole_answer() -> None:
    with FakeServer(["one two three"]) as server:
        with _openai(server) as client:
            done = client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], stop=["three"]
            )
    assert done.choices[0].message.content == "one two "


def test_anthropic_sdk_reads_a_whole_message() -> None:
    reply = Reply(text="Checking.", calls=(WEATHER,))
    with FakeServer([reply], wire="anthropic") as server:
        client = anthropic.Anthropic(base_url=server.base_url, api_key="k", max_retries=0)
        with client:
            message = client.messages.create(
                model="m", max_tokens=100, messages=[{"role": "user", "content": "hi"}]
            )
    assert [block.type for block in message.content] == ["text", "tool_use"]
    assert message.content[0].text == "Checking."  # type: ignore[union-attr]
    tool_use = message.content[1]
    assert tool_use.name == "weather" and tool_use.input == {"city": "Oslo", "days": 2}  # type: ignore[union-attr]
    assert message.stop_reason == "tool_use" and message.usage.output_tokens > 0


def test_anthropic_stop_sequence_in_a_whole_message() -> None:
    with FakeServer(["one two three"], wire="anthropic") as server:
        client = anthropic.Anthropic(base_url=server.base_url, api_key="k", max_retries=0)
        with client:
            message = client.messages.create(
                model="m",
                max_tokens=100,
                messages=[{"role": "user", "content": "hi"}],
                stop_sequences=["three"],
            )
    assert message.stop_reason == "stop_sequence" and message.stop_sequence == "three"
    assert message.content[0].text == "one two "  # type: ignore[union-attr]


def test_ollama_streams_unless_told_not_to() -> None:
    reply = Reply(text="Sure.", reasoning="think", calls=(WEATHER,))
    with FakeServer([reply, reply], wire="ollama") as server:
        url = server.base_url + "/api/chat"
        streamed = httpx.post(url, json={"model": "m", "messages": []}, timeout=5)
        whole = httpx.post(url, json={"model": "m", "messages": [], "stream": False}, timeout=5)
    assert len(streamed.text.splitlines()) > 2  # NDJSON, one line per piece
    body = whole.json()
    assert body["done"] is True and body["done_reason"] == "stop"
    assert body["message"]["content"] == "Sure." and body["message"]["thinking"] == "think"
    assert body["message"]["tool_calls"] == [
        {"function": {"name": "weather", "arguments": {"city": "Oslo", "days": 2}}}
    ]


def test_a_recorded_reply_is_one_call_per_call_in_a_whole_answer() -> None:
    """A recording made with OpenAIChat has a call's id on a chunk of its own
    and the name on the next: still one call, on every wire."""
    recorded: list[Chunk] = [
        ReasoningChunk(text="plan", signature="sig-1"),
        TextChunk(text="Let me see. "),
        CallChunk(index=0, id="call_9"),
        CallChunk(index=0, name="weather", arguments='{"city": '),
        CallChunk(index=0, arguments='"Oslo"}'),
        UsageChunk(input_tokens=5, output_tokens=7),
        FinishChunk(reason="tool_calls"),
    ]
    bodies: dict[str, Any] = {}
    cases: list[tuple[Wire, str, dict[str, Any]]] = [
        ("openai", "/chat/completions", {}),
        ("anthropic", "/v1/messages", {"max_tokens": 10, "messages": []}),
        ("ollama", "/api/chat", {"stream": False}),
    ]
    for wire, path, body in cases:
        with FakeServer([recorded], wire=wire) as server:
            r = httpx.post(server.base_url + path, json={"model": "m", **body}, timeout=5)
        assert r.status_code == 200 and r.headers["content-type"] == "application/json"
        bodies[wire] = r.json()
    (call,) = bodies["openai"]["choices"][0]["message"]["tool_calls"]
    assert call["id"] == "call_9" and call["function"]["name"] == "weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Oslo"}
    assert bodies["openai"]["usage"]["prompt_tokens"] == 5
    content = bodies["anthropic"]["content"]
    assert content[0] == {"type": "thinking", "thinking": "plan", "signature": "sig-1"}
    assert content[1:] == [
        {"type": "text", "text": "Let me see. "},
        {"type": "tool_use", "id": "call_9", "name": "weather", "input": {"city": "Oslo"}},
    ]
    assert bodies["ollama"]["message"]["tool_calls"][0]["function"]["name"] == "weather"


def test_a_failed_generation_is_a_500_not_an_answer() -> None:
    failed: list[Chunk] = [TextChunk(text="par")]
    failed.append(FinishChunk(reason="error", message="GPU fell over"))
    with FakeServer([failed, Reply(text="cut me", error_after=1)]) as server:
        first = httpx.post(server.base_url + "/chat/completions", json={}, timeout=5)
        second = httpx.post(server.base_url + "/chat/completions", json={}, timeout=5)
    assert first.status_code == 500 and "GPU fell over" in first.json()["error"]["message"]
    assert second.status_code == 500


def test_a_cut_whole_answer_is_fewer_bytes_than_promised() -> None:
    with FakeServer([Reply(text="a long enough answer", cut_after=0)]) as server:
        try:
            r = httpx.post(server.base_url + "/chat/completions", json={}, timeout=5)
        except httpx.HTTPError as exc:  # the body ended before its content-length
            assert "incomplete" in str(exc).lower() or "closed" in str(exc).lower()
        else:
            raise AssertionError(f"a cut body was read whole: {r.text!r}")
