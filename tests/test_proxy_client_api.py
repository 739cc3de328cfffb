"""The proxy's answers where the client's API shows in its headers and body rather
than in the path: unknown paths, a single model, compressed bodies, the legacy
``functions`` parameters and past calls whose arguments are not JSON. The official
``openai`` and ``anthropic`` SDKs are the clients, ``FakeServer`` the upstream."""

from __future__ import annotations

import gzip
import json
import re
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from test_proxy import (
    A_WEATHER,
    PARIS,
    USER,
    WEATHER,
    _anthropic,
    _openai,
    _stream,
    proxy,
    serve,
)

from streamtools.errors import UsageError
from streamtools.model import Chunk, ModelRequest
from streamtools.proxy import ProxyConfig, create_app
from streamtools.proxy.body import _decompressed
from streamtools.proxy.request import RequestError
from streamtools.proxy.tokens import TokenCounter


def test_an_unknown_path_is_answered_in_the_clients_format() -> None:
    # the anthropic SDK sends anthropic-version with every request: its client
    # got OpenAI's error shape for a path outside /v1/messages
    with proxy([]) as (url, _):
        with pytest.raises(anthropic.NotFoundError) as info:
            _anthropic(url).beta.files.list()
        assert isinstance(info.value.body, dict)
        assert info.value.body["type"] == "error"
        assert info.value.body["error"]["type"] == "not_found_error"
        with pytest.raises(openai.NotFoundError) as found:
            _openai(url).files.list()
        assert found.value.code is None and found.value.type == "not_found_error"


def _model_upstreams() -> Starlette:
    """An upstream that knows one model, ``org/plain-7b``, in OpenAI's format
    under ``/models`` and in Anthropic's under ``/v1/models``."""

    async def openai_model(request: Request) -> JSONResponse:
        if request.path_params["model_id"] != "org/plain-7b":
            error = {"error": {"message": "no such model", "type": "invalid_request_error"}}
            return JSONResponse(error, status_code=404)
        owner = request.headers.get("authorization", "")
        return JSONResponse(
            {"id": "org/plain-7b", "object": "model", "created": 1700000000, "owned_by": owner}
        )

    async def anthropic_model(request: Request) -> JSONResponse:
        if request.path_params["model_id"] != "org/plain-7b":
            error = {"type": "error", "error": {"type": "not_found_error", "message": "no"}}
            return JSONResponse(error, status_code=404)
        assert request.headers["x-api-key"] in ("sk-client", "sk-ant-client")
        return JSONResponse({"type": "model", "id": "org/plain-7b", "display_name": "Plain",
                             "created_at": "2025-02-19T00:00:00Z"})

    return Starlette(routes=[
        Route("/models/{model_id:path}", openai_model),
        Route("/v1/models/{model_id:path}", anthropic_model),
    ])


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_one_model_is_retrieved_in_the_clients_format(kind: str) -> None:
    # the SDKs' models.retrieve(id) was a 404: GET /v1/models/{id} was not routed
    with serve(_model_upstreams()) as upstream_url:
        cfg = ProxyConfig(upstream=upstream_url, upstream_kind=kind)  # type: ignore[arg-type]
        with serve(create_app(cfg)) as url:
            model = _openai(url).models.retrieve("org/plain-7b")
            info = _anthropic(url).models.retrieve("org/plain-7b")
            with pytest.raises(openai.NotFoundError):
                _openai(url).models.retrieve("gone")
            with pytest.raises(anthropic.NotFoundError) as missing:
                _anthropic(url).models.retrieve("gone")
    assert model.id == "org/plain-7b" and model.object == "model"
    if kind == "openai":  # passed through, the client's key forwarded
        assert (model.created, model.owned_by) == (1700000000, "Bearer sk-client")
        assert info.type == "model" and info.created_at.timestamp() == 1700000000
    else:
        assert model.created == 1739923200 and info.display_name == "Plain"
    assert info.id == "org/plain-7b"
    assert isinstance(missing.value.body, dict) and missing.value.body["type"] == "error"


