"""An upstream's context-window overflow reaches each client as its API says one.

OpenAI's chat and Responses clients (Codex, the Agents SDK, LiteLLM's users)
act on ``code: "context_length_exceeded"``; Anthropic clients (Claude Code) on
an ``invalid_request_error`` whose message begins "prompt is too long", with
the counts when known. The proxy passed the upstream's refusal on as it was: a
400 with no code, an ``api_error`` in a stream, and llama.cpp's older 500
(which every SDK retries)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

import anthropic
import anyio
import httpx
import openai
import pytest
from test_proxy import USER, _anthropic, _openai, proxy
from test_proxy_stream_errors import _REQUIRED, REQUESTS, _error_event

from streamtools.errors import ProviderError
from streamtools.model import Chunk, FinishChunk, ModelRequest, TextChunk
from streamtools.proxy import ProxyConfig, create_app
from streamtools.proxy.overflow import Overflow, find_overflow, overflow_message
from streamtools.testing import ScriptedModel
from streamtools.testing.fake_server import Reply

VLLM = (
    "This model's maximum context length is 32768 tokens. However, your request has "
    "40000 input tokens. Please reduce the length of the input messages."
)
VLLM_BODY = json.dumps({"object": "error", "message": VLLM, "type": "BadRequestError",
                        "param": None, "code": 400})
# llama-server before it answered an overflow with 400
LLAMA_BODY = json.dumps({"error": {
    "code": 500, "type": "exceed_context_size_error", "n_prompt_tokens": 14429, "n_ctx": 8192,
    "message": "the request exceeds the available context size, try increasing it",
}})


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("prompt is too long: 216327 tokens > 200000 maximum", Overflow(216327, None, 200000)),
        (
            "input length and `max_tokens` exceed context limit: 143291 + 64000 > 200000, "
            "decrease input length or `max_tokens` and try again",
            Overflow(143291, 64000, 200000),
        ),
        (VLLM, Overflow(40000, None, 32768)),
        (
            "'max_tokens' or 'max_completion_tokens' is too large: 1000. This model's maximum "
            "context length is 4096 tokens and your request has 3500 input tokens "
            "(1000 > 4096 - 3500).",
            Overflow(3500, 1000, 4096),
        ),
        (
            "This model's maximum context length is 4097 tokens. However, you requested 4162 "
            "tokens (3162 in the messages, 1000 in the completion). Please reduce the length "
            "of the messages or completion.",
            Overflow(3162, 1000, 4097),
        ),
        (
            "This endpoint's maximum context length is 131072 tokens. However, you requested "
            "about 140000 tokens (139000 of text input, 1000 in the output).",
            Overflow(139000, 1000, 131072),
        ),
        (
            "This model's maximum context length is 32768 tokens. However, you requested 32000 "
            "output tokens and your prompt contains at least 5001 input tokens, for a total of "
            "at least 37001 tokens. Please reduce the length of the input prompt or the number "
            "of requested output tokens. (parameter=input_tokens, value=5001)",
            Overflow(5001, 32000, 32768),
        ),
        (
            "This model's maximum context length is 40960 tokens. However, you requested 0 "
            "output tokens and your prompt contains at least 40961 input tokens",
            Overflow(40961, 0, 40960),
        ),
        ("Requested tokens (2285) exceed context window of 2048", Overflow(2285, None, 2048)),
        (
            "The decoder prompt (length 40000) is longer than the maximum model length of 32768. "
            "Make sure that `max_model_len` is no smaller than the number of text tokens.",
            Overflow(40000, None, 32768),
        ),
        (
            "The prompt (total length 40000) is too long to fit into the model (context length "
            "32768). Make sure that `max_model_len` is no smaller than the number of text tokens "
            "plus multimodal tokens.",
            Overflow(40000, None, 32768),
        ),
        ("the input exceeds maximum context length", Overflow()),
        (
            "The input (40000 tokens) is longer than the model's context length (32768 tokens).",
            Overflow(40000, None, 32768),
        ),
        (
            "Your input exceeds the context window of this model. Please adjust your input "
            "and try again. (code context_length_exceeded)",
            Overflow(),
        ),
        ("litellm.ContextWindowExceededError: too long", Overflow()),
        # not overflows
        ("Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000", None),
        ("max_tokens: 17000 > 8192, which is the maximum allowed number of output tokens", None),
        ("Invalid API key", None),
    ],
)
def test_the_servers_words_for_an_overflow_are_read(text: str, found: Overflow | None) -> None:
    assert find_overflow(text) == found


def test_a_body_says_what_its_message_does_not() -> None:
    assert find_overflow("HTTP 500", LLAMA_BODY) == Overflow(14429, None, 8192)
    coded = json.dumps({"error": {"message": "too long", "code": "context_length_exceeded"}})
    assert find_overflow("too long", coded) == Overflow()
    # a rate limit's status is never an overflow, whatever its words
    assert overflow_message("prompt is too long", None, 429) is None


def _openai_refusal(url: str, api: str, stream: bool) -> openai.APIStatusError:
    client = _openai(url)
    with pytest.raises(openai.APIStatusError) as info:
        if api == "responses":
            for _ in client.responses.create(model="m", input="hi", stream=stream):
                pass
        else:
            answer: Any = client.chat.completions.create(model="m", messages=USER, stream=stream)
            for _ in answer if stream else []:
                pass
    return info.value


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("body", "status", "head"),
    [
        (VLLM_BODY, 400, "prompt is too long: 40000 tokens > 32768 maximum"),
        (LLAMA_BODY, 500, "prompt is too long: 14429 tokens > 8192 maximum"),
    ],
)
def test_an_upstream_overflow_is_one_for_every_client(
    body: str, status: int, head: str, stream: bool
) -> None:
    refusal = Reply(status=status, body=body)
    with proxy([refusal] * 3) as (url, upstream):
        errors = [_openai_refusal(url, api, stream) for api in ("chat", "responses")]
        with pytest.raises(anthropic.APIStatusError) as info:
            if stream:
                with _anthropic(url).messages.stream(
                    model="c", max_tokens=50, messages=USER
                ) as events:
                    for _ in events:
                        pass
            else:
                _anthropic(url).messages.create(model="c", max_tokens=50, messages=USER)
        assert len(upstream.received) == 3  # a 400: no retry, by the proxy or the SDKs
    for error in errors:
        assert isinstance(error, openai.BadRequestError)
        assert error.code == "context_length_exceeded"
        assert error.type == "invalid_request_error"
        said: Any = error.body
        assert said["message"].startswith(head)
    refused = info.value
    assert isinstance(refused, anthropic.BadRequestError)
    sent: Any = refused.body
    assert sent["error"]["type"] == "invalid_request_error"
    assert sent["error"]["message"].startswith(head)
    assert "the request exceeds" in sent["error"]["message"] or "32768" in sent["error"]["message"]


@pytest.mark.parametrize(
    "said",
    [
        "'max_tokens' or 'max_completion_tokens' is too large: 1000. This model's maximum "
        "context length is 4096 tokens and your request has 3500 input tokens "
        "(1000 > 4096 - 3500).",
        "This model's maximum context length is 4096 tokens. However, you requested 1000 "
        "output tokens and your prompt contains at least 3500 input tokens, for a total of at "
        "least 4500 tokens. Please reduce the length of the input prompt or the number of "
        "requested output tokens. (parameter=input_tokens, value=3500)",
    ],
)
def test_an_overflow_of_the_answers_room_says_so_to_an_anthropic_client(said: str) -> None:
    """Claude Code reads this one to lower ``max_tokens``, not to compact (its
    32000 is more than a local model's window leaves)."""
    with proxy([Reply(status=400, body=json.dumps({"message": said}))]) as (url, _):
        with pytest.raises(anthropic.BadRequestError) as info:
            _anthropic(url).messages.create(model="c", max_tokens=1000, messages=USER)
    message: Any = info.value.body
    assert message["error"]["message"].startswith(
        "input length and `max_tokens` exceed context limit: 3500 + 1000 > 4096"
    )


def test_another_bad_request_keeps_no_code() -> None:
    with proxy([Reply(status=400, body='{"error": {"message": "bad temperature"}}')]) as (url, _):
        error = _openai_refusal(url, "chat", False)
    assert isinstance(error, openai.BadRequestError) and error.code is None


def _cut(message: str) -> ScriptedModel:
    return ScriptedModel([[TextChunk(text="Hello"), FinishChunk(reason="error", message=message)]])


_IN_STREAM = f"{VLLM} (code context_length_exceeded)"  # as the provider writes an error chunk
_SAID = {"openai": ("error", "code"), "responses": (None, "code"), "anthropic": ("error", "type")}
_EXPECTED = {
    "openai": "context_length_exceeded",
    "responses": "context_length_exceeded",
    "anthropic": "invalid_request_error",
}


def _read(wire: str, event: dict[str, Any]) -> tuple[str, str]:
    """What a client of ``wire`` reads of an error event: its code (or type) and message."""
    inner = event if wire == "responses" else event["error"]
    key = _SAID[wire][1]
    return inner[key], inner["message"]


@pytest.mark.anyio
@pytest.mark.parametrize("wire", ["openai", "anthropic", "responses"])
async def test_an_overflow_inside_the_upstreams_stream_is_one(wire: str) -> None:
    event = await _error_event(wire, _cut(_IN_STREAM))
    code, message = _read(wire, event)
    assert code == _EXPECTED[wire]
    assert message.startswith("prompt is too long: 40000 tokens > 32768 maximum")


class _RepairTooLong(ScriptedModel):
    """Answers without the required call; the re-prompt, one message longer, overflows."""

    def __init__(self) -> None:
        super().__init__(["No call."])

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[Chunk]]:
        if self.requests:
            raise ProviderError(f"HTTP 400: {VLLM}", status=400, body=VLLM_BODY)
        async with super().stream(request) as chunks:
            yield chunks


