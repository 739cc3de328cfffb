"""The official SDKs' high-level helpers through the proxy: the anthropic SDK's
``tool_runner`` and message threads. ``FakeServer`` is the plain-chat upstream."""

from __future__ import annotations

import anthropic
import pytest
from anthropic import beta_tool
from test_proxy import PARIS, USER, _anthropic, proxy


@beta_tool
def weather(city: str) -> str:
    """Weather for a city.

    Args:
        city: the city
    """
    return f"9C in {city}"


@pytest.mark.parametrize("stream", [False, True])
def test_the_anthropic_tool_runner_sends_the_whole_conversation(stream: bool) -> None:
    # The runner asks for a server-held thread ({"type": "create"}), then sends
    # only the tool result with {"type": "continue"}: ignored, the model got a
    # result for a call it never saw, and no tools
    with proxy([f"Checking. {PARIS}", "It is 9C in Paris."]) as (url, upstream):
        runner = _anthropic(url).beta.messages.tool_runner(
            model="m", max_tokens=200, messages=USER, tools=[weather], stream=stream
        )
        if stream:
            reasons = [s.get_final_message().stop_reason for s in runner]  # type: ignore[union-attr]
        else:
            reasons = [m.stop_reason for m in runner]  # type: ignore[union-attr]
        sent = upstream.requests
    assert reasons == ["tool_use", "end_turn"]
    assert len(sent) == 2  # a refused thread never reaches the upstream
    system, *turns = sent[1]["messages"]
    assert '<am:tool name="weather"' in system["content"]
    assert [m["role"] for m in turns] == ["user", "assistant", "user"]
    assert turns[0]["content"] == USER[0]["content"]
    assert '<am:tool_call name="weather">' in turns[1]["content"]
    assert '<am:tool_result name="weather">9C in Paris</am:tool_result>' in turns[2]["content"]


@pytest.mark.parametrize(
    "thread", [{"type": "create"}, {"type": "continue", "previous_message_id": "msg_1"}]
)
def test_a_thread_is_refused_with_the_code_that_says_go_on_without_one(thread: object) -> None:
    with proxy([]) as (url, upstream):
        with pytest.raises(anthropic.BadRequestError) as info:
            _anthropic(url).beta.messages.create(
                model="m", max_tokens=10, messages=USER, extra_body={"thread": thread}
            )
        assert upstream.requests == []
    body = info.value.body
    assert isinstance(body, dict) and body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"
    assert body["error"]["details"] == {"error_code": "thread_unsupported_request"}
    assert "thread" in body["error"]["message"]