@contextmanager
def _compressing(url: str, coding: str, compress: Callable[[bytes], bytes]) -> Iterator[Any]:
    """An SDK client whose request bodies go compressed with ``coding``: the
    anthropic SDK for zstd (the pi coding agent's), else the openai SDK. (The
    anthropic SDK is on httpx2, a fork with httpx's API.)"""
    lib: Any = httpx2 if coding == "zstd" else httpx
    inner = lib.HTTPTransport()

    def send(request: Any) -> Any:
        headers = {k: v for k, v in request.headers.items() if k != "content-length"}
        headers["content-encoding"] = coding
        body = compress(request.read())
        return inner.handle_request(
            lib.Request(request.method, request.url, headers=headers, content=body)
        )

    client = lib.Client(transport=lib.MockTransport(send), timeout=20)
    sdk: Any
    if coding == "zstd":
        sdk = anthropic.Anthropic(base_url=url, api_key="k", max_retries=0, http_client=client)
    else:
        sdk = openai.OpenAI(base_url=f"{url}/v1", api_key="k", max_retries=0, http_client=client)
    try:
        yield sdk
    finally:
        sdk.close()
        inner.close()


def _deflate(data: bytes) -> bytes:
    return zlib.compress(data)


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize(
    ("coding", "compress"),
    [("gzip", gzip.compress), ("deflate", _deflate), ("deflate", _raw_deflate)],
)
def test_a_compressed_body_is_decompressed(coding: str, compress: Any) -> None:
    # a gzip body was read as JSON: a 400 "not valid JSON/UTF-8" the client could not explain
    with proxy(["Sunny."]) as (url, upstream):
        with _compressing(url, coding, compress) as client:
            reply = client.chat.completions.create(model="m", messages=USER)
    assert reply.choices[0].message.content == "Sunny."
    assert upstream.requests[0]["messages"][-1]["content"] == USER[0]["content"]


def test_the_body_limit_holds_for_the_decompressed_size() -> None:
    padding = " " * 4_000_000  # JSON whitespace: 4 MB that gzip makes about 4 kB
    bomb = gzip.compress(json.dumps({"model": "m", "messages": USER}).encode()[:-1]
                         + padding.encode() + b"}")
    assert len(bomb) < 100_000
    with proxy([], max_body=100_000) as (url, upstream):
        with _compressing(url, "gzip", lambda _: bomb) as client:
            with pytest.raises(openai.APIStatusError) as info:
                client.chat.completions.create(model="m", messages=USER)
        assert upstream.requests == []
    assert info.value.status_code == 413 and "100000 bytes" in info.value.message
    # no more than the limit is ever decompressed: 200 MB of zeros in under 1 MB
    huge = gzip.compress(b"\0" * 200_000_000, compresslevel=1)
    tracemalloc.start()
    try:
        with pytest.raises(RequestError) as refused:
            _decompressed(huge, "gzip", 1_000_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert refused.value.status == 413 and peak < 3 * len(huge) + 2_000_000


def test_an_encoding_the_proxy_cannot_decode_is_a_415_in_the_clients_format() -> None:
    with proxy([]) as (url, upstream):
        with _compressing(url, "zstd", lambda data: b"(\xb5/\xfd" + data) as client:
            with pytest.raises(anthropic.APIStatusError) as info:
                client.messages.create(model="c", max_tokens=10, messages=USER)
        with _compressing(url, "gzip", lambda data: gzip.compress(data)[:-9]) as broken:
            with pytest.raises(openai.BadRequestError) as cut:
                broken.chat.completions.create(model="m", messages=USER)
        assert upstream.requests == []
    assert info.value.status_code == 415 and "'zstd'" in info.value.message
    assert isinstance(info.value.body, dict) and info.value.body["type"] == "error"
    assert "not valid gzip" in cut.value.message


CUT = '{"city": "Par'  # arguments cut off by another backend's token limit


def _sent(upstream: Any) -> str:
    return json.dumps(upstream.requests[-1]["messages"], ensure_ascii=False)


def _written_back(sent: str) -> None:
    """The call went upstream in the dialect's form with its arguments as written,
    and its result answers it (not an orphan, not a missing result)."""
    assert json.dumps(f'<am:tool_call name="weather">\n{CUT}\n</am:tool_call>')[1:-1] in sent
    assert '<am:tool_result name=\\"weather\\">9C</am:tool_result>' in sent
    assert "no such call" not in sent and "No result was recorded" not in sent


def test_a_past_call_whose_arguments_are_not_json_does_not_refuse_the_conversation() -> None:
    # OpenAI's API takes any string as a past call's arguments: a 400 here made
    # every later request of the conversation fail (conversation poisoning)
    chat: Any = [
        *USER,
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": CUT}}
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "9C"},
    ]
    items: Any = [
        {"role": "user", "content": "Weather in Paris?"},
        {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": CUT},
        {"type": "function_call_output", "call_id": "c1", "output": "9C"},
    ]
    # an Anthropic client converted from OpenAI's format keeps the string as input
    messages: Any = [
        *USER,
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "c1", "name": "weather", "input": CUT}
        ]},
        {"role": "user",
         "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "9C"}]},
    ]
    with proxy(["It is 9C."] * 3) as (url, upstream):
        reply = _openai(url).chat.completions.create(
            model="m", messages=chat, tools=[WEATHER]
        )
        assert reply.choices[0].message.content == "It is 9C."
        _written_back(_sent(upstream))
        function: Any = {"type": "function", **WEATHER["function"]}
        response = _openai(url).responses.create(model="m", input=items, tools=[function])
        assert response.output_text == "It is 9C."
        _written_back(_sent(upstream))
        message = _anthropic(url).messages.create(
            model="c", max_tokens=50, messages=messages, tools=[A_WEATHER]
        )
        assert message.content[0].type == "text" and message.content[0].text == "It is 9C."
        _written_back(_sent(upstream))


