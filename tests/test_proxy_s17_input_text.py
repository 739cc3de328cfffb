"""Text blocks named as on the Responses API (``input_text``, ``output_text``) in
an Anthropic request, through the anthropic SDK.

Some clients send them on the Messages wire too (the Claude Agent SDK, by
LiteLLM's report of its ``/v1/messages``); the proxy answered a user's or a
system prompt's ``input_text`` with a 400 (and a tool result's became a
placeholder saying it could not be read). They are read as the text they are,
as the chat wire already reads them."""

from __future__ import annotations

from typing import Any

from test_proxy import A_WEATHER, _anthropic, proxy


def test_input_and_output_text_blocks_are_text() -> None:
    messages: Any = [
        {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
        {"role": "assistant", "content": [
            {"type": "output_text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1",
             "content": [{"type": "input_text", "text": "9C and sunny"}]},
            {"type": "input_text", "text": "And tomorrow?"},
        ]},
    ]
    system: Any = [{"type": "input_text", "text": "Answer in one line."}]
    with proxy(["Sunny again."]) as (url, upstream):
        with _anthropic(url).messages.stream(
            model="c", max_tokens=100, system=system, tools=[A_WEATHER], messages=messages
        ) as s:
            message = s.get_final_message()
        sent = upstream.requests[0]["messages"]
    assert [b.type for b in message.content] == ["text"]
    assert "Answer in one line." in sent[0]["content"]
    assert sent[1] == {"role": "user", "content": "Weather in Paris?"}
    assert sent[2]["content"].startswith("Checking.")
    assert '<am:tool_result name="weather">9C and sunny' in sent[3]["content"]
    assert "And tomorrow?" in sent[3]["content"] and "omitted" not in sent[3]["content"]
