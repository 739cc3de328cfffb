"""``ProxyConfig.connect_wait`` (``streamtools proxy --connect-wait``): vLLM
and SGLang open their port only once the model is loaded, so a proxy started
beside one refused every client request at once ("cannot connect") for
minutes. Each request now waits, within the bound, for an upstream that
refuses connections. The openai SDK is the client; the upstream is a real
port on 127.0.0.1 that starts listening late."""

from __future__ import annotations

import logging
import socket
import threading
import time
from typing import Any

import openai
import pytest
from provider_support import DONE, sse
from test_proxy import USER, _openai, serve

from streamtools.proxy import ProxyConfig, create_app

ANSWER = sse({"choices": [{"index": 0, "delta": {"content": "Loaded."}}]},
             {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}, DONE)


def _free_port() -> int:
    with socket.socket() as s:  # a port nothing listens on once this closes
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answer_one(listener: socket.socket) -> None:
    """Accept one connection, read its request, answer it with ``ANSWER``."""
    listener.settimeout(10)
    conn, _ = listener.accept()
    with conn:
        conn.settimeout(10)
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        while len(body) < length:
            body += conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                     b"connection: close\r\n\r\n" + ANSWER.encode())


def _waits(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "connect_wait" in r.getMessage()]


def _app(port: int, **config: Any) -> Any:
    return create_app(ProxyConfig(upstream=f"http://127.0.0.1:{port}/v1", **config))


@pytest.mark.parametrize("stream", [False, True])
def test_an_upstream_that_opens_late_is_waited_for(
    stream: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "streamtools.providers")
    port = _free_port()
    got: list[Any] = []
    with serve(_app(port, connect_wait=30)) as url:
        client = _openai(url)

        def ask() -> None:
            if stream:
                got.append("".join(c.choices[0].delta.content or "" for c in
                                   client.chat.completions.create(
                                       model="m", messages=USER, stream=True) if c.choices))
            else:
                reply = client.chat.completions.create(model="m", messages=USER)
                got.append(reply.choices[0].message.content)

        asking = threading.Thread(target=ask)
        asking.start()
        deadline = time.monotonic() + 10
        while not _waits(caplog):  # refused, and waiting
            assert time.monotonic() < deadline and asking.is_alive()
            time.sleep(0.01)
        with socket.create_server(("127.0.0.1", port)) as listener:
            _answer_one(listener)
        asking.join(10)
    assert got == ["Loaded."]


def test_the_wait_is_bounded() -> None:
    port = _free_port()
    with serve(_app(port, connect_wait=0.2)) as url:
        with pytest.raises(openai.APIStatusError) as caught:
            _openai(url).chat.completions.create(model="m", messages=USER)
    assert "nothing accepted a connection" in str(caught.value)
    assert "(connect_wait=0.2)" in str(caught.value)


def test_without_it_a_refusal_fails_at_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "streamtools.providers")
    with serve(_app(_free_port())) as url:
        with pytest.raises(openai.APIStatusError, match="cannot connect"):
            _openai(url).chat.completions.create(model="m", messages=USER)
    assert _waits(caplog) == []