def test_legacy_functions_are_served_in_their_own_form() -> None:
    # functions / function_call were ignored: no tool reached the model, and an
    # old client never got the function_call it waits for
    functions: Any = [WEATHER["function"]]
    history: Any = [
        *USER,
        {"role": "assistant", "content": None,
         "function_call": {"name": "weather", "arguments": '{"city": "Paris"}'}},
        {"role": "function", "name": "weather", "content": "9C"},
    ]
    with proxy([f"Checking. {PARIS} {PARIS}", PARIS, "It is 9C."]) as (url, upstream):
        chunks, streamed = _stream(_openai(url), model="m", messages=USER, functions=functions)
        told = upstream.requests[0]
        reply = _openai(url).chat.completions.create(
            model="m", messages=USER, functions=functions, function_call={"name": "weather"}
        )
        answer = _openai(url).chat.completions.create(
            model="m", messages=history, functions=functions
        )
        sent = json.dumps(upstream.requests[-1]["messages"], ensure_ascii=False)
    assert '<am:tool name=\\"weather\\"' in json.dumps(told["messages"])
    assert told.get("stop") == ["</am:tool_call>"]  # one call per legacy reply
    (choice,) = streamed.choices
    assert choice.finish_reason == "function_call" and not choice.message.tool_calls
    assert choice.message.function_call.name == "weather"
    assert json.loads(choice.message.function_call.arguments) == {"city": "Paris"}
    assert all(not c.choices or c.choices[0].delta.tool_calls is None for c in chunks)
    message = reply.choices[0].message
    assert reply.choices[0].finish_reason == "function_call" and message.tool_calls is None
    assert message.function_call is not None and message.function_call.name == "weather"
    assert answer.choices[0].message.content == "It is 9C."
    assert '<am:tool_result name=\\"weather\\">9C</am:tool_result>' in sent
    assert "no such call" not in sent and "No result was recorded" not in sent


def test_legacy_functions_beside_tools_are_refused() -> None:
    with proxy([]) as (url, upstream):
        with pytest.raises(openai.BadRequestError, match="not both"):
            _openai(url).chat.completions.create(
                model="m", messages=USER, tools=[WEATHER], functions=[WEATHER["function"]]
            )
        assert upstream.requests == []


