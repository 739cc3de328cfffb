"""Text the client has seen is not sent again after a repaired broken call,
through the SDKs.

A broken call (a tool the client does not have) is repaired with a re-prompt
while no call has reached the client; the text the model wrote before it has,
as it came. The re-prompted model usually writes that text again, and the
client got it twice ("Sure. Sure. "). While the new text repeats it, it is not
sent again; from where it differs, all of it is."""

from __future__ import annotations

from typing import Any

import pytest
from test_proxy import A_WEATHER, PARIS, WEATHER, _anthropic, _openai, _stream, proxy

USER: Any = [{"role": "user", "content": "Weather in Paris?"}]
BROKEN = '<am:tool_call name="forecast"><city>Paris</city></am:tool_call>'


def _chat(replies: list[str], stream: bool) -> tuple[str | None, int]:
    with proxy(replies) as (url, upstream):
        client = _openai(url)
        if stream:
            _, snapshot = _stream(client, model="m", messages=USER, tools=[WEATHER])
            message = snapshot.choices[0].message
        else:
            reply = client.chat.completions.create(model="m", messages=USER, tools=[WEATHER])
            message = reply.choices[0].message
        assert len(upstream.requests) == 2  # the broken call was repaired
    return message.content, len(message.tool_calls or [])


@pytest.mark.parametrize("stream", [False, True])
def test_a_repeated_preamble_is_sent_once(stream: bool) -> None:
    text = "Let me look that up for you. "
    content, calls = _chat([text + BROKEN, text + PARIS], stream)
    assert (content, calls) == (text, 1)


@pytest.mark.parametrize(
    ("first", "second", "shown"),
    [
        # new words: all of them, after what was shown
        ("Sure. ", "Sorry, that tool does not exist. ", "Sure. Sorry, that tool does not exist. "),
        # the same start, then other words: none of the new text is lost
        ("I will check. ", "I will now call it. ", "I will check. I will now call it. "),
        # the repeat and more
        ("Sure. ", "Sure. Checking. ", "Sure. Checking. "),
        # nothing was shown before the broken call
        ("", "Checking. ", "Checking. "),
    ],
)
def test_new_text_after_a_repair_is_all_sent(first: str, second: str, shown: str) -> None:
    content, calls = _chat([first + BROKEN, second + PARIS], stream=True)
    assert (content, calls) == (shown, 1)


def test_an_anthropic_client_gets_the_repeat_once_too() -> None:
    text = "Let me look that up for you. "
    with proxy([text + BROKEN, text + PARIS]) as (url, _):
        with _anthropic(url).messages.stream(
            model="c", max_tokens=200, messages=USER, tools=[A_WEATHER]
        ) as s:
            message = s.get_final_message()
    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert message.content[0].text == text  # type: ignore[union-attr]


def test_when_repairs_run_out_the_broken_call_follows_the_text_once() -> None:
    content, calls = _chat(["Sure. " + BROKEN, "Sure. " + BROKEN], stream=False)
    assert (content, calls) == ("Sure. " + BROKEN, 0)
