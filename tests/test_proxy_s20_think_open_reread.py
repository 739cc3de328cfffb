"""``--think-open`` and a model that skipped its thinking: its reply finishes
with no ``</think>``, and the proxy read it all as reasoning, so every client
got an empty answer and no tool call (chat completions, Messages, Responses;
streamed or not), where the agent reads such a reply again as its answer
(c56ea2c). The proxy now reads it again at its end the same way
(``decoders.TextReader.end``): the answer and its call reach the client. The
official SDKs are the clients, ``FakeServer`` the upstream."""

from __future__ import annotations

import pytest
from test_proxy import PARIS, proxy
from test_proxy_s18b_think_open_split import CLIENTS, _chat

from streamtools.testing import Reply


@pytest.mark.parametrize(
    ("api", "stream"), [("chat", False), ("chat", True), ("messages", True), ("responses", True)]
)
def test_a_call_written_without_thinking_reaches_the_client(api: str, stream: bool) -> None:
    with proxy([Reply(text=f"Checking. {PARIS}")], think_open=True) as (url, upstream):
        text, calls = CLIENTS[api](url, stream, True)
        assert len(upstream.requests) == 1
    assert (text, calls) == ("Checking. ", [("weather", {"city": "Paris"})])


@pytest.mark.parametrize(("stream", "tools"), [(False, False), (True, True)])
def test_an_answer_without_thinking_is_the_answer(stream: bool, tools: bool) -> None:
    with proxy([Reply(text="It is sunny in Paris.")], think_open=True) as (url, _):
        assert _chat(url, stream, tools) == ("It is sunny in Paris.", [])


def test_thinking_cut_at_the_token_limit_stays_reasoning() -> None:
    cut = Reply(text=f"Maybe {PARIS} first", finish="length")
    with proxy([cut], think_open=True) as (url, _):
        assert _chat(url, False, True) == ("", [])