@pytest.mark.parametrize("stream", [False, True])
def test_duplicate_or_empty_tool_names_are_a_400_in_the_clients_format(stream: bool) -> None:
    # Anthropic's API answers "tools: Tool names must be unique."; both APIs refuse
    # an empty name. Accepted, the model was shown two tools of one name and the
    # parser typed a call's arguments by the last one's schema
    weather, other = WEATHER["function"], {**A_WEATHER, "description": "Another."}
    chat_cases: list[tuple[Any, str]] = [
        ([WEATHER, WEATHER], "tools[1]: tool names must be unique: 'weather'"),
        ([{"type": "function", "function": {**weather, "name": ""}}], "non-empty string 'name'"),
    ]
    responses_cases: list[tuple[Any, str]] = [
        ([{"type": "function", **weather}] * 2, "tools[1]: tool names must be unique"),
        ([{"type": "function", **weather, "name": ""}], "non-empty string 'name'"),
    ]
    messages_cases: list[tuple[Any, str]] = [
        ([A_WEATHER, other], "tools[1]: tool names must be unique: 'weather'"),
        ([{**A_WEATHER, "name": ""}], "non-empty string 'name'"),
    ]
    with proxy([]) as (url, upstream):
        client, claude = _openai(url), _anthropic(url)
        for tools, message in chat_cases:
            with pytest.raises(openai.BadRequestError, match=re.escape(message)) as chat:
                client.chat.completions.create(
                    model="m", messages=USER, tools=tools, stream=stream
                )
            assert chat.value.type == "invalid_request_error"
        legacy, twice = [weather, weather], re.escape("functions[1]: tool names must be unique")
        with pytest.raises(openai.BadRequestError, match=twice):
            client.chat.completions.create(
                model="m", messages=USER, functions=legacy, stream=stream
            )
        for tools, message in responses_cases:
            with pytest.raises(openai.BadRequestError, match=re.escape(message)):
                client.responses.create(model="m", input="hi", tools=tools, stream=stream)
        for tools, message in messages_cases:
            with pytest.raises(anthropic.BadRequestError, match=re.escape(message)) as messages:
                claude.messages.create(
                    model="m", max_tokens=50, messages=USER, tools=tools, stream=stream
                )
            assert messages.value.type == "invalid_request_error"
        assert upstream.requests == []


def test_a_responses_tool_declared_again_by_another_list_counts_once() -> None:
    # Codex declares its tools in additional_tools items: one declared there and
    # in 'tools' is one tool, as it was, while a list naming one twice is a 400
    weather: Any = {"type": "function", **WEATHER["function"]}
    again: Any = {"type": "additional_tools", "tools": [weather]}
    with proxy(["Sunny."]) as (url, upstream):
        response = _openai(url).responses.create(
            model="m", input=[again, {"role": "user", "content": "hi"}], tools=[weather]
        )
        system = upstream.received[0].body["messages"][0]["content"]
    assert response.output_text == "Sunny."
    assert system.count('<am:tool name="weather"') == 1


@pytest.mark.parametrize("stream", [False, True])
def test_a_tool_name_the_dialect_cannot_write_is_a_400_not_a_500(stream: bool) -> None:
    # command reads '@tool my tool {...}' as a call of 'my': the prompt refuses
    # such a tool (ToolDefinitionError), which reached the client as a 500
    # "internal error" (count_tokens: Starlette's plain-text 500)
    fn: Any = {**WEATHER["function"], "name": "my tool"}
    problem = re.escape("tool 'my tool' cannot be offered in the command dialect")
    with proxy([], dialect="command") as (url, upstream):
        client, claude = _openai(url), _anthropic(url)
        with pytest.raises(openai.BadRequestError, match=problem):
            client.chat.completions.create(
                model="m", messages=USER, tools=[{"type": "function", "function": fn}],
                stream=stream,
            )
        flat: Any = {"type": "function", **fn}
        with pytest.raises(openai.BadRequestError, match=problem):
            client.responses.create(model="m", input="hi", tools=[flat], stream=stream)
        spaced: Any = {**A_WEATHER, "name": "my tool"}
        with pytest.raises(anthropic.BadRequestError, match=problem):
            claude.messages.create(
                model="m", max_tokens=50, messages=USER, tools=[spaced], stream=stream
            )
        with pytest.raises(anthropic.BadRequestError, match=problem):
            claude.messages.count_tokens(model="m", messages=USER, tools=[spaced])
        assert upstream.requests == []


