"""The proxy passes the model's reasoning on, as each API carries it.

Front-ends (Open WebUI, LobeChat, Cherry Studio, Claude Code) show a model's
reasoning when the API gives it in its place. The proxy left it out, whether
the upstream wrote it as ``<think>…</think>`` in its text or sent it in its own
field (``reasoning_content``). Chat completions now carry it as
``reasoning_content`` (and ``reasoning``), in streamed deltas and in the whole
message; Anthropic's Messages as a thinking block, only when the request
enabled thinking, as the API does. The official SDKs are the clients,
``FakeServer`` the upstream."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from test_proxy import PARIS, USER, WEATHER, _anthropic, _openai, _stream, proxy

from streamtools.model import UsageChunk
from streamtools.testing import Reply

THOUGHT = "The user wants Paris; the weather tool answers that."
A_WEATHER: Any = {"name": "weather", "input_schema": WEATHER["function"]["parameters"]}
# how the upstream gives it: in its text, or in its own field
SOURCES: dict[str, Callable[[str], Any]] = {
    "think-text": lambda text: f"<think>{THOUGHT}</think>{text}",
    "field": lambda text: Reply(reasoning=THOUGHT, text=text, usage=UsageChunk(
        output_tokens=30, reasoning_tokens=12)),
}


def _extra(obj: Any, name: str) -> Any:
    return (obj.model_extra or {}).get(name)


@pytest.mark.parametrize("tools", [False, True], ids=["no-tools", "tools"])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("source", list(SOURCES))
def test_chat_completions_carry_it(source: str, stream: bool, tools: bool) -> None:
    reply = SOURCES[source]("It is sunny." + (f" {PARIS}" if tools else ""))
    kw: Any = {"model": "m", "messages": USER, **({"tools": [WEATHER]} if tools else {})}
    with proxy([reply]) as (url, _):
        client = _openai(url)
        if stream:
            chunks, completion = _stream(client, stream_options={"include_usage": True}, **kw)
            deltas = [c.choices[0].delta for c in chunks if c.choices]
            thought = "".join(_extra(d, "reasoning_content") or "" for d in deltas)
            also = "".join(_extra(d, "reasoning") or "" for d in deltas)
            # the reasoning comes before the answer, never inside its content
            first = next(i for i, d in enumerate(deltas) if _extra(d, "reasoning_content"))
            assert all(not d.content for d in deltas[: first + 1])
            usage = chunks[-1].usage
            message = completion.choices[0].message
        else:
            answer = client.chat.completions.create(**kw)
            message, usage = answer.choices[0].message, answer.usage
            thought = _extra(message, "reasoning_content")
            also = _extra(message, "reasoning")
    assert thought == THOUGHT and also == THOUGHT
    assert "think>" not in (message.content or "")
    assert (message.content or "").startswith("It is sunny.")
    calls = [(c.function.name, c.function.arguments) for c in message.tool_calls or []]
    assert calls == ([("weather", '{"city": "Paris"}')] if tools else [])
    if source == "field":  # the upstream's reasoning count, as before
        assert usage is not None and usage.completion_tokens_details is not None
        assert usage.completion_tokens_details.reasoning_tokens == 12


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("source", list(SOURCES))
def test_anthropic_thinking_blocks_when_enabled(source: str, stream: bool) -> None:
    replies = [SOURCES[source](f"Let me check. {PARIS}"), SOURCES[source]("Sunny.")]
    kw: Any = {
        "model": "m", "max_tokens": 2000, "messages": USER, "tools": [A_WEATHER],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }
    with proxy(replies) as (url, upstream):
        client = _anthropic(url)
        if stream:
            with client.messages.stream(**kw) as events:
                kinds = [e.type for e in events]
                message = events.get_final_message()
            assert "thinking" in kinds and "signature" in kinds
        else:
            message = client.messages.create(**kw)
        blocks = [b.type for b in message.content]
        assert blocks == ["thinking", "text", "tool_use"]
        thinking: Any = message.content[0]
        assert thinking.thinking == THOUGHT and isinstance(thinking.signature, str)
        # the client sends the thinking block back in its history: read without error
        # and not shown to the model as text
        call: Any = message.content[2]
        result = {"type": "tool_result", "tool_use_id": call.id, "content": "sunny"}
        history = [*USER, {"role": "assistant", "content": [b.model_dump() for b in
                   message.content]}, {"role": "user", "content": [result]}]
        again = client.messages.create(**{**kw, "messages": history})
        assert [b.type for b in again.content] == ["thinking", "text"]
        assert THOUGHT not in str(upstream.received[1])


@pytest.mark.parametrize(
    "thinking", [None, {"type": "disabled"}, {"type": "adaptive", "display": "omitted"}]
)
@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_without_thinking_leaves_it_out(stream: bool, thinking: Any) -> None:
    kw: Any = {"model": "m", "max_tokens": 500, "messages": USER, "tools": [A_WEATHER]}
    if thinking is not None:
        kw["thinking"] = thinking
    with proxy([SOURCES["think-text"](f"Let me check. {PARIS}")]) as (url, _):
        client = _anthropic(url)
        if stream:
            with client.messages.stream(**kw) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(**kw)
    assert [b.type for b in message.content] == ["text", "tool_use"]
