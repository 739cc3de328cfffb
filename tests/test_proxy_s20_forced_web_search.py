"""Claude Code's WebSearch (2.1.274 on) forces its web search tool:
``tool_choice: {"type": "tool", "name": "web_search"}`` beside that server tool
alone, thinking disabled. The proxy leaves the tool out (the upstream cannot
search), and the forced choice of it then failed each search with a 400 ("was
given but the request has no tools"), as gateways that drop the tool met it
(BerriAI/litellm#25477). A forced choice of a tool the proxy leaves out is
now ``auto``: the model is told that no search was run and answers so. The
anthropic SDK is the client, ``FakeServer`` the upstream."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from test_proxy import A_WEATHER, PARIS, _anthropic, proxy

SEARCH: Any = {"type": "web_search_20250305", "name": "web_search", "max_uses": 8}
ASK: Any = [{"role": "user", "content": "Perform a web search for the query: streamtools 2026"}]
SAID = "I cannot search the web from here."


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("choice", [{"type": "tool", "name": "web_search"}, {"type": "any"}])
def test_a_forced_web_search_is_answered(choice: Any, stream: bool) -> None:
    with proxy([SAID]) as (url, upstream):
        kw: Any = {"model": "claude-haiku-4-5", "max_tokens": 4096, "messages": ASK,
                   "tools": [SEARCH], "tool_choice": choice, "thinking": {"type": "disabled"},
                   "extra_body": {"output_config": {"effort": "high"}}}
        client = _anthropic(url)
        if stream:
            with client.messages.stream(**kw) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(**kw)
        sent = upstream.requests[0]["messages"]
    assert message.stop_reason == "end_turn"
    assert [b.type for b in message.content] == ["text"]
    assert message.content[0].text == SAID  # type: ignore[union-attr]
    assert "No web search was run" in sent[-1]["content"]


def test_a_forced_custom_tool_beside_it_is_still_forced() -> None:
    with proxy([f"Checking. {PARIS}"]) as (url, _):
        message = _anthropic(url).messages.create(
            model="c", max_tokens=500, messages=[{"role": "user", "content": "Paris?"}],
            tools=[SEARCH, A_WEATHER], tool_choice={"type": "tool", "name": "weather"},
        )
    assert message.stop_reason == "tool_use"
    assert [b.type for b in message.content] == ["tool_use"]


def test_a_choice_of_a_tool_not_declared_is_still_a_400() -> None:
    with proxy([]) as (url, upstream):
        with pytest.raises(anthropic.BadRequestError, match="'web_fetch'"):
            _anthropic(url).messages.create(
                model="c", max_tokens=500, messages=ASK, tools=[SEARCH, A_WEATHER],
                tool_choice={"type": "tool", "name": "web_fetch"},
            )
        assert upstream.requests == []