class _BrokenModel:
    """An upstream whose stream raises what no provider does: a bug of ours."""

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[Chunk]]:
        raise RuntimeError("a bug")
        yield  # pragma: no cover


def test_a_bug_of_ours_is_a_500_in_the_clients_format(monkeypatch: pytest.MonkeyPatch) -> None:
    # count_tokens answered Starlette's plain "Internal Server Error", which the
    # anthropic SDK cannot read; a stream that failed before it began said
    # "upstream_error" where a body said "internal"
    async def broken_count(*args: Any) -> tuple[int, bool]:
        raise RuntimeError("a bug")

    monkeypatch.setattr(TokenCounter, "count", broken_count)
    app = create_app(ProxyConfig(), model_factory=lambda model, key: _BrokenModel())
    with serve(app) as url:
        with pytest.raises(anthropic.InternalServerError) as counted:
            _anthropic(url).messages.count_tokens(model="m", messages=USER)
        for stream in (False, True):
            with pytest.raises(openai.InternalServerError) as chat:
                _openai(url).chat.completions.create(model="m", messages=USER, stream=stream)
            assert chat.value.body == {
                "message": "internal error in the proxy", "type": "api_error", "param": None,
                "code": "internal",
            }
    assert counted.value.body == {
        "type": "error", "error": {"type": "api_error", "message": "internal error in the proxy"}
    }


def test_a_key_no_header_can_carry_is_a_401_in_the_clients_format() -> None:
    # a key pasted with a "…" (its UTF-8 bytes, which a Node client sends and
    # the server reads as Latin-1) was refused by the provider with a
    # UsageError: Uvicorn's plain 500, and the upstream connection it had
    # leased counted as busy for good
    key = "sk-client\u2026".encode()
    bearer, anthropic_key = {b"authorization": b"Bearer " + key}, {b"x-api-key": key}
    asked: list[tuple[str, dict[str, Any], dict[bytes, bytes], str]] = [
        ("/v1/chat/completions", {"model": "m", "messages": USER}, bearer, "error"),
        ("/v1/messages", {"model": "m", "max_tokens": 5, "messages": USER}, anthropic_key, "type"),
        ("/v1/messages/count_tokens", {"model": "m", "messages": USER}, anthropic_key, "type"),
    ]
    with proxy(["Hi."]) as (url, upstream):
        for path, body, headers, field in asked:
            for stream in (False, True):
                response = httpx.post(
                    f"{url}{path}", json={**body, "stream": stream}, headers=headers, timeout=10
                )
                assert response.status_code == 401 and field in response.json(), response.text
                assert "a character an HTTP header cannot carry" in response.text
        listed = httpx.get(f"{url}/v1/models", headers=bearer, timeout=10)
        assert listed.status_code == 401
        assert listed.json()["error"]["type"] == "authentication_error"
        assert upstream.requests == []
        # a key without it goes through
        answer = _openai(url).chat.completions.create(model="m", messages=USER)
        assert answer.choices[0].message.content == "Hi."


def test_a_bad_upstream_or_key_in_the_config_fails_at_start() -> None:
    # once accepted, then refused per request with a plain 500
    with pytest.raises(UsageError, match="invalid base_url 'nope'"):
        create_app(ProxyConfig(upstream="nope"))
    with pytest.raises(UsageError, match="api_key holds a character"):
        create_app(ProxyConfig(api_key="sk-operator\u2026"))
