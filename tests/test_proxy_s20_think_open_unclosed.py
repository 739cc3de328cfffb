"""``--think-open`` and a reply that never closes ``</think>``: the model
skipped its thinking and answered (Qwen3 run with thinking off, a template
that closed the block itself). All of it went out as reasoning: the client got
an empty answer and a call in it was never made. It is now read again as the
answer when the upstream finishes (as the agent runtime does): a whole body
holds the answer and no reasoning; a stream, whose client has seen it as
reasoning already, gets it again as the answer at its end. A reply cut at the
token limit is unfinished thinking, reasoning still. The official SDKs are the
clients, ``FakeServer`` the upstream."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_proxy import PARIS, USER, _anthropic, _openai, _stream, proxy
from test_proxy_s18b_think_open_split import CLIENTS

from streamtools.parser import NO_CALLS, Parser
from streamtools.proxy.opening import Opening
from streamtools.testing import Reply

ANSWER = "It is sunny in Paris."


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("api", list(CLIENTS))
@pytest.mark.parametrize("tools", [False, True], ids=["no-tools", "tools"])
def test_an_unclosed_reply_is_the_answer(api: str, stream: bool, tools: bool) -> None:
    reply = ANSWER + (f" {PARIS}" if tools else "")
    with proxy([reply], think_open=True) as (url, upstream):
        text, calls = CLIENTS[api](url, stream, tools)
        assert len(upstream.requests) == 1
    assert text == (f"{ANSWER} " if tools else ANSWER)
    assert calls == ([("weather", {"city": "Paris"})] if tools else [])


def test_a_whole_body_holds_no_reasoning() -> None:
    with proxy([ANSWER] * 3, think_open=True) as (url, _):
        chat = _openai(url).chat.completions.create(model="m", messages=USER).choices[0]
        message = _anthropic(url).messages.create(
            model="c", max_tokens=4096, messages=USER,
            thinking={"type": "enabled", "budget_tokens": 2048},
        )
        response = _openai(url).responses.create(model="m", input="Weather in Paris?")
    assert chat.message.content == ANSWER and chat.finish_reason == "stop"
    assert (chat.message.model_extra or {}).get("reasoning_content") is None
    assert [b.type for b in message.content] == ["text"]
    assert [item.type for item in response.output] == ["message"]


def test_a_stream_gets_the_answer_after_the_reasoning_it_saw() -> None:
    with proxy([ANSWER], think_open=True) as (url, _):
        chunks, completion = _stream(_openai(url), model="m", messages=USER)
    reasoning = "".join((c.choices[0].delta.model_extra or {}).get("reasoning_content") or ""
                        for c in chunks if c.choices)
    assert reasoning == ANSWER  # streamed as it came, before the end told otherwise
    assert completion.choices[0].message.content == ANSWER


@pytest.mark.parametrize("stream", [False, True])
def test_a_reply_cut_at_the_limit_is_reasoning_still(stream: bool) -> None:
    cut = Reply(text="The user asks about the weather, so I", finish="length")
    with proxy([cut], think_open=True) as (url, _):
        kw: Any = {"model": "m", "messages": USER}
        if stream:
            _, completion = _stream(_openai(url), **kw)
        else:
            completion = _openai(url).chat.completions.create(**kw)
    choice = completion.choices[0]
    assert not choice.message.content and choice.finish_reason == "length"


def test_a_closed_think_is_unchanged() -> None:
    with proxy(["Weather, then.</think>" + ANSWER], think_open=True) as (url, _):
        chat = _openai(url).chat.completions.create(model="m", messages=USER).choices[0]
    assert chat.message.content == ANSWER
    assert (chat.message.model_extra or {}).get("reasoning_content") == "Weather, then."


@settings(max_examples=40)
@given(st.sampled_from(["Weather, then.</think>It is sunny.", "It is sunny.",
                        "Hmm.</think>Sunny.<think>again</think> Done."]),
       st.lists(st.integers(min_value=1, max_value=40), max_size=8),
       st.booleans())
def test_held_or_not_the_events_do_not_depend_on_the_chunking(
    reply: str, cuts: list[int], hold: bool
) -> None:
    def read(pieces: list[str]) -> tuple[str, str]:
        opening = Opening(lambda think_open: Parser(NO_CALLS, think_open=think_open), hold)
        events = [e for piece in pieces for e in opening.feed(piece)] + opening.end("stop")
        said = [(type(e).__name__, getattr(e, "text", "")) for e in events]
        reasoning = "".join(t for kind, t in said if kind == "ReasoningDelta")
        return reasoning, "".join(t for kind, t in said if kind == "TextDelta")

    pieces, at = [], 0
    for cut in sorted(set(cuts)):
        pieces.append(reply[at:cut])
        at = max(at, cut)
    pieces.append(reply[at:])
    assert read([p for p in pieces if p]) == read([reply])
    reasoning, text = read([reply])
    if "</think>" not in reply:  # read again as the answer; held, its reasoning is dropped
        assert text == reply and reasoning == ("" if hold else reply)
