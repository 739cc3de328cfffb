"""``system`` messages inside an Anthropic request's ``messages``, through the
anthropic SDK.

Claude Code 2.1.154 and later send instructions mid-conversation as
``{"role": "system", ...}`` entries of ``messages`` (Anthropic's API accepts
them); the proxy answered every such request with a 400 ("expected an object
with role 'user' or 'assistant'"), so recent Claude Code could not use it at
all. They are now notes in the user turn they came with (session 18: joined
to the system prompt, as they first were, each new one changed the start of
the prompt and a local upstream lost its prompt cache; placed where they
stand as system messages, a chat template that allows one only first refuses
them): see test_proxy_s18_prefix_cache."""

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
def test_system_messages_in_the_conversation_are_notes_in_the_user_turns(stream: bool) -> None:
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
    # one system message, first: the client's system alone
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    system = sent[0]["content"]
    assert "You are Claude Code." in system and AGENTS not in system and REMINDER not in system
    assert sent[1]["content"] == f"Weather in Paris?\n\n[system message]\n{AGENTS}"
    # the call and its result are paired across the instruction between them,
    # which follows the result
    assert '<am:tool_call name="weather">' in sent[2]["content"]
    assert sent[3]["content"].startswith('<am:tool_result name="weather">9C')
    assert sent[3]["content"].endswith(f"[system message]\n{REMINDER}")


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
