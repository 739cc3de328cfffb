"""The tokens of an upstream request the proxy closes early reach the client's usage.

When the model writes a broken call (a tool that does not exist) and no call has
reached the client, the proxy closes that upstream stream at once and re-prompts.
The upstream's counts come at the end of a stream, so the closed request's were
never read: the client's usage said the output of the second request only, and
the tokens the first one cost were counted nowhere. Its output is now the guess
of the text the model wrote. The input stays that of the largest request (the
re-prompt, which holds the first: see ``proxy.turn``), as clients read it as
the size of their context."""

from __future__ import annotations

from typing import Any

import pytest
from test_proxy import PARIS, WEATHER, _anthropic, _openai, _stream, proxy

from streamtools.model import UsageChunk
from streamtools.testing.fake_server import Reply

USER: Any = [{"role": "user", "content": "Weather in Paris?"}]
A_WEATHER: Any = {"name": "weather", "input_schema": WEATHER["function"]["parameters"]}
# a call to a tool the client does not have, then the rest of a long reply that
# the proxy does not wait for
BROKEN = (
    'I will look it up. <am:tool_call name="forecast"><city>Paris</city></am:tool_call>'
    + " The forecast says it is sunny and warm in Paris today." * 20
)
SECOND_OUTPUT = 8
SECOND = UsageChunk(input_tokens=560, output_tokens=SECOND_OUTPUT)


def _replies() -> list[Any]:
    first = Reply(text=BROKEN, usage=UsageChunk(input_tokens=500, output_tokens=300))
    return [first, Reply(text=f"Let me check. {PARIS}", usage=SECOND)]


def _first_output() -> tuple[int, int]:
    """Bounds for the output of the closed request: at least the words up to the
    broken call, at most its whole text at a token a character."""
    upto = BROKEN[: BROKEN.index("</am:tool_call>")]
    return len(upto.split()), len(BROKEN)


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
@pytest.mark.parametrize("stream", [False, True])
def test_openai_clients_count_the_output_of_a_closed_request(wire: str, stream: bool) -> None:
    with proxy(_replies(), wire=wire) as (url, upstream):
        client = _openai(url)
        kw: Any = {"model": "m", "messages": USER, "tools": [WEATHER]}
        if stream:
            chunks, _ = _stream(client, stream_options={"include_usage": True}, **kw)
            usage = chunks[-1].usage
            calls = [c for c in chunks if c.choices and c.choices[0].delta.tool_calls]
        else:
            reply = client.chat.completions.create(**kw)
            usage, calls = reply.usage, reply.choices[0].message.tool_calls or []
        assert len(upstream.requests) == 2  # the broken call was repaired
    assert calls
    assert usage is not None
    low, high = _first_output()
    assert low < usage.completion_tokens - SECOND_OUTPUT <= high
    assert usage.prompt_tokens == 560  # the re-prompt's, which holds the first
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_anthropic_clients_count_the_output_of_a_closed_request() -> None:
    with proxy(_replies(), wire="anthropic") as (url, upstream):
        with _anthropic(url).messages.stream(
            model="c", max_tokens=500, messages=USER, tools=[A_WEATHER]
        ) as s:
            message = s.get_final_message()
        assert len(upstream.requests) == 2
    assert message.stop_reason == "tool_use"
    low, high = _first_output()
    assert low < message.usage.output_tokens - SECOND_OUTPUT <= high
    assert message.usage.input_tokens == 560


def test_a_request_closed_at_a_stop_string_counts_the_output_it_gave() -> None:
    # the client's stop strings are cut by the proxy (not sent upstream): the
    # stream is closed at one, before the upstream's counts, and the answer said
    # 0 output tokens for the text it gave
    text = "Paris is sunny today.\nEND\n" + "More words the client did not want. " * 30
    reply = Reply(text=text, usage=UsageChunk(input_tokens=100, output_tokens=400))
    with proxy([reply]) as (url, _):
        whole = _openai(url).chat.completions.create(
            model="m", messages=USER, tools=[WEATHER], stop=["END"]
        )
    assert whole.choices[0].message.content == "Paris is sunny today.\n"
    assert whole.usage is not None
    assert len("Paris is sunny today.".split()) <= whole.usage.completion_tokens < len(text) // 4
