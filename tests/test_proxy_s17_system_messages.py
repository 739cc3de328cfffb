"""``system`` messages inside an Anthropic request's ``messages``, through the
anthropic SDK.

Claude Code 2.1.154 and later send instructions mid-conversation as
``{"role": "system", ...}`` entries of ``messages`` (Anthropic's API accepts
them); the proxy answered every such request with a 400 ("expected an object
with role 'user' or 'assistant'"), so recent Claude Code could not use it at
all. They now join the system prompt, after the top-level ``system``, as the
OpenAI wire's system messages do: placed where they stand, a chat template
that allows a system message only first refuses or garbles them."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from test_proxy import A_WEATHER, PARIS, _anthropic, proxy

TOP: Any = [
    {"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}}
]
AGENTS = "Available agent types for the Agent tool: general-purpose."
REMINDER = "The user switched to plan mode."


def _conversation() -> list[Any]:
    return [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "system", "content": AGENTS},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}},
        ]},
        {"role": "system", "content": [{"type": "text", "text": REMINDER}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "9C"},
        ]},
    ]


@pytest.mark.parametrize("stream", [False, True])
def test_system_messages_in_the_conversation_join_the_system_prompt(stream: bool) -> None:
    with proxy([f"Again. {PARIS}"]) as (url, upstream):
        client = _anthropic(url)
        kw: Any = {
            "model": "c", "max_tokens": 200, "system": TOP, "tools": [A_WEATHER],
            "messages": _conversation(),
        }
        if stream:
            with client.messages.stream(**kw) as s:
                message = s.get_final_message()
        else:
            message = client.messages.create(**kw)
        sent = upstream.requests[0]["messages"]
    assert message.stop_reason == "tool_use"
    assert [b.type for b in message.content] == ["text", "tool_use"]
    # one system message, first: the client's system, then each instruction in order
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    system = sent[0]["content"]
    assert system.index("You are Claude Code.") < system.index(AGENTS) < system.index(REMINDER)
    # the call and its result are paired across the instruction between them
    assert '<am:tool_call name="weather">' in sent[2]["content"]
    assert '<am:tool_result name="weather">9C' in sent[3]["content"]
    assert AGENTS not in sent[1]["content"] and REMINDER not in sent[3]["content"]


def test_the_token_count_reads_them_too() -> None:
    with proxy([]) as (url, _):
        body = {"model": "c", "system": TOP, "tools": [A_WEATHER], "messages": _conversation()}
        bare = {**body, "messages": [m for m in body["messages"] if m["role"] != "system"]}
        counts = [
            _anthropic(url).messages.count_tokens(**kw).input_tokens for kw in (body, bare)
        ]
    assert counts[0] > counts[1] > 0


def test_another_role_is_still_a_400_that_names_the_roles() -> None:
    with proxy([]) as (url, upstream):
        answer = httpx.post(
            f"{url}/v1/messages",
            json={"model": "c", "max_tokens": 10, "messages": [{"role": "tool", "content": "x"}]},
            timeout=20,
        )
        assert upstream.requests == []
    assert answer.status_code == 400
    assert "role 'user', 'assistant' or 'system'" in answer.json()["error"]["message"]
