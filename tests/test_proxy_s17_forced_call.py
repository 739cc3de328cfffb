"""A forced call on Anthropic's wire (``tool_choice`` ``any`` or ``tool``) has no
text before it, through the anthropic SDK.

Anthropic's API writes no text block before the ``tool_use`` of such a choice,
and clients read the call as ``message.content[0]`` (the usual way to get JSON
out of a forced tool). The proxy held the model's preamble until the call
started and then sent it, so ``content[0]`` was a text block. It is now left
out there; with ``auto`` the text stays, and OpenAI's wires keep it too."""

from __future__ import annotations

from typing import Any

import pytest
from test_proxy import A_WEATHER, PARIS, WEATHER, _anthropic, _openai, proxy

USER: Any = [{"role": "user", "content": "Weather in Paris?"}]
REPLY = f"Let me check the weather. {PARIS}"


@pytest.mark.parametrize("choice", [{"type": "any"}, {"type": "tool", "name": "weather"}])
@pytest.mark.parametrize("stream", [False, True])
def test_a_forced_call_is_the_first_block(choice: Any, stream: bool) -> None:
    with proxy([REPLY]) as (url, _):
        client = _anthropic(url)
        kw: Any = {
            "model": "c", "max_tokens": 200, "messages": USER, "tools": [A_WEATHER],
            "tool_choice": choice,
        }
        if stream:
            with client.messages.stream(**kw) as s:
                message = s.get_final_message()
        else:
            message = client.messages.create(**kw)
    assert message.stop_reason == "tool_use"
    assert [b.type for b in message.content] == ["tool_use"]
    assert message.content[0].input == {"city": "Paris"}  # type: ignore[union-attr]


def test_with_auto_the_text_stays() -> None:
    with proxy([REPLY]) as (url, _):
        message = _anthropic(url).messages.create(
            model="c", max_tokens=200, messages=USER, tools=[A_WEATHER]
        )
    assert [b.type for b in message.content] == ["text", "tool_use"]


def test_a_forced_choice_that_gets_no_call_still_gives_the_text() -> None:
    # no call after the re-prompt: the text is the answer, as before
    with proxy(["It is sunny.", "Still sunny."]) as (url, _):
        message = _anthropic(url).messages.create(
            model="c", max_tokens=200, messages=USER, tools=[A_WEATHER],
            tool_choice={"type": "any"},
        )
    assert message.stop_reason == "end_turn"
    assert [b.type for b in message.content] == ["text"]
    assert message.content[0].text == "Still sunny."  # type: ignore[union-attr]


def test_openai_clients_keep_the_text_before_a_required_call() -> None:
    with proxy([REPLY]) as (url, _):
        reply = _openai(url).chat.completions.create(
            model="m", messages=USER, tools=[WEATHER], tool_choice="required"
        )
    assert reply.choices[0].message.content == "Let me check the weather. "
    assert reply.choices[0].finish_reason == "tool_calls"
