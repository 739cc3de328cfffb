"""FakeServer: real HTTP on 127.0.0.1, exact wire formats, faults, clean stop."""

from __future__ import annotations

import json
import socket
import struct
import time
from pathlib import Path
from typing import Any

import anthropic
import anyio
import httpx
import msgspec
import pytest
from provider_support import collect, provider_for
from socket_leaks import FDS, socket_inodes

from streamtools.events import CallEnd, CallError
from streamtools.model import CallChunk, Chunk, FinishChunk, ReasoningChunk, TextChunk
from streamtools.native import NativeCalls
from streamtools.runtime import record
from streamtools.runtime.recording import load
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import FakeCall, Reply, token_pieces
from streamtools.testing.fake_wire import CONTENT_TYPES, chat_template, encode, reply_chunks

pytestmark = pytest.mark.anyio


def post(server: FakeServer, body: dict[str, Any], path: str | None = None) -> httpx.Response:
    path = (
        path
        or {"openai": "/chat/completions", "anthropic": "/v1/messages", "ollama": "/api/chat"}[
            server.wire
        ]
    )
    if server.wire != "ollama" and "stream" not in body:
        body = {**body, "stream": True}  # as the providers ask; test_fake_server_whole: not
    return httpx.post(server.base_url + path, json=body, timeout=5.0)


def sse_data(text: str) -> list[Any]:
    out: list[Any] = []
    for line in text.splitlines():
        if line.startswith("data: ") and line != "data: [DONE]":
            out.append(json.loads(line[6:]))
    return out


def test_token_pieces_keep_every_character() -> None:
    text = "Hello, wonderful   world!\n  ok "
    pieces = token_pieces(text)
    assert "".join(pieces) == text
    assert len(pieces) > 4 and all(len(p.strip()) <= 4 for p in pieces)


def test_openai_stream_exact_shape() -> None:
    with FakeServer(["Hi there"]) as server:
        r = post(server, {"model": "m", "messages": [], "stream_options": {"include_usage": True}})
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/event-stream"
    assert r.text.startswith(": OPENROUTER PROCESSING\n\n")
    assert r.text.endswith("data: [DONE]\n\n")
    events = sse_data(r.text)
    text = "".join(e["choices"][0]["delta"].get("content") or "" for e in events if e["choices"])
    assert text == "Hi there"
    assert events[-2]["choices"][0]["finish_reason"] == "stop"
    assert events[-1]["choices"] == [] and events[-1]["usage"]["completion_tokens"] > 0
    assert server.requests[0]["model"] == "m"
    assert server.received[0].path == "/v1/chat/completions"


def test_openai_honours_stop_like_a_server() -> None:
    with FakeServer(['<am:tool_call name="x"><a>1</a></am:tool_call> trailing']) as server:
        r = post(server, {"model": "m", "messages": [], "stop": ["</am:tool_call>"]})
    text = "".join(e["choices"][0]["delta"].get("content") or "" for e in sse_data(r.text))
    assert text == '<am:tool_call name="x"><a>1</a>'


