"""An upstream failure after a streamed answer has begun keeps its kind.

A 200 stream has no status left to tell a client what went wrong, so clients
(coding agents, the SDKs' users) read the error event's type to decide whether
a retry is worth it: an Anthropic ``overloaded_error`` or a rate limit is, a
plain ``api_error`` is not. The proxy wrote every such failure as ``api_error``
(``upstream_error`` for OpenAI's APIs), whatever the upstream had said."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

import anthropic
import anyio
import httpx
import openai
import pytest
from test_proxy import _anthropic, _openai, proxy

from streamtools.errors import ProviderError
from streamtools.model import Chunk, FinishChunk, ModelRequest, TextChunk
from streamtools.proxy import ProxyConfig, create_app
from streamtools.testing import ScriptedModel
from streamtools.testing.fake_server import Reply as FakeReply

USER: Any = [{"role": "user", "content": "hi"}]
REQUESTS: dict[str, tuple[str, dict[str, Any]]] = {
    "openai": ("/v1/chat/completions", {"model": "m", "messages": USER}),
    "anthropic": ("/v1/messages", {"model": "m", "messages": USER, "max_tokens": 50}),
    "responses": ("/v1/responses", {"model": "m", "input": "hi"}),
}
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}}
# a tool the model must call, on each wire (an answer without the call is re-prompted)
_REQUIRED: dict[str, dict[str, Any]] = {
    "openai": {
        "tools": [{"type": "function", "function": {"name": "w", "parameters": WEATHER}}],
        "tool_choice": "required",
    },
    "anthropic": {
        "tools": [{"name": "w", "input_schema": WEATHER}],
        "tool_choice": {"type": "any"},
    },
    "responses": {
        "tools": [{"type": "function", "name": "w", "parameters": WEATHER}],
        "tool_choice": "required",
    },
}


async def _error_event(wire: str, model: Any, **extra: Any) -> dict[str, Any]:
    """The error event of one streamed answer from ``model`` (through the app)."""
    app = create_app(ProxyConfig(ping_interval=0), model_factory=lambda name, key: model)
    path, body = REQUESTS[wire]
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as client:
        answer = await client.post(path, json={**body, **extra, "stream": True})
    assert answer.status_code == 200  # the stream had begun: the error is in it
    datas = [json.loads(line[6:]) for line in answer.text.split("\n") if line[:6] == "data: "]
    # OpenAI's chat chunks: {"error": {…}}; Anthropic's and the Responses API's
    # events: {"type": "error", …}
    errors = [d for d in datas if d.get("type", "error") == "error" and "choices" not in d]
    assert len(errors) == 1, datas
    error: dict[str, Any] = errors[0]
    return error


def _kind(wire: str, event: dict[str, Any]) -> str:
    """What a client of ``wire`` reads of an error event: the error's type, or
    a Responses event's ``code`` (the Responses API's own words)."""
    kind: str = event["code"] if wire == "responses" else event["error"]["type"]
    return kind


# the order of the expected kinds in the tests' tuples
WIRES = ("anthropic", "openai", "responses")


def _cut(message: str) -> ScriptedModel:
    """An upstream that streams some text, then fails in its stream."""
    return ScriptedModel([[TextChunk(text="Hello"), FinishChunk(reason="error", message=message)]])


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("overloaded_error: Overloaded", "overloaded_error"),
        ("rate_limit_error: slow down", "rate_limit_error"),
        ("api_error: Internal server error", "api_error"),
        ("the upstream stream ended without a finish", "api_error"),
    ],
)
async def test_an_anthropic_upstreams_error_type_reaches_an_anthropic_client(
    message: str, kind: str
) -> None:
    event = await _error_event("anthropic", _cut(message))
    assert event["type"] == "error" and event["error"]["type"] == kind
    assert message in event["error"]["message"]


@pytest.mark.anyio
@pytest.mark.parametrize("wire", ["openai", "responses"])
async def test_a_rate_limit_in_the_stream_is_a_rate_limit_for_openai_clients(wire: str) -> None:
    event = await _error_event(wire, _cut("rate_limit_error: slow down"))
    # the Responses API's code for it, which Codex retries after the wait it says
    expected = "rate_limit_exceeded" if wire == "responses" else "rate_limit_error"
    assert _kind(wire, event) == expected


class _RefusesTheRepair(ScriptedModel):
    """Answers without the required call, then refuses the re-prompt (``status``)."""

    def __init__(self, status: int) -> None:
        super().__init__(["No call."])
        self.status = status

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[Chunk]]:
        if self.requests:
            raise ProviderError(f"HTTP {self.status}", status=self.status, retry_after=1)
        async with super().stream(request) as chunks:
            yield chunks


@pytest.mark.anyio
@pytest.mark.parametrize("wire", ["openai", "anthropic", "responses"])
@pytest.mark.parametrize(
    ("status", "kinds"),
    [
        (429, ("rate_limit_error", "rate_limit_error", "rate_limit_exceeded")),
        (529, ("overloaded_error", "server_error", "server_error")),
        # retryable by its status alone: not a 400
        (408, ("api_error", "upstream_error", "server_error")),
        # not worth a retry: a key refused, credit used up, a request refused as it is
        (401, ("authentication_error", "authentication_error", "authentication_error")),
        (402, ("billing_error", "insufficient_quota", "insufficient_quota")),
        (400, ("invalid_request_error", "invalid_request_error", "invalid_request_error")),
    ],
)
async def test_a_refused_repair_after_the_stream_began_keeps_an_overloads_kind(
    wire: str, status: int, kinds: tuple[str, str, str]
) -> None:
    event = await _error_event(wire, _RefusesTheRepair(status), **_REQUIRED[wire])
    assert _kind(wire, event) == kinds[WIRES.index(wire)]


@pytest.mark.anyio
async def test_a_non_streamed_answer_that_failed_the_same_way_keeps_its_kind() -> None:
    """Not streamed, it is the answer's status: 529 ``overloaded_error``, which
    Anthropic's API answers for an overload and the SDK retries."""
    app = create_app(ProxyConfig(), model_factory=lambda name, key: _cut("overloaded_error: busy"))
    path, body = REQUESTS["anthropic"]
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as client:
        answer = await client.post(path, json=body)
    assert answer.status_code == 529
    assert answer.json()["error"]["type"] == "overloaded_error"


