"""``tool_choice: "none"`` (Anthropic ``{"type": "none"}``) keeps the tools in
the upstream's system prompt, so that the request's prompt starts as the
conversation's other requests do (a local upstream's prefix cache), and says
in the last user message that no tool may be called. A call the model writes
anyway never reaches the client as a call: it is re-prompted once, and with no
re-prompt left the answer ends where the call began, its markup left out. The
official SDKs are the clients, ``FakeServer`` the upstream."""

from __future__ import annotations

from typing import Any

import pytest
from test_proxy import A_WEATHER, PARIS, USER, WEATHER, _anthropic, _openai, _stream, proxy

A_USER: Any = [{"role": "user", "content": "Weather in Paris?"}]


def test_the_system_prompt_is_the_same_with_tool_choice_none() -> None:
    with proxy(["Sunny."] * 4) as (url, upstream):
        client = _openai(url)
        client.chat.completions.create(model="m", messages=USER, tools=[WEATHER])
        client.chat.completions.create(
            model="m", messages=USER, tools=[WEATHER], tool_choice="none"
        )
        claude = _anthropic(url)
        claude.messages.create(model="c", max_tokens=50, messages=A_USER, tools=[A_WEATHER])
        claude.messages.create(
            model="c", max_tokens=50, messages=A_USER, tools=[A_WEATHER],
            tool_choice={"type": "none"},
        )
        sent = [r["messages"] for r in upstream.requests]
    for auto, none in (sent[0:2], sent[2:4]):
        assert "<am:tools>" in auto[0]["content"]
        assert none[0] == auto[0]  # the system prompt, byte for byte
        assert "may not call any tool" in none[-1]["content"]
        assert "may not call any tool" not in auto[-1]["content"]


@pytest.mark.parametrize("stream", [False, True])
def test_a_call_under_none_is_re_prompted_on_chat_completions(stream: bool) -> None:
    with proxy([f"Let me look. {PARIS}", "Let me look. It is sunny."]) as (url, upstream):
        client = _openai(url)
        kw: Any = {"model": "m", "messages": USER, "tools": [WEATHER], "tool_choice": "none"}
        if stream:
            chunks, snapshot = _stream(client, **kw)
            message = snapshot.choices[0].message
            finish = [c.choices[0].finish_reason for c in chunks if c.choices][-1]
        else:
            reply = client.chat.completions.create(**kw)
            message, finish = reply.choices[0].message, reply.choices[0].finish_reason
        repair = upstream.requests[1]["messages"][-1]["content"]
    assert finish == "stop" and not message.tool_calls
    # the text the client saw before the call is not repeated
    assert message.content == "Let me look. It is sunny."
    assert "`weather` may not be called in this reply" in repair


@pytest.mark.parametrize("stream", [False, True])
def test_a_call_under_none_with_no_re_prompt_left_ends_the_answer(stream: bool) -> None:
    with proxy([f"It is sunny. {PARIS} It rained."], max_repairs=0) as (url, upstream):
        claude = _anthropic(url)
        kw: Any = {
            "model": "c", "max_tokens": 100, "messages": A_USER, "tools": [A_WEATHER],
            "tool_choice": {"type": "none"},
        }
        if stream:
            with claude.messages.stream(**kw) as s:
                message = s.get_final_message()
        else:
            message = claude.messages.create(**kw)
        assert len(upstream.requests) == 1
    assert message.stop_reason == "end_turn"
    assert [(b.type, getattr(b, "text", None)) for b in message.content] == [
        ("text", "It is sunny. ")
    ]
