"""What coding agents send in 2025-2026, through the official SDKs.

Codex, Claude Code, opencode, Zed and the Agents SDK send fields that several
OpenAI- and Anthropic-compatible servers and proxies refused (LiteLLM,
claude-code-router, vLLM's and llama.cpp's servers): each request here carries
them all and must come back with the model's call, as it would without them.
"""

from __future__ import annotations

from typing import Any

import anthropic
import httpx
import openai
import pytest
from test_proxy import A_WEATHER, PARIS, WEATHER, _anthropic, _openai, proxy

RESPONSES_WEATHER: Any = {"type": "function", "name": "weather",
                          "parameters": WEATHER["function"]["parameters"]}


def test_a_responses_request_without_a_model_gets_the_configured_one() -> None:
    """Codex App leaves ``model`` out of some Responses requests to a custom
    provider (openai/codex#41095); with ``--model`` set the proxy knows which
    model to ask, and refused them."""
    with proxy([PARIS, PARIS]) as (url, upstream_plain):
        with pytest.raises(openai.BadRequestError, match="'model' is required"):
            _openai(url).responses.create(input="Weather in Paris?", tools=[RESPONSES_WEATHER])
        assert upstream_plain.requests == []
    with proxy([PARIS, PARIS], model="qwen3-coder") as (url, upstream):
        client = _openai(url)
        whole = client.responses.create(input="Weather in Paris?", tools=[RESPONSES_WEATHER])
        events = list(client.responses.create(
            input="Weather in Paris?", tools=[RESPONSES_WEATHER], stream=True))
        models = [r["model"] for r in upstream.requests]
    done = [e.response for e in events if e.type == "response.completed"]
    for response in (whole, *done):
        (call,) = [o.model_dump() for o in response.output if o.type == "function_call"]
        assert call["name"] == "weather" and call["arguments"] == '{"city": "Paris"}'
    assert len(done) == 1 and models == ["qwen3-coder", "qwen3-coder"]


CHAT_FIELDS: Any = {
    "parallel_tool_calls": False, "reasoning_effort": "high", "prompt_cache_key": "session-1",
    "safety_identifier": "user-1", "verbosity": "low", "store": False,
    "prediction": {"type": "content", "content": "Checking."}, "metadata": {"app": "zed"},
    "service_tier": "auto", "user": "u1", "max_completion_tokens": 200,
    "stream_options": {"include_usage": True, "include_obfuscation": False},
    "response_format": {"type": "json_schema", "json_schema": {
        "name": "answer", "schema": {"type": "object"}, "strict": True}},
}


def test_chat_fields_of_coding_agents_are_accepted() -> None:
    with proxy([PARIS]) as (url, upstream):
        stream = _openai(url).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "Weather in Paris?"}],
            tools=[WEATHER], stream=True, **CHAT_FIELDS)
        chunks = list(stream)
        sent = upstream.requests[0]
    names = [c.function.name for ch in chunks if ch.choices
             for c in ch.choices[0].delta.tool_calls or [] if c.function and c.function.name]
    assert names == ["weather"]
    assert [ch.choices[0].finish_reason for ch in chunks if ch.choices][-1] == "tool_calls"
    assert chunks[-1].usage is not None  # include_usage
    # none of them reaches the upstream, which may refuse what it does not know
    # (its stream_options are the proxy's own), but the effort and the cache key,
    # which OpenAI-compatible servers read, left out if refused (s19_forwarded_effort)
    assert set(CHAT_FIELDS) & set(sent) == {"stream_options", "reasoning_effort",
                                            "prompt_cache_key"}
    assert (sent["reasoning_effort"], sent["prompt_cache_key"]) == ("high", "session-1")
    assert sent["stream_options"] == {"include_usage": True}
    # the schema is said to the model, since calls are text no schema lets through
    assert "JSON Schema" in sent["messages"][-1]["content"]


RESPONSES_FIELDS: Any = {
    "reasoning": {"effort": "high", "summary": "auto"}, "include": ["reasoning.encrypted_content"],
    "store": False, "prompt_cache_key": "session-1", "text": {"verbosity": "low"},
    "parallel_tool_calls": False, "service_tier": "auto", "truncation": "auto",
    "safety_identifier": "user-1", "metadata": {"app": "codex"}, "max_tool_calls": 4,
    "prompt_cache_retention": "24h",
}


def test_responses_fields_of_codex_are_accepted() -> None:
    with proxy([PARIS]) as (url, upstream):
        with _openai(url).responses.stream(
            model="m", instructions="You are Codex.", input="Weather in Paris?",
            tools=[RESPONSES_WEATHER, {"type": "web_search"}], **RESPONSES_FIELDS,
        ) as s:
            response = s.get_final_response()
        sent = upstream.requests[0]
    (call,) = [o.model_dump() for o in response.output if o.type == "function_call"]
    assert call["name"] == "weather" and response.status == "completed"
    assert set(RESPONSES_FIELDS) & set(sent) == {"prompt_cache_key"}
    assert sent["reasoning_effort"] == "high"  # reasoning.effort, by the chat name


@pytest.mark.parametrize("thinking", [{"type": "enabled", "budget_tokens": 1024},
                                      {"type": "adaptive"}, {"type": "disabled"}])