def test_an_overload_mid_stream_reaches_the_anthropic_sdk_as_one() -> None:
    """End to end: an Anthropic upstream's ``overloaded_error`` event, after
    some text, is what the SDK raises from the proxy's stream."""
    reply = FakeReply(text="Hello there, let me see.", error_after=3)
    with proxy([reply], wire="anthropic") as (url, _):
        with pytest.raises(anthropic.APIStatusError) as info:
            with _anthropic(url).messages.stream(model="c", max_tokens=50, messages=USER) as s:
                for _ in s:
                    pass
    assert info.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]


def test_a_rate_limit_chunk_from_an_openai_compatible_upstream_keeps_its_kind() -> None:
    """A gateway (LiteLLM) that hits a rate limit mid-answer writes an error
    chunk with the status as its ``code``; the client gets a rate limit too."""
    text = {"choices": [{"index": 0, "delta": {"content": "Hel"}, "finish_reason": None}]}
    error = {"error": {"message": "Rate limit reached for requests", "code": 429}}
    raw = b"".join(b"data: " + json.dumps(d).encode() + b"\n\n" for d in (text, error))
    reply = FakeReply(raw=raw, content_type="text/event-stream")
    with proxy([reply, reply]) as (url, _):
        with pytest.raises(anthropic.APIStatusError) as info:
            with _anthropic(url).messages.stream(model="c", max_tokens=50, messages=USER) as s:
                for _ in s:
                    pass
        with pytest.raises(openai.APIError) as raised:
            for _ in _openai(url).chat.completions.create(model="m", messages=USER, stream=True):
                pass
    assert info.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
    assert raised.value.type == "rate_limit_error"


class _Refuses(ScriptedModel):
    """Refuses every request with ``status``; given ``begun``, only once the
    proxy's response has begun (the keep-alive task sent its status line)."""

    def __init__(
        self, status: int, begun: anyio.Event | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__([])
        self.status, self.begun, self.retry_after = status, begun, retry_after

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[Chunk]]:
        if self.begun is not None:
            await self.begun.wait()
        raise ProviderError(f"HTTP {self.status}", status=self.status, retry_after=self.retry_after)
        yield  # pragma: no cover  (a generator, for asynccontextmanager)


