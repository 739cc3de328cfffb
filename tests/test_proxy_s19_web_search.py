"""Claude Code's WebSearch tool asks ``/v1/messages`` with Anthropic's web search
server tool alone; the proxy answered with a 400 (a server tool the upstream
cannot run), which failed every search with an API error. A web search tool is
now left out: alone, the model is told that no search was run, so that its
answer says so (Claude Code shows it as a search that found nothing) rather
than results from memory; beside other tools, they are served as before. The
anthropic SDK is the client, ``FakeServer`` the upstream."""

from __future__ import annotations

from typing import Any

import pytest
from test_proxy import A_WEATHER, PARIS, _anthropic, proxy

SEARCH: Any = {"type": "web_search_20250305", "name": "web_search", "max_uses": 8}
ASK: Any = [{"role": "user", "content": "Perform a web search for the query: streamtools 2026"}]


@pytest.mark.parametrize("stream", [False, True])
def test_claude_codes_web_search_request_is_answered(stream: bool) -> None:
    with proxy(["I cannot search the web from here."]) as (url, upstream):
        kw: Any = {"model": "claude-haiku-4-5", "max_tokens": 500, "messages": ASK,
                   "tools": [SEARCH], "system": "You are an assistant for performing a web search."}
        client = _anthropic(url)
        if stream:
            with client.messages.stream(**kw) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(**kw)
        sent = upstream.requests[0]["messages"]
    assert message.stop_reason == "end_turn"
    assert [(b.type, getattr(b, "text", None)) for b in message.content] == [
        ("text", "I cannot search the web from here.")
    ]
    assert "<am:tools>" not in sent[0]["content"]  # no tool to show
    assert sent[-1]["content"].startswith("Perform a web search for the query: streamtools 2026")
    assert "No web search was run" in sent[-1]["content"]


def test_a_web_search_beside_other_tools_is_left_out() -> None:
    with proxy([PARIS]) as (url, upstream):
        message = _anthropic(url).messages.create(
            model="c", max_tokens=500, tools=[SEARCH, A_WEATHER],
            messages=[{"role": "user", "content": "Weather in Paris?"}],
        )
        sent = upstream.requests[0]["messages"]
    assert message.stop_reason == "tool_use"
    assert [b.type for b in message.content] == ["tool_use"]
    assert 'name="weather"' in sent[0]["content"] and "web_search" not in sent[0]["content"]
    assert "No web search" not in sent[-1]["content"]
