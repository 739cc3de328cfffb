"""The proxy makes a provider per request, so what a provider learned of its
upstream (a 400 refusing ``stop``, ``max_tokens``: ``providers.refused_fields``)
died with the request, and every proxied request to such an upstream paid a
refusal and a second request. The app now keeps it per upstream
(``proxy.learned``): the first request pays one refusal, the later ones none."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from test_proxy import _openai, proxy

from streamtools.providers import OpenAIChat
from streamtools.proxy.learned import Refusals
from streamtools.testing.fake_server import Reply

STOP_REFUSED = json.dumps({"error": {
    "message": "Unsupported parameter: 'stop' is not supported with this model.",
    "type": "invalid_request_error", "param": "stop", "code": "unsupported_parameter"}})
MAX_REFUSED = json.dumps({"error": {
    "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
    "Use 'max_completion_tokens' instead.",
    "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}})
CITY = {"type": "object", "properties": {"city": {"type": "string"}}}
TOOLS: Any = [{"type": "function", "function": {"name": "weather", "parameters": CITY}}]
USER: Any = [{"role": "user", "content": "Hi"}]


def _refusing(request: dict[str, Any]) -> Reply:
    if "stop" in request:
        return Reply(status=400, body=STOP_REFUSED, content_type="application/json")
    if "max_tokens" in request:
        return Reply(status=400, body=MAX_REFUSED, content_type="application/json")
    return Reply(text="Hello there.")


def _ask(url: str, model: str, stream: bool) -> str:
    client = _openai(url)
    kw: Any = {"model": model, "messages": USER, "tools": TOOLS, "max_tokens": 50,
               "parallel_tool_calls": False}  # one call per reply: the dialect's stop goes up
    if not stream:
        return client.chat.completions.create(**kw).choices[0].message.content or ""
    return "".join(
        c.choices[0].delta.content or ""
        for c in client.chat.completions.create(stream=True, **kw) if c.choices
    )


def test_a_refused_field_is_paid_once_per_upstream() -> None:
    with proxy([_refusing] * 12) as (url, upstream):
        assert _ask(url, "o3", True) == "Hello there."
        first = [("stop" in b, "max_tokens" in b) for b in upstream.requests]
        assert first == [(True, True), (False, True), (False, False)]  # two refusals learned
        for stream in (False, True, False):
            assert _ask(url, "o3", stream) == "Hello there."
        later = upstream.requests[3:]
        assert len(later) == 3  # one request each, no refusal
        assert all("stop" not in b and b["max_completion_tokens"] == 50 for b in later)
        # another model of the same upstream has its own: it pays its own refusals
        assert _ask(url, "gpt-4.1", False) == "Hello there."
        assert len(upstream.requests) == 9
        assert [b["model"] for b in upstream.requests[6:]] == ["gpt-4.1"] * 3


def _made(refusals: Refusals, name: str) -> tuple[Any, OpenAIChat]:
    """A request's provider as the app makes it: (the wrapper, the provider)."""
    made = refusals.applied(OpenAIChat(name, base_url="http://127.0.0.1:9/v1"))
    assert isinstance(made.inner, OpenAIChat)
    return made, made.inner


def test_the_memory_is_bounded_and_only_narrows() -> None:
    refusals = Refusals(limit=2)
    for name in ("a", "b", "c"):
        made, provider = _made(refusals, name)
        provider.supports_stop = False
        refusals.learn(made)
    assert len(refusals) == 2
    _, fresh = _made(refusals, "a")
    assert fresh.supports_stop  # "a", the oldest, was dropped
    taught, provider = _made(refusals, "c")
    provider.stream_usage = False  # a later request learned another field of "c"
    refusals.learn(taught)
    _, again = _made(refusals, "c")
    assert (again.supports_stop, again.stream_usage) == (False, False)
    # one that refused nothing takes no room, nor one that learned only what it was told
    refusals.learn(_made(refusals, "d")[0])
    refusals.learn(_made(refusals, "c")[0])
    assert len(refusals) == 2
    _, kept = _made(refusals, "b")
    assert not kept.supports_stop


def test_requests_at_once_share_what_was_learned() -> None:
    with proxy([_refusing] * 24) as (url, upstream):
        assert _ask(url, "o3", False) == "Hello there."
        assert len(upstream.requests) == 3  # two refusals, learned
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda s: _ask(url, "o3", s), [True, False] * 2))
        assert answers == ["Hello there."] * 4
        assert len(upstream.requests) == 7  # one each