@pytest.mark.anyio
@pytest.mark.parametrize("wire", ["openai", "anthropic", "responses"])
async def test_a_re_prompt_that_overflows_after_the_stream_began_is_one(wire: str) -> None:
    event = await _error_event(wire, _RepairTooLong(), **_REQUIRED[wire])
    code, message = _read(wire, event)
    assert code == _EXPECTED[wire]
    assert message.startswith("prompt is too long: 40000 tokens > 32768 maximum")


@pytest.mark.anyio
async def test_a_non_streamed_overflow_in_the_stream_is_a_400() -> None:
    app = create_app(ProxyConfig(), model_factory=lambda name, key: _cut(_IN_STREAM))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as client:
        path, body = REQUESTS["openai"]
        answer = await client.post(path, json=body)
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "context_length_exceeded"


class _SlowThenTooLong(ScriptedModel):
    """Refuses with an overflow, once the proxy's response has begun (``begun``)."""

    def __init__(self, begun: anyio.Event) -> None:
        super().__init__([])
        self.begun = begun

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[Chunk]]:
        await self.begun.wait()
        raise ProviderError("HTTP 500", status=500, body=LLAMA_BODY)
        yield  # pragma: no cover  (a generator, for asynccontextmanager)


@pytest.mark.anyio
@pytest.mark.parametrize("wire", ["openai", "anthropic", "responses"])
async def test_an_overflow_after_a_slow_upstream_began_the_stream_is_one(wire: str) -> None:
    """The keep-alive began the stream; llama.cpp's 500 then said the prompt was
    too long: in the stream, as an overflow (not a 500's ``api_error``)."""
    begun = anyio.Event()
    model = _SlowThenTooLong(begun)
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
    assert sent[0]["status"] == 200
    text = b"".join(m.get("body", b"") for m in sent[1:]).decode()
    datas = [json.loads(line[6:]) for line in text.split("\n") if line[:6] == "data: "]
    errors = [d for d in datas if d.get("type", "error") == "error" and "choices" not in d]
    assert len(errors) == 1, datas
    code, message = _read(wire, errors[0])
    assert code == _EXPECTED[wire]
    assert message.startswith("prompt is too long: 14429 tokens > 8192 maximum")
