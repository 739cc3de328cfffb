"""An Anthropic client's ``thinking`` (Claude Code sends ``enabled`` with a
``budget_tokens``, or ``adaptive``) reaches the upstream: an OpenAI-compatible
one as ``reasoning_effort`` (a budget as a level, by LiteLLM's thresholds;
``disabled`` as ``none``), Ollama's own API as ``think``. It was dropped, so a
local reasoning model could not be told to think less or not at all. The
anthropic and openai SDKs are the clients, ``FakeServer`` the upstream."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest
from test_proxy import USER, _anthropic, _openai, proxy

from streamtools.testing.fake_server import Reply

NO_THINKING = json.dumps({"error": '"llama3.1:8b" does not support thinking'})


def _ask(url: str, **kw: Any) -> None:
    _anthropic(url).messages.create(model="c", max_tokens=40000, messages=USER, **kw)


def test_a_thinking_budget_is_a_reasoning_effort_upstream() -> None:
    asked: list[dict[str, Any]] = [
        {"thinking": {"type": "enabled", "budget_tokens": 1024}},
        {"thinking": {"type": "enabled", "budget_tokens": 2048}},
        {"thinking": {"type": "enabled", "budget_tokens": 31999}},  # Claude Code's default
        {"thinking": {"type": "adaptive"}},  # the model decides: no level to send
        {"thinking": {"type": "disabled"}},
        {},
        # output_config.effort says the level itself: it wins over a budget
        {"thinking": {"type": "enabled", "budget_tokens": 31999},
         "extra_body": {"output_config": {"effort": "low"}}},
        # thinking off is off, whatever effort the answer is given (Claude Code's
        # WebSearch sends both)
        {"thinking": {"type": "disabled"}, "extra_body": {"output_config": {"effort": "high"}}},
    ]
    with proxy(["Hi."] * len(asked)) as (url, upstream):
        for kw in asked:
            _ask(url, **kw)
        sent = [b.get("reasoning_effort") for b in upstream.requests]
        assert all("think" not in b for b in upstream.requests)
    assert sent == ["low", "medium", "high", None, "none", None, "low", "none"]


def test_ollama_is_told_to_think_or_not() -> None:
    with proxy(["Hi."] * 5, wire="ollama") as (url, upstream):
        _ask(url, thinking={"type": "enabled", "budget_tokens": 2048})
        _ask(url, thinking={"type": "adaptive"})
        _ask(url, thinking={"type": "disabled"})
        _ask(url)
        _openai(url).chat.completions.create(model="m", messages=USER, reasoning_effort="none")
        sent = [b.get("think") for b in upstream.requests]
        assert all("reasoning_effort" not in b for b in upstream.requests)
    assert sent == [True, True, False, None, False]


def _refusing(request: dict[str, Any]) -> Reply:
    if request.get("think"):
        return Reply(status=400, body=NO_THINKING, content_type="application/json")
    return Reply(text="Hello there.")


def test_a_model_that_cannot_think_is_asked_again_without_think() -> None:
    with proxy([_refusing] * 3, wire="ollama") as (url, upstream):
        for _ in range(2):
            message = _anthropic(url).messages.create(
                model="c", max_tokens=4096, messages=USER,
                thinking={"type": "enabled", "budget_tokens": 2048},
            )
            assert message.content[0].text == "Hello there."  # type: ignore[union-attr]
        sent = [b.get("think") for b in upstream.requests]
    assert sent == [True, None, None]  # refused once, then left out


@pytest.mark.parametrize("budget", ["2048", 0, True])
def test_a_budget_that_is_no_count_is_a_400(budget: Any) -> None:
    with proxy([]) as (url, upstream):
        with pytest.raises(anthropic.BadRequestError, match="thinking.budget_tokens must be"):
            _ask(url, thinking={"type": "enabled", "budget_tokens": budget})
        assert upstream.requests == []


def test_the_operators_upstream_body_wins_over_the_client() -> None:
    # ``--upstream-body '{"think": false}'``: the operator turned thinking off
    # for every request; a client's thinking does not turn it back on
    with proxy(["Hi."] * 2, wire="ollama", upstream_body={"think": False}) as (url, upstream):
        _ask(url, thinking={"type": "enabled", "budget_tokens": 2048})
        _openai(url).chat.completions.create(model="m", messages=USER, reasoning_effort="high")
        sent = [b.get("think") for b in upstream.requests]
    assert sent == [False, False]
    with proxy(["Hi."], upstream_body={"reasoning_effort": "none"}) as (url, upstream):
        _ask(url, thinking={"type": "enabled", "budget_tokens": 31999})
        assert upstream.requests[0]["reasoning_effort"] == "none"


OLLAMA_V1_NO_THINKING = json.dumps({"error": {
    "message": '"llama3.1:8b" does not support thinking', "type": "invalid_request_error",
    "param": None, "code": None}})


def _v1_refusing(request: dict[str, Any]) -> Reply:
    if "reasoning_effort" in request:
        return Reply(status=400, body=OLLAMA_V1_NO_THINKING, content_type="application/json")
    return Reply(text="Hello there.")


def test_ollamas_v1_refusing_thinking_is_a_refused_effort() -> None:
    # Ollama's /v1 refuses reasoning_effort for a model without thinking in
    # words that do not name the field (Gitlawb/openclaude#1371)
    with proxy([_v1_refusing] * 3) as (url, upstream):
        _ask(url, thinking={"type": "enabled", "budget_tokens": 31999})
        again = _openai(url).chat.completions.create(
            model="c", messages=USER, reasoning_effort="high")
        assert again.choices[0].message.content == "Hello there."
        sent = ["reasoning_effort" in b for b in upstream.requests]
    assert sent == [True, False, False]