def test_openai_calls_on_index_zero() -> None:
    calls = (FakeCall(name="a", arguments={"x": 1}), FakeCall(name="b", id="given"))
    with FakeServer([Reply(calls=calls, index_zero=True)]) as server:
        r = post(server, {"model": "m", "messages": []})
    deltas = [
        tc for e in sse_data(r.text) for tc in e["choices"][0]["delta"].get("tool_calls") or []
    ]
    assert {d["index"] for d in deltas} == {0}
    assert [d["id"] for d in deltas if "id" in d] == ["call_fake_0", "given"]
    assert sse_data(r.text)[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_openai_calls_interleaved() -> None:
    calls = (FakeCall(name="a", arguments={"x": "one two"}), FakeCall(name="b", arguments={}))
    with FakeServer([Reply(calls=calls, interleave=True)]) as server:
        r = post(server, {"model": "m", "messages": []})
    deltas = [
        tc for e in sse_data(r.text) for tc in e["choices"][0]["delta"].get("tool_calls") or []
    ]
    order = [d["index"] for d in deltas]
    assert order[:4] == [0, 1, 0, 1]  # a piece of each call in turn
    for index, call in enumerate(calls):  # each call's pieces, in order, make its arguments
        text = "".join(d["function"]["arguments"] for d in deltas if d["index"] == index)
        assert json.loads(text) == call.arguments


def test_anthropic_stream_exact_shape() -> None:
    reply = Reply(reasoning="think", text="Hello", calls=(FakeCall(name="t", arguments={"a": 1}),))
    with FakeServer([reply], wire="anthropic") as server:
        r = post(server, {"model": "m", "messages": [], "max_tokens": 10})
    names = [line[7:] for line in r.text.splitlines() if line.startswith("event: ")]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    blocks = [
        e["content_block"]["type"] for e in sse_data(r.text) if e["type"] == "content_block_start"
    ]
    assert blocks == ["thinking", "text", "tool_use"]
    delta = next(e for e in sse_data(r.text) if e["type"] == "message_delta")
    assert delta["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}


def test_anthropic_names_the_stop_sequence() -> None:
    with FakeServer(["abc STOP def"], wire="anthropic") as server:
        r = post(server, {"model": "m", "messages": [], "stop_sequences": ["STOP"]})
    delta = next(e for e in sse_data(r.text) if e["type"] == "message_delta")
    assert delta["delta"] == {"stop_reason": "stop_sequence", "stop_sequence": "STOP"}


def test_ollama_ndjson_whole_calls() -> None:
    reply = Reply(reasoning="hm", text="ok", calls=(FakeCall(name="t", arguments={"a": [1]}),))
    with FakeServer([reply], wire="ollama") as server:
        r = post(server, {"model": "m", "messages": []})
    assert r.headers["content-type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in r.text.splitlines()]
    assert lines[0]["message"]["thinking"] == "hm"
    calls = [c for line in lines for c in line["message"].get("tool_calls") or []]
    assert calls == [{"function": {"name": "t", "arguments": {"a": [1]}}}]
    assert lines[-1]["done"] is True and lines[-1]["done_reason"] == "stop"
    assert all(line["done"] is False for line in lines[:-1])


def test_recorded_chunks_are_sent_as_given() -> None:
    chunks: list[Chunk] = [
        TextChunk(text="exactly "),
        TextChunk(text="these"),
        CallChunk(index=0, id="i", name="n"),
    ]
    with FakeServer([chunks]) as server:
        r = post(server, {"model": "m", "messages": []})
    events = sse_data(r.text)
    contents = [e["choices"][0]["delta"].get("content") for e in events[1:3]]
    assert contents == ["exactly ", "these"]
    assert events[-1]["choices"][0]["finish_reason"] == "stop"


def test_recorded_finish_kept() -> None:
    with FakeServer([[TextChunk(text="x"), FinishChunk(reason="length")]]) as server:
        r = post(server, {"model": "m", "messages": []})
    assert sse_data(r.text)[-1]["choices"][0]["finish_reason"] == "length"


@pytest.mark.parametrize("wire", ["openai", "anthropic", "ollama"])
async def test_a_recorded_error_finish_is_the_wire_s_error_with_its_words(
    anyio_backend: str, wire: Any
) -> None:
    """A recording of a stream that broke ends in ``FinishChunk(reason="error")``:
    sent as ``finish_reason: "error"`` (OpenAI), ``stop_reason: "error"``
    (Anthropic) without its message, or as a plain ``stop`` (Ollama), so a
    provider read another failure, or none."""
    said = "connection cut by the server while streaming"
    recorded: list[Chunk] = [TextChunk(text="partial"), FinishChunk(reason="error", message=said)]
    async with FakeServer([recorded], wire=wire) as server:
        chunks = await collect(provider_for(server))
    assert chunks[0] == TextChunk(text="partial") and len(chunks) == 2
    assert isinstance(chunks[-1], FinishChunk) and chunks[-1].reason == "error"
    assert (chunks[-1].message or "").endswith(said)


async def test_recorded_call_extra_goes_out_as_the_call_s_extra_content(
    anyio_backend: str,
) -> None:
    """A recorded call's ``extra`` (Gemini's thought signature, which its
    OpenAI-compatible endpoint sends as the call's ``extra_content``) was dropped
    on the openai wire: an agent replayed through the server never had it, so
    what it sent back could not be checked against the recording."""
    signature = {"google": {"thought_signature": "CpkBAdHtim9"}}
    recorded: list[Chunk] = [
        CallChunk(index=0, id="c1", name="f", extra=signature),
        CallChunk(index=0, arguments='{"a": 1}'),
        CallChunk(index=1, id="c2", name="g", arguments="{}"),
        FinishChunk(reason="tool_calls"),
    ]
    async with FakeServer([recorded]) as server:
        chunks = await collect(provider_for(server))
    calls = [c for c in chunks if isinstance(c, CallChunk)]
    assert {c.index: c.extra for c in calls if c.extra is not None} == {0: signature}


@pytest.mark.parametrize("wire", ["anthropic", "ollama", "openai"])
async def test_a_recording_made_with_openai_plays_its_calls_on_every_wire(
    anyio_backend: str, wire: Any, tmp_path: Path
) -> None:
    """``OpenAIChat`` yields a call's id on a chunk of its own and its name with
    the arguments on the next; played back on the anthropic wire that was one
    ``tool_use`` block with no name and no input, then another with a made-up
    id holding the call, and on Ollama's a nameless call then the call, so an
    agent replayed through the server saw malformed calls the model never made."""
    scripted = Reply(
        text="Let me check.",
        calls=(FakeCall(name="weather", arguments={"city": "Paris"}), FakeCall(name="now")),
    )
    path = tmp_path / "calls.jsonl"
    async with FakeServer([scripted]) as server:
        await collect(record(provider_for(server), path))
    (segment,) = load(path)
    recorded = [timed.chunk for timed in segment.chunks]
    async with FakeServer([recorded], wire=wire) as server:
        played = await collect(provider_for(server))
    calls = NativeCalls()
    events = [e for c in played if isinstance(c, CallChunk) for e in calls.feed(c)]
    events += calls.end("tool_calls")
    ends = [e for e in events if isinstance(e, CallEnd)]
    assert [(e.name, e.arguments) for e in ends] == [("weather", {"city": "Paris"}), ("now", {})]
    assert [e for e in events if isinstance(e, CallError)] == []
    if wire != "ollama":  # Ollama's calls have no ids
        assert [e.id for e in ends] == ["call_fake_0", "call_fake_1"]


@pytest.mark.parametrize("wire", ["anthropic", "ollama"])
async def test_a_repeated_completion_mark_is_no_call_of_its_own(
    anyio_backend: str, wire: Any
) -> None:
    """A call chunk that only says ``done`` again, after its call was complete
    (``NativeCalls`` ignores it), was read as the start of another call: a
    ``tool_use`` block with no name, or a nameless Ollama call."""
    recorded: list[Chunk] = [
        CallChunk(index=0, id="c1", name="f", arguments='{"a": 1}', done=True),
        CallChunk(index=0, done=True),
        CallChunk(index=1, id="c2", name="g", arguments="{}", done=True),
        FinishChunk(reason="tool_calls"),
    ]
    async with FakeServer([recorded], wire=wire) as server:
        played = await collect(provider_for(server))
    calls = NativeCalls()
    events = [e for c in played if isinstance(c, CallChunk) for e in calls.feed(c)]
    events += calls.end("tool_calls")
    assert [(e.name, e.arguments) for e in events if isinstance(e, CallEnd)] == [
        ("f", {"a": 1}),
        ("g", {}),
    ]
    assert [e for e in events if isinstance(e, CallError)] == []


def test_a_recorded_refusal_is_anthropic_s_refusal() -> None:
    """``AnthropicMessages`` reads the API's ``refusal`` as ``content_filter``;
    played back, that went out as ``stop_reason: "content_filter"``, which the
    API never sends, so a client that checks for ``refusal`` missed it."""
    recorded: list[Chunk] = [TextChunk(text="I can't"), FinishChunk(reason="content_filter")]
    with FakeServer([recorded, recorded], wire="anthropic") as server:
        client = anthropic.Anthropic(base_url=server.base_url, api_key="k", max_retries=0)
        messages: Any = [{"role": "user", "content": "hi"}]
        with client, client.messages.stream(model="m", max_tokens=9, messages=messages) as stream:
            assert stream.get_final_message().stop_reason == "refusal"
    # and our provider reads it back as it was recorded
    with FakeServer([recorded], wire="anthropic") as server:
        chunks = anyio.run(collect, provider_for(server))
    assert chunks[-1] == FinishChunk(reason="content_filter")


async def test_recorded_anthropic_thinking_keeps_its_signature(anyio_backend: str) -> None:
    """A recorded thinking block's signature (and a redacted block) went out as
    ``fake-signature`` (and not at all): an agent replayed through the server
    sent back a signature the recording never had."""
    recorded: list[Chunk] = [
        ReasoningChunk(text="Let me think."),
        ReasoningChunk(text="", signature="EqQBCkYIBxgCKkA"),
        ReasoningChunk(text="", redacted="EmwKAhgBEgy3va3p"),
        TextChunk(text="Done."),
        FinishChunk(reason="stop"),
    ]
    async with FakeServer([recorded], wire="anthropic") as server:
        chunks = await collect(provider_for(server))
    reasoning = [c for c in chunks if isinstance(c, ReasoningChunk)]
    assert reasoning[0].origin is not None  # where it came from: this server and model
    assert [msgspec.structs.replace(c, origin=None) for c in reasoning] == recorded[:3]
    assert chunks[-1] == FinishChunk(reason="stop")


def test_error_status_with_retry_after_then_next_reply() -> None:
    with FakeServer([Reply(status=429, retry_after=1.5), "ok"]) as server:
        first = post(server, {"model": "m", "messages": []})
        second = post(server, {"model": "m", "messages": []})
    assert first.status_code == 429 and first.headers["retry-after"] == "1.5"
    assert first.json()["error"]["code"] == 429
    assert second.status_code == 200


def test_out_of_replies_and_reject_stop() -> None:
    with FakeServer([], reject_stop=True) as server:
        rejected = post(server, {"model": "m", "messages": [], "stop": ["x"]})
        empty = post(server, {"model": "m", "messages": []})
    assert rejected.status_code == 400 and "stop" in rejected.json()["error"]["message"]
    assert empty.status_code == 500 and "no scripted reply" in empty.text


def test_tokenizer_endpoints_take_no_reply() -> None:
    messages = [{"role": "user", "content": "Is it warm in Paris?"}]
    expected = len(token_pieces(chat_template(messages)))
    with FakeServer(["kept"], tokenizer="vllm") as vllm:
        url = vllm.url  # the server's root, beside /v1
        counted = httpx.post(f"{url}/tokenize", json={"messages": messages}).json()
        missing = httpx.post(f"{url}/apply-template", json={"messages": messages})
        assert vllm.remaining == 1  # the scripted reply is still there
    assert counted["count"] == expected == len(counted["tokens"]) and missing.status_code == 404
    with FakeServer(tokenizer="llama.cpp") as llama:
        url = llama.url
        empty = httpx.post(f"{url}/tokenize", json={"messages": messages}).json()
        prompt = httpx.post(f"{url}/apply-template", json={"messages": messages}).json()["prompt"]
        tokens = httpx.post(f"{url}/tokenize", json={"content": prompt}).json()["tokens"]
    assert empty == {"tokens": []} and len(tokens) == expected
    with FakeServer() as plain:
        assert httpx.post(f"{plain.url}/tokenize", json={}).status_code == 404
    with pytest.raises(ValueError, match="unknown tokenizer"):
        FakeServer(tokenizer="tiktoken")  # type: ignore[arg-type]


def test_cut_mid_stream_is_a_protocol_error() -> None:
    with FakeServer([Reply(text="one two three four", cut_after=3)]) as server:
        with pytest.raises(httpx.RemoteProtocolError):
            post(server, {"model": "m", "messages": []})


def test_stall_is_ended_by_stop() -> None:
    server = FakeServer([Reply(text="a b c", stall_after=1, stall=60.0)]).start()
    port = server.port
    with httpx.Client(timeout=httpx.Timeout(5.0, read=0.3)) as client:
        with pytest.raises(httpx.ReadTimeout):
            client.post(server.base_url + "/chat/completions", json={"model": "m"})
    server.stop()  # returns promptly although a handler is stalled for 60 s
    with pytest.raises(RuntimeError):
        server.port  # noqa: B018 - the property raises once stopped
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=0.5)


@pytest.mark.skipif(not FDS.is_dir(), reason="reads the process's sockets from /proc")
def test_stop_returns_once_every_connection_is_closed() -> None:
    # A stalled handler is woken by stop() and closes its connection in its own
    # thread; stop() waited for the server's thread only, so that close could come
    # after it returned (under load: a CI run saw the connection half-closed,
    # CLOSE_WAIT, after the test). A race: looped, so that a stop() that does not
    # wait for it is likely to lose one.
    for _ in range(20):
        before = socket_inodes()
        server = FakeServer([Reply(text="a b c", stall_after=1, stall=60.0)]).start()
        with socket.create_connection(("127.0.0.1", server.port)) as client:
            head = b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n"
            client.sendall(head + b"\r\n{}")
            assert server.wait_stalled(5.0)
            ours = socket_inodes() - before  # the client's socket and the server's ones
            server.stop()
            left = socket_inodes() & ours
        assert len(left) == 1  # the client's own, still open here; the server's all closed


async def test_async_context_manager_and_push(anyio_backend: str) -> None:
    async with FakeServer(wire="ollama") as server:
        server.push("hello")
        assert server.remaining == 1
        async with httpx.AsyncClient() as client:
            r = await client.post(server.base_url + "/api/chat", json={"model": "m"})
        assert r.status_code == 200 and server.remaining == 0
    with pytest.raises(RuntimeError):
        server.base_url  # noqa: B018


async def test_slow_chunks_arrive_spaced(anyio_backend: str) -> None:
    async with FakeServer([Reply(text="a b", delay=0.05)]) as server:
        async with httpx.AsyncClient() as client:
            url, body = server.base_url + "/chat/completions", {"stream": True}
            async with client.stream("POST", url, json=body) as r:
                parts = [part async for part in r.aiter_bytes()]
    assert len(parts) >= 3  # one HTTP chunk per event, not one buffered body
    assert b"[DONE]" in parts[-1]


def test_stall_before_a_marker_waits_for_resume() -> None:
    reply = Reply(text="one two MARK three", stall_before="MARK", stall=60.0)
    with FakeServer([reply]) as server:
        with httpx.Client(timeout=5.0) as client:
            url, body = server.base_url + "/chat/completions", {"stream": True}
            with client.stream("POST", url, json=body) as r:
                received = b""
                parts = r.iter_bytes()
                while b" two" not in received:
                    received += next(parts)
                assert server.wait_stalled(5.0)  # held before the frame with MARK
                assert b"MARK" not in received
                server.resume()
                received += b"".join(parts)
        assert not server.wait_stalled(0.0)
    deltas = [d["choices"][0]["delta"] for d in sse_data(received.decode()) if d["choices"]]
    assert [d["content"] for d in deltas if d.get("content")] == token_pieces("one two MARK three")


def test_wire_encoders_are_plain_functions() -> None:
    chunks = reply_chunks(Reply(text="hi there", finish="length"), "ollama", {"model": "m"})
    lines = [json.loads(line) for line in encode("ollama", chunks, {"model": "m"})]
    assert "".join(line["message"]["content"] for line in lines) == "hi there"
    assert lines[-1]["done"] and lines[-1]["done_reason"] == "length"
    assert CONTENT_TYPES["ollama"] == "application/x-ndjson"


def test_a_client_resetting_an_idle_connection_prints_no_traceback(
    capfd: pytest.CaptureFixture[str],
) -> None:
    with FakeServer(["hi"]) as server:
        host, port = server.base_url.split("//")[1].split("/")[0].split(":")
        sock = socket.create_connection((host, int(port)))
        # SO_LINGER 0 makes close() send a RST: the server sees ConnectionResetError.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.send(b"GET /v1/mod")
        time.sleep(0.1)
        sock.close()
        time.sleep(0.2)
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize(
    ("wire", "path", "body"),
    [
        ("openai", "/chat/completions", {"stop": 7}),
        ("openai", "/chat/completions", {"stop": [1, None]}),
        ("openai", "/chat/completions", {"stream_options": 5}),
        ("openai", "/chat/completions", {"model": {"name": "m"}}),
        ("anthropic", "/v1/messages", {"stop_sequences": 7}),
        ("anthropic", "/v1/messages/count_tokens", {"messages": 5}),
        ("ollama", "/api/chat", {"options": [1]}),
        ("ollama", "/api/chat", {"options": "x"}),
        ("ollama", "/api/chat", {"options": {"stop": 7}}),
    ],
)
def test_a_request_field_of_the_wrong_type_is_a_400_in_the_wire_shape(
    wire: Any, path: str, body: dict[str, Any], capfd: pytest.CaptureFixture[str]
) -> None:
    with FakeServer(["kept"], wire=wire) as server:
        r = post(server, body, path)
        assert server.remaining == 1  # a refused request takes no scripted reply
        assert post(server, {"model": "m"}).status_code == 200
    assert r.status_code == 400
    error = r.json()["error"]
    assert (error if wire == "ollama" else error["message"])  # the wire's own error shape
    assert "Traceback" not in capfd.readouterr().err


def test_tokenizer_fields_of_the_wrong_type_are_a_400() -> None:
    with FakeServer(tokenizer="llama.cpp") as server:
        content = httpx.post(f"{server.url}/tokenize", json={"content": 5})
        messages = httpx.post(f"{server.url}/apply-template", json={"messages": 5})
    assert content.status_code == messages.status_code == 400


def raw_request(server: FakeServer, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", server.port), timeout=5.0) as sock:
        sock.sendall(data)
        out = b""
        while chunk := sock.recv(65536):  # the server closes: the body's end is unknown
            out += chunk
    return out


@pytest.mark.parametrize("length", [b"abc", b"-5", b"\xc2\xb2"])
def test_a_bad_content_length_is_a_400(length: bytes, capfd: pytest.CaptureFixture[str]) -> None:
    with FakeServer(["kept"]) as server:
        head = b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: %s\r\n\r\n"
        out = raw_request(server, head % length + b"{}")
        assert server.remaining == 1
    assert out.startswith(b"HTTP/1.1 400")
    assert "Traceback" not in capfd.readouterr().err


def test_json_nested_too_deep_is_a_400(capfd: pytest.CaptureFixture[str]) -> None:
    with FakeServer(["kept"]) as server:
        r = httpx.post(server.base_url + "/chat/completions", content=b"[" * 100_000)
    assert r.status_code == 400 and "not a JSON object" in r.json()["error"]["message"]
    assert "Traceback" not in capfd.readouterr().err


def test_a_chunked_request_body_is_read() -> None:
    def body() -> Any:
        yield b'{"model": "m", "stream": true, '
        yield b'"stop": ["two"]}'

    with FakeServer(["one two three"]) as server:
        r = httpx.post(server.base_url + "/chat/completions", content=body())
    expected = {"model": "m", "stream": True, "stop": ["two"]}
    assert r.status_code == 200 and server.requests == [expected]
    text = "".join(e["choices"][0]["delta"].get("content") or "" for e in sse_data(r.text))
    assert text == "one "


@pytest.mark.parametrize("wire", ["openai", "anthropic", "ollama"])
def test_a_lone_surrogate_in_a_scripted_reply_is_sent_escaped(wire: Any) -> None:
    """A model can stream half a surrogate pair; a real server's JSON escapes it."""
    with FakeServer([Reply(text="a\ud800b", reasoning="x\udfff")], wire=wire) as server:
        path = {"openai": "/chat/completions", "anthropic": "/v1/messages", "ollama": "/api/chat"}
        body = json.dumps({"model": "m\udc00"})  # ASCII, with the half escaped
        r = httpx.post(server.base_url + path[wire], content=body, timeout=5.0)
    assert r.status_code == 200 and "\\ud800" in r.text and "\\udfff" in r.text
    assert "\\udc00" in r.text  # the request's model, echoed


def test_a_reply_the_wire_cannot_carry_is_a_500_that_says_why(
    capfd: pytest.CaptureFixture[str],
) -> None:
    bad_args = Reply(calls=(FakeCall(name="f", arguments="{bad"),))
    cut_args = [CallChunk(index=0, id="c", name="f"), CallChunk(index=0, arguments='{"a":')]
    with FakeServer([bad_args, cut_args, "next"], wire="ollama") as server:
        first, second, third = (post(server, {"model": "m"}) for _ in range(3))
    assert first.status_code == second.status_code == 500
    assert "'{bad' is not JSON" in first.json()["error"]
    assert third.status_code == 200  # the script goes on
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize(
    ("wire", "path"),
    [("openai", "/messages"), ("anthropic", "/v1/chat/completions"), ("ollama", "/v1/messages")],
)
def test_a_path_of_another_wire_is_a_404(wire: Any, path: str) -> None:
    with FakeServer(["kept"], wire=wire) as server:
        r = httpx.post(server.base_url + path, json={"model": "m"}, timeout=5.0)
        assert server.remaining == 1
    assert r.status_code == 404 and path in r.text
