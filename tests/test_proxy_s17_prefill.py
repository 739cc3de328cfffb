"""An assistant prefill (the conversation's last message is the assistant's,
which the model is to go on from) with an instruction the proxy adds, through
the SDKs.

A required or named ``tool_choice`` (and a ``response_format`` beside tools) is
told to the model as a user message at the end. Placed after a prefill, it
turned the prefill into a finished turn, and the model answered anew instead
of going on from it. The instruction now goes into the user message before the
prefill, which stays last."""

from __future__ import annotations

from typing import Any

from test_proxy import A_WEATHER, PARIS, WEATHER, _anthropic, _openai, proxy

QUESTION = "Weather in Paris?"
PREFILL = "I will check the weather for Paris"


def _sent_ends_with_the_prefill(sent: list[Any], told: str) -> None:
    assert [m["role"] for m in sent] == ["system", "user", "assistant"]
    assert sent[-1]["content"] == PREFILL
    assert sent[1]["content"].startswith(QUESTION) and told in sent[1]["content"]


def test_an_anthropic_prefill_stays_last_with_a_required_call() -> None:
    with proxy([f" now. {PARIS}"]) as (url, upstream):
        message = _anthropic(url).messages.create(
            model="c", max_tokens=200, tools=[A_WEATHER], tool_choice={"type": "any"},
            messages=[
                {"role": "user", "content": QUESTION},
                {"role": "assistant", "content": PREFILL},
            ],
        )
        sent = upstream.requests[0]["messages"]
    assert message.stop_reason == "tool_use"
    _sent_ends_with_the_prefill(sent, "you must call at least one of the tools")


def test_an_openai_prefill_stays_last_with_a_named_call_and_a_format() -> None:
    with proxy([f" now. {PARIS}"]) as (url, upstream):
        reply = _openai(url).chat.completions.create(
            model="m", tools=[WEATHER],
            tool_choice={"type": "function", "function": {"name": "weather"}},
            response_format={"type": "json_object"},
            messages=[
                {"role": "user", "content": QUESTION},
                {"role": "assistant", "content": PREFILL},
            ],
        )
        sent = upstream.requests[0]["messages"]
    assert reply.choices[0].finish_reason == "tool_calls"
    _sent_ends_with_the_prefill(sent, "weather")
    assert "one JSON object and nothing else" in sent[1]["content"]


def test_a_conversation_ending_in_a_tool_result_gets_the_instruction_last() -> None:
    # the usual case, unchanged: the instruction after the results
    history: Any = [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}},
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "9C"},
    ]
    with proxy([PARIS]) as (url, upstream):
        _openai(url).chat.completions.create(
            model="m", tools=[WEATHER], tool_choice="required", messages=history
        )
        sent = upstream.requests[0]["messages"]
    assert sent[-1]["role"] == "user"
    assert sent[-1]["content"].endswith("you must call at least one of the tools.")
