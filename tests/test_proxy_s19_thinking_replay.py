"""Claude Code sends the thinking blocks the proxy wrote back in its next
request, with the empty ``signature`` the proxy gives them (no upstream's
reasoning is signed by Anthropic), now also between its calls (interleaved
thinking). They are left out of the prompt, whatever their signature (empty,
absent, or a ``redacted_thinking`` block's data), and the calls around them
keep their places and their results. The anthropic SDK is the client,
``FakeServer`` the upstream."""

from __future__ import annotations

from typing import Any

from test_proxy import OSLO, PARIS, USER, WEATHER, _anthropic, proxy

A_WEATHER: Any = {"name": "weather", "input_schema": WEATHER["function"]["parameters"]}
REPLY = f"<think>First Paris.</think>Let me check. {PARIS}<think>Then Oslo.</think>{OSLO}"
KW: Any = {
    "model": "m", "max_tokens": 2000, "tools": [A_WEATHER],
    "thinking": {"type": "enabled", "budget_tokens": 1024},
}


def test_thinking_between_calls_replays_without_its_text() -> None:
    with proxy([REPLY, "Sunny in both."]) as (url, upstream):
        client = _anthropic(url)
        with client.messages.stream(messages=USER, **KW) as events:
            message = events.get_final_message()
        blocks = [b.model_dump(exclude_none=True) for b in message.content]
        assert [b["type"] for b in blocks] == [
            "thinking", "text", "tool_use", "thinking", "tool_use"
        ]
        assert all(b["signature"] == "" for b in blocks if b["type"] == "thinking")
        del blocks[3]["signature"]  # a client that drops an empty one
        blocks.insert(0, {"type": "redacted_thinking", "data": "opaque"})
        uses = [b for b in blocks if b["type"] == "tool_use"]
        results = [{"type": "tool_result", "tool_use_id": b["id"], "content": f"sunny {n}"}
                   for n, b in enumerate(uses)]
        history = [*USER, {"role": "assistant", "content": blocks},
                   {"role": "user", "content": results}]
        again = client.messages.create(messages=history, **KW)
        sent = str(upstream.received[1].body["messages"])
    assert [b.type for b in again.content] == ["text"]
    assert "First Paris" not in sent and "Then Oslo" not in sent and "opaque" not in sent
    # both calls, in the model's order, and both results
    assert sent.index("Paris</city>") < sent.index("Oslo</city>")
    assert "sunny 0" in sent and "sunny 1" in sent and "no such call" not in sent
