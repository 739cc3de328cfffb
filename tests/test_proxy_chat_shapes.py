"""The shape of a chat completion through the proxy, as the openai SDK's helpers
assemble it: what a client compares with ``None`` or an empty string."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from test_proxy import PARIS, USER, WEATHER, _openai, proxy

from streamtools.testing.fake_server import Reply


@pytest.mark.parametrize("legacy", [False, True])
def test_a_reply_of_calls_only_has_null_content_streamed_or_not(legacy: bool) -> None:
    """OpenAI sends ``content: null`` in a message that only calls tools; the
    stream's first chunk said ``content: ""``, so the SDK's assembled message
    (``chat.completions.stream(...).get_final_completion()``) had ``""``,
    unlike the same answer not streamed."""
    functions: Any = [WEATHER["function"]]
    tools: dict[str, Any] = {"functions": functions} if legacy else {"tools": [WEATHER]}
    with proxy([PARIS, PARIS]) as (url, _):
        client = _openai(url)
        with client.chat.completions.stream(model="m", messages=USER, **tools) as stream:
            for _ in stream:
                pass
            streamed = stream.get_final_completion().choices[0].message
        whole = client.chat.completions.create(model="m", messages=USER, **tools)
    for message in (streamed, whole.choices[0].message):
        assert message.content is None
        if legacy:
            assert message.function_call is not None
            assert json.loads(message.function_call.arguments) == {"city": "Paris"}
        else:
            (call,) = message.tool_calls or []
            assert call.type == "function" and call.function.name == "weather"


def test_text_keeps_its_empty_start_and_an_empty_answer_is_a_string() -> None:
    """A text answer still begins as OpenAI's does (``role`` with ``content:
    ""``), and an answer of no text is ``""``, not ``None``, streamed."""
    with proxy(["Sunny.", ""]) as (url, _):
        client = _openai(url)
        chunks = list(
            client.chat.completions.create(model="m", messages=USER, tools=[WEATHER], stream=True)
        )
        with client.chat.completions.stream(model="m", messages=USER) as stream:
            for _ in stream:
                pass
            empty = stream.get_final_completion().choices[0].message
    first = chunks[0].choices[0].delta
    assert first.role == "assistant" and first.content == ""
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Sunny."
    assert empty.content == ""


@pytest.mark.parametrize("instructions", ["Be brief.", None])
def test_a_response_echoes_the_requests_instructions(instructions: str | None) -> None:
    """OpenAI's response object repeats the request's ``instructions``; the
    proxy's said null, streamed (every event's response) or not."""
    given: Any = {} if instructions is None else {"instructions": instructions}
    with proxy(["Sunny.", "Sunny."]) as (url, _):
        client = _openai(url)
        whole = client.responses.create(model="m", input="Weather?", **given)
        with client.responses.stream(model="m", input="Weather?", **given) as stream:
            events = list(stream)
            final = stream.get_final_response()
    assert whole.instructions == instructions and final.instructions == instructions
    snapshots = [getattr(e, "response") for e in events if hasattr(e, "response")]  # noqa: B009
    assert len(snapshots) == 3  # created, in_progress, completed
    assert all(r.instructions == instructions for r in snapshots)


@pytest.mark.parametrize(
    ("api", "asked"),
    [
        ("chat", {"logprobs": True}),
        ("chat", {"logprobs": True, "top_logprobs": 3}),
        ("chat", {"top_logprobs": 2}),
        ("responses", {"top_logprobs": 2}),
        ("responses", {"include": ["message.output_text.logprobs"]}),
    ],
)
def test_log_probabilities_are_refused_not_dropped(api: str, asked: dict[str, Any]) -> None:
    """The proxy cannot give them (the model's text is parsed into text and
    calls, which the upstream's tokens do not line up with): a 400 that says
    so, where the answer came with ``logprobs: null`` and the client's
    ``choice.logprobs.content`` failed on None."""
    with proxy(["Sunny."]) as (url, upstream):
        client = _openai(url)
        with pytest.raises(openai.BadRequestError, match="logprobs") as info:
            if api == "chat":
                client.chat.completions.create(model="m", messages=USER, **asked)
            else:
                client.responses.create(model="m", input="Weather?", **asked)
        assert not upstream.received
    said: Any = info.value.body
    assert said["type"] == "invalid_request_error"


def test_log_probabilities_turned_off_are_no_request() -> None:
    with proxy(["Sunny.", "Sunny."]) as (url, _):
        client = _openai(url)
        chat = client.chat.completions.create(
            model="m", messages=USER, logprobs=False, top_logprobs=0
        )
        response = client.responses.create(
            model="m", input="Weather?", top_logprobs=0, include=["reasoning.encrypted_content"]
        )
    assert chat.choices[0].message.content == "Sunny." and response.output_text == "Sunny."


def test_an_empty_answer_is_an_empty_string_not_streamed_too() -> None:
    """A model that said nothing (all reasoning, or an empty reply) gave
    ``content: null`` with no calls, which OpenAI never sends: a client's
    ``message.content.strip()`` failed on None. Streamed, it was already ``""``."""
    with proxy(["", Reply(reasoning="Hmm.", text="")]) as (url, _):
        client = _openai(url)
        for _ in range(2):
            message = client.chat.completions.create(model="m", messages=USER).choices[0].message
            assert message.content == "" and message.tool_calls is None
