"""FakeServer: a scripted finish reason in either API's words reaches each wire as
the reason it corresponds to (``max_tokens`` was sent verbatim as an OpenAI
finish_reason, and as ``stop`` on Ollama's wire)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from streamtools.testing import FakeServer
from streamtools.testing.fake_server import FakeCall, Reply
from streamtools.testing.fake_wire import Wire, encode, reply_chunks

CALL = (FakeCall(name="add", arguments={"a": 1}),)
# (scripted, openai, anthropic, ollama)
CASES = [
    ("max_tokens", "length", "max_tokens", "length"),
    ("length", "length", "max_tokens", "length"),
    ("end_turn", "stop", "end_turn", "stop"),
    ("stop", "stop", "end_turn", "stop"),
    ("tool_use", "tool_calls", "tool_use", "stop"),
    ("tool_calls", "tool_calls", "tool_use", "stop"),
    ("refusal", "content_filter", "refusal", "stop"),
    ("content_filter", "content_filter", "refusal", "stop"),
]


def _streamed(wire: Wire, reply: Reply) -> str | None:
    body: dict[str, Any] = {"model": "m", "messages": []}
    frames = encode(wire, reply_chunks(reply, wire, body), body)
    if wire == "ollama":
        return str(json.loads(frames[-1])["done_reason"])
    datas = [f.decode().split("data: ", 1)[1] for f in frames if b"data: {" in f]
    for data in map(json.loads, datas):
        if wire == "openai" and data["choices"] and data["choices"][0]["finish_reason"]:
            return str(data["choices"][0]["finish_reason"])
        if wire == "anthropic" and data["type"] == "message_delta":
            return str(data["delta"]["stop_reason"])
    return None


@pytest.mark.parametrize(("scripted", "openai", "anthropic", "ollama"), CASES)
def test_each_wire_streams_its_own_word(
    scripted: str, openai: str, anthropic: str, ollama: str
) -> None:
    calls = CALL if "tool" in scripted else ()
    reply = Reply(text="hi", calls=calls, finish=scripted)
    assert _streamed("openai", reply) == openai
    assert _streamed("anthropic", reply) == anthropic
    assert _streamed("ollama", reply) == ollama


def test_a_whole_openai_answer_says_length_for_max_tokens() -> None:
    with FakeServer([Reply(text="cut", finish="max_tokens")]) as server:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        r = httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=10)
        assert r.json()["choices"][0]["finish_reason"] == "length"
        with FakeServer([Reply(text="cut", finish="max_tokens")], wire="ollama") as ollama:
            r = httpx.post(f"{ollama.url}/api/chat", json={**body, "stream": False}, timeout=10)
            assert r.json()["done_reason"] == "length"


def test_an_openai_reason_of_no_mapping_goes_out_as_scripted() -> None:
    reply = Reply(text="hi", finish="pause_turn")
    assert _streamed("openai", reply) == "pause_turn"
    assert _streamed("anthropic", reply) == "pause_turn"
