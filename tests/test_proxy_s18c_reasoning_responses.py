"""The Responses API carries the model's reasoning as a ``reasoning`` output item.

Codex reads reasoning items (``response.reasoning_text.delta``, shown with
``show_raw_agent_reasoning``) and sends them back in its next request's input.
The proxy left the model's reasoning out of the Responses wire, whether the
upstream wrote it as ``<think>…</think>`` in its text or sent it in its own
field; it is now an output item before the answer, its content the text (no
summary: it is the reasoning itself), streamed and whole. The openai SDK is the
client, ``FakeServer`` the upstream."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_proxy import PARIS, WEATHER, _openai, proxy
from test_proxy_s18c_reasoning_forwarded import SOURCES, THOUGHT

from streamtools.testing import Reply

R_WEATHER: Any = {"type": "function", **WEATHER["function"]}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("source", list(SOURCES))
def test_a_reasoning_item_comes_first(source: str, stream: bool) -> None:
    replies = [SOURCES[source](f"Let me check. {PARIS}"), SOURCES[source]("Sunny.")]
    kw: Any = {"model": "m", "input": "Weather in Paris?", "tools": [R_WEATHER]}
    with proxy(replies) as (url, upstream):
        client = _openai(url)
        if stream:
            with client.responses.stream(**kw) as events:
                kinds = [e.type for e in events]
                response = events.get_final_response()
            deltas = [k for k in kinds if k == "response.reasoning_text.delta"]
            assert deltas and "response.reasoning_text.done" in kinds
            assert kinds.index("response.reasoning_text.delta") < kinds.index(
                "response.output_text.delta"
            )
        else:
            response = client.responses.create(**kw)
        assert [item.type for item in response.output] == ["reasoning", "message", "function_call"]
        reasoning: Any = response.output[0]
        assert [(c.type, c.text) for c in reasoning.content] == [("reasoning_text", THOUGHT)]
        assert reasoning.summary == []
        assert response.output_text == "Let me check. "
        call: Any = response.output[2]
        assert json.loads(call.arguments) == {"city": "Paris"}
        # Codex sends the items back with the call's output: read without error,
        # and the reasoning is not put in the model's prompt
        result = {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}
        items = [{"role": "user", "content": "Weather in Paris?"},
                 *[item.model_dump(exclude_none=True) for item in response.output], result]
        again = client.responses.create(**{**kw, "input": items})
        assert again.output_text == "Sunny."
        assert THOUGHT not in str(upstream.received[1])


@pytest.mark.parametrize("stream", [False, True])
def test_the_reasoning_comes_first_even_after_whitespace(stream: bool) -> None:
    # the parser gives the whitespace before <think> as text: the stream wrote a
    # message item, then the reasoning, then another message, and the whole
    # answer one reasoning item and one message. The whitespace before the
    # reasoning is left out; a <think> after the answer began is the answer's
    # text (the parser's Decisions), one message.
    replies = [f"\n\n<think>{THOUGHT}</think>Sunny.", f"Well <think>{THOUGHT}</think> sunny."]
    with proxy(replies) as (url, _):
        client = _openai(url)
        outputs = []
        response: Any
        for _ in replies:
            if stream:
                with client.responses.stream(model="m", input="Weather?") as events:
                    response = events.get_final_response()
            else:
                response = client.responses.create(model="m", input="Weather?")
            outputs.append(([o.type for o in response.output], response.output_text))
    assert outputs == [
        (["reasoning", "message"], "Sunny."),
        (["message"], f"Well <think>{THOUGHT}</think> sunny."),
    ]


@pytest.mark.parametrize("stream", [False, True])
def test_reasoning_cut_by_the_token_limit_is_incomplete(stream: bool) -> None:
    # the token limit ends the reply inside its reasoning: the reasoning item is
    # the one the limit cut, incomplete, in the stream and the whole answer alike
    with proxy([Reply(text=f"<think>{THOUGHT}", finish="length")]) as (url, _):
        client = _openai(url)
        response: Any
        if stream:
            with client.responses.stream(model="m", input="Weather?") as events:
                ends = [e for e in events if e.type == "response.incomplete"]
            response = ends[0].response
        else:
            response = client.responses.create(model="m", input="Weather?")
    assert response.status == "incomplete"
    assert [(o.type, o.status) for o in response.output] == [("reasoning", "incomplete")]
