"""Failures told in the client's terms: its API's names for a choice and a field,
a gateway's status for an upstream that does not answer, and what a failed
Responses stream had already written."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from test_proxy import USER, _openai, proxy, serve

from streamtools.proxy import ProxyConfig, anthropic_wire, create_app, openai_wire
from streamtools.proxy.request import RequestError
from streamtools.testing.fake_server import Reply


def test_an_anthropic_any_choice_without_tools_is_named_any() -> None:
    """It was called 'required', OpenAI's word, which the client never sent."""
    body = {"model": "m", "max_tokens": 5, "messages": USER, "tool_choice": {"type": "any"}}
    with pytest.raises(RequestError) as info:
        anthropic_wire.decode_request(body)
    assert info.value.message == "tool_choice 'any' was given but the request has no tools"
    with pytest.raises(RequestError, match="tool_choice 'required' was given"):
        openai_wire.decode_request({"model": "m", "messages": USER, "tool_choice": "required"})


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"include_usage": "false"}, "stream_options.include_usage must be a boolean"),
        ({"include_usage": 1}, "stream_options.include_usage must be a boolean"),
        ("yes", "stream_options must be an object"),
    ],
)
def test_stream_options_of_the_wrong_type_are_a_400(options: Any, says: str) -> None:
    """``include_usage: "false"`` (a string, truthy) sent the usage chunk to a
    client that had said no; a field of the wrong type is a 400 naming it."""
    body = {"model": "m", "messages": USER, "stream": True, "stream_options": options}
    with pytest.raises(RequestError, match=says):
        openai_wire.decode_request(body)
    for fine, usage in (({}, False), ({"include_usage": None}, False),
                        ({"include_usage": True}, True)):
        call = openai_wire.decode_request({**body, "stream_options": fine})
        assert call.include_usage is usage


@contextmanager
def silent_upstream() -> Iterator[str]:
    """A server on 127.0.0.1 that takes connections and requests and never
    answers, until the block ends; yields its base URL."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)
    done = threading.Event()
    held: list[socket.socket] = []

    def hold() -> None:
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            held.append(conn)

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        done.set()
        thread.join(10)
        for conn in held:
            conn.close()
        listener.close()


def test_an_upstream_that_does_not_answer_in_time_is_a_504() -> None:
    """A read timeout was a 502 Bad Gateway; gateways (nginx, Envoy, load
    balancers) answer 504 Gateway Timeout, which tells a client the upstream
    was slow rather than broken. Streamed or not, and for the model list."""
    with silent_upstream() as upstream:
        cfg = ProxyConfig(upstream=f"{upstream}/v1", timeout=0.3, ping_interval=0)
        with serve(create_app(cfg)) as url:
            body = {"model": "m", "messages": USER}
            for extra in ({}, {"stream": True}):
                response = httpx.post(
                    f"{url}/v1/chat/completions", json={**body, **extra}, timeout=10
                )
                assert response.status_code == 504, response.text
                assert "read timeout" in response.json()["error"]["message"]
            listed = httpx.get(f"{url}/v1/models", timeout=10)
            assert listed.status_code == 504
    with proxy([Reply(status=502, body='{"error": {"message": "bad gateway"}}')]) as (url, _):
        response = httpx.post(f"{url}/v1/chat/completions", json=body, timeout=10)
        assert response.status_code == 502  # the upstream's own status, as before


def test_a_failed_responses_stream_lists_the_text_it_had_streamed() -> None:
    """``response.failed`` listed ``output: []`` though text had streamed."""
    with proxy([Reply(text="Hello there, world", cut_after=3)]) as (url, _):
        events = list(_openai(url).responses.create(model="m", input="hi", stream=True))
    texts = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert texts and events[-2].type == "error"
    failed = events[-1]
    assert failed.type == "response.failed" and failed.response.status == "failed"
    (item,) = failed.response.output
    assert item.type == "message" and item.status == "incomplete"
    assert item.content[0].type == "output_text" and item.content[0].text == texts