def test_anthropic_fields_of_claude_code_are_accepted(thinking: Any) -> None:
    cached: Any = {"type": "ephemeral", "ttl": "1h"}
    tool: Any = {**A_WEATHER, "cache_control": cached}
    with proxy([f"Checking. {PARIS}"]) as (url, upstream):
        client = _anthropic(url)
        with client.messages.stream(
            model="claude-opus-4-8", max_tokens=2048,
            system=[{"type": "text", "text": "You are Claude Code.", "cache_control": cached}],
            tools=[tool],
            messages=[{"role": "user", "content": [
                {"type": "text", "text": "Weather in Paris?", "cache_control": cached}]}],
            tool_choice={"type": "auto", "disable_parallel_tool_use": True},
            metadata={"user_id": "user_1_account_2_session_3"},
            service_tier="auto", thinking=thinking,
            extra_body={"context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]},
                        "output_config": {"effort": "high"}},
        ) as s:
            message = s.get_final_message()
        sent = upstream.requests[0]
    assert message.stop_reason == "tool_use"
    (use,) = [b for b in message.content if isinstance(b, anthropic.types.ToolUseBlock)]
    assert use.input == {"city": "Paris"}
    assert "You are Claude Code." in sent["messages"][0]["content"]


def test_anthropic_tool_choice_none_answers_in_text() -> None:
    with proxy([PARIS, "Sunny."]) as (url, upstream):
        message = _anthropic(url).messages.create(
            model="c", max_tokens=100, tools=[A_WEATHER], tool_choice={"type": "none"},
            messages=[{"role": "user", "content": "Weather in Paris?"}])
    assert message.stop_reason == "end_turn"
    assert [b.type for b in message.content] == ["text"]
    assert message.content[0].text == "Sunny."  # type: ignore[union-attr]


def test_claude_codes_tool_search_works_with_every_tool_shown() -> None:
    """Claude Code with ``ENABLE_TOOL_SEARCH`` sends a tool search tool (a
    server tool, which the proxy refused with a 400, so no request of the
    session got through) and its MCP tools with ``defer_loading``; its own
    search answers with ``tool_reference`` blocks, read as a placeholder for
    media. The search tool is left out and every tool is shown to the model
    (it needs no search), and a reference reads as the tool it names."""
    search: Any = {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}
    deferred: Any = {**A_WEATHER, "defer_loading": True}
    history: Any = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
                                           "name": "ToolSearch", "input": {"query": "weather"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [
            {"type": "tool_reference", "tool_name": "weather"}]}]},
    ]
    finder: Any = {"name": "ToolSearch", "input_schema": {
        "type": "object", "properties": {"query": {"type": "string"}}}}
    with proxy([PARIS]) as (url, upstream):
        message = _anthropic(url).messages.create(
            model="c", max_tokens=200, tools=[search, finder, deferred], messages=history)
        sent = upstream.requests[0]["messages"]
    (use,) = [b for b in message.content if isinstance(b, anthropic.types.ToolUseBlock)]
    assert use.name == "weather" and use.input == {"city": "Paris"}
    assert '<am:tool name="weather"' in sent[0]["content"]
    assert "tool_search_tool_regex" not in sent[0]["content"]
    assert "`weather`" in sent[-1]["content"] and "omitted" not in sent[-1]["content"]


def test_claude_codes_advisor_tool_is_left_out_and_its_advice_read() -> None:
    """Claude Code with an advisor model set (``/advisor``) declares Anthropic's
    advisor server tool in every request; the proxy refused it with a 400, so
    every request of such a session failed. The upstream cannot consult an
    advisor: the tool is left out, and advice a session got from Anthropic's
    API earlier (an ``advisor_tool_result`` block, refused with a 400 too)
    reaches the model as a note."""
    advisor: Any = {"type": "advisor_20260301", "name": "advisor", "model": "claude-opus-4-8"}
    history: Any = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "advisor", "input": {}},
            {"type": "advisor_tool_result", "tool_use_id": "srvtoolu_1",
             "content": {"type": "advisor_result", "text": "Ask the weather tool."}},
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Oslo"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "9C"}]},
    ]
    with proxy([PARIS]) as (url, upstream):
        message = _anthropic(url).messages.create(
            model="c", max_tokens=200, tools=[advisor, A_WEATHER], messages=history)
        sent = upstream.requests[0]["messages"]
    assert message.stop_reason == "tool_use"
    assert "advisor" not in sent[0]["content"]
    assert "Ask the weather tool." in sent[2]["content"]  # in the assistant's turn


def test_a_token_count_without_a_model_gets_the_configured_one_too() -> None:
    """Both count endpoints, like the requests they count: with ``--model`` a
    count may leave ``model`` out (the Anthropic one was a 400)."""
    with proxy([], model="qwen3-coder") as (url, _):
        anthropic_count = httpx.post(
            f"{url}/v1/messages/count_tokens", headers={"anthropic-version": "2023-06-01"},
            json={"messages": [{"role": "user", "content": "Weather in Paris?"}]}, timeout=20)
        responses_count = _openai(url).responses.input_tokens.count(input="Weather in Paris?")
    assert anthropic_count.status_code == 200
    assert anthropic_count.json()["input_tokens"] > 0
    assert responses_count.input_tokens > 0