async def _refused_after_the_ping(
    wire: str, status: int, retry_after: float | None = None
) -> dict[str, Any]:
    """The error event of a stream that began (the upstream slow to answer)
    before the upstream refused it with ``status``; the app is driven over raw
    ASGI, to know when its status line went out."""
    begun = anyio.Event()
    model = _Refuses(status, begun, retry_after)
    app = create_app(ProxyConfig(ping_interval=0.01), model_factory=lambda name, key: model)
    path, body = REQUESTS[wire]
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
        "root_path": "", "headers": [(b"content-type", b"application/json")],
        "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1),
    }
    request = [{"type": "http.request", "body": json.dumps({**body, "stream": True}).encode()}]
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if request:
            return request.pop()
        await anyio.sleep_forever()
        raise AssertionError  # pragma: no cover

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)
        if message["type"] == "http.response.start":
            begun.set()

    with anyio.fail_after(10):
        await app(scope, receive, send)
    assert sent[0]["status"] == 200  # begun: the refusal can only be in the stream
    text = b"".join(m.get("body", b"") for m in sent[1:]).decode()
    datas = [json.loads(line[6:]) for line in text.split("\n") if line[:6] == "data: "]
    errors = [d for d in datas if d.get("type", "error") == "error" and "choices" not in d]
    assert len(errors) == 1, datas
    error: dict[str, Any] = errors[0]
    return error


@pytest.mark.anyio
@pytest.mark.parametrize("wire", ["openai", "anthropic", "responses"])
@pytest.mark.parametrize(
    ("status", "kinds"),
    [
        # retried by their status, which is lost
        (408, ("api_error", "upstream_error", "server_error")),
        (409, ("api_error", "upstream_error", "server_error")),
        (429, ("rate_limit_error", "rate_limit_error", "rate_limit_exceeded")),
        # not worth a retry
        (401, ("authentication_error", "authentication_error", "authentication_error")),
        (504, ("timeout_error", "api_error", "server_error")),
        (402, ("billing_error", "insufficient_quota", "insufficient_quota")),
    ],
)
async def test_a_refusal_after_a_slow_upstream_began_the_stream_keeps_a_retry_kind(
    wire: str, status: int, kinds: tuple[str, str, str]
) -> None:
    """An upstream slow to answer gets the stream begun by the keep-alive; when
    it then refuses with a 408 or 409 (a timeout, a conflict: both retried by
    status), the error in the stream read ``invalid_request_error``, which
    clients never retry."""
    event = await _refused_after_the_ping(wire, status)
    assert _kind(wire, event) == kinds[WIRES.index(wire)]
    assert f"HTTP {status}" in (event if wire == "responses" else event["error"])["message"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("status", "anthropic_type", "openai_type"),
    [
        (402, "billing_error", "insufficient_quota"),
        (504, "timeout_error", "api_error"),
        (408, "invalid_request_error", "invalid_request_error"),  # the status says retry
    ],
)
async def test_a_refusal_before_the_stream_has_the_types_the_apis_give_its_status(
    status: int, anthropic_type: str, openai_type: str
) -> None:
    """Anthropic's API answers a 402 with ``billing_error`` and a 504 with
    ``timeout_error``; both were ``invalid_request_error`` / ``api_error``."""
    model = _Refuses(status)
    app = create_app(ProxyConfig(ping_interval=0), model_factory=lambda name, key: model)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as client:
        for wire, kind in (("anthropic", anthropic_type), ("openai", openai_type)):
            path, body = REQUESTS[wire]
            for stream in (False, True):
                answer = await client.post(path, json={**body, "stream": stream})
                assert answer.status_code == status
                assert answer.json()["error"]["type"] == kind


# Codex's pattern for the wait a rate limit's message states
_WAIT = re.compile(r"(?i)try again in\s*(\d+(?:\.\d+)?)\s*(s|ms|seconds?)")


@pytest.mark.anyio
@pytest.mark.parametrize("wire", ["openai", "anthropic", "responses"])
async def test_a_refusal_in_a_begun_stream_says_the_wait_the_upstream_asked_for(
    wire: str,
) -> None:
    """A stream has no ``retry-after`` header left to carry the upstream's wait:
    it is said in the message, as OpenAI's API says it, which Codex reads."""
    slow = await _refused_after_the_ping(wire, 429, retry_after=2.5)
    repair = await _error_event(wire, _RefusesTheRepair(429), **_REQUIRED[wire])  # waits 1 s
    waits = []
    for event in (slow, repair):
        message = (event if wire == "responses" else event["error"])["message"]
        wait = _WAIT.search(message)
        assert wait is not None, message
        waits.append(wait.group(1))
    assert waits == ["2.5", "1"]
