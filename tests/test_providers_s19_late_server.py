"""vLLM and SGLang open their port only once the model is loaded: a server
started with the agent refuses connections for minutes. A refusal cannot be
told from a wrong address, so it is waited for only when asked
(``connect_wait``), only before the server has answered once, and within the
bound; without it a wrong URL fails at once, as before. Against a real port
on 127.0.0.1 that opens late."""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable

import anyio
import pytest
from anyio.abc import SocketListener, SocketStream
from provider_support import DONE, collect, sse, text_of
from wait_support import until

from streamtools.errors import ProviderError, UsageError
from streamtools.model import Chunk, Model
from streamtools.providers import OpenAIChat
from streamtools.testing import FakeServer

pytestmark = pytest.mark.anyio
ANSWER = sse({"choices": [{"index": 0, "delta": {"content": "Hello"}}]},
             {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}, DONE)


def _free_port() -> int:
    with socket.socket() as s:  # a port nothing listens on once this closes
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _waits(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "connect_wait" in r.getMessage()]


async def _answer_one(stream: SocketStream) -> None:
    """Read one HTTP request and answer it with ``ANSWER``, then close."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += await stream.receive()
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        body += await stream.receive()
    await stream.send(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                      b"connection: close\r\n\r\n" + ANSWER.encode())
    await stream.aclose()


async def _ask_then_open(model: Model, port: int, waiting: Callable[[], bool]) -> str:
    """The text of ``model``'s answer, asked while nothing listens at ``port``,
    which opens (and answers with ``ANSWER``) once ``waiting()`` says the
    request waits for it."""
    got: list[Chunk] = []

    async def ask() -> None:
        got.extend(await collect(model))

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            await until(waiting)  # refused, and waiting
            async with await anyio.create_tcp_listener(
                local_host="127.0.0.1", local_port=port
            ) as listener:
                first = listener.listeners[0]
                assert isinstance(first, SocketListener)
                await _answer_one(await first.accept())
    return text_of(got)


async def test_a_server_that_opens_late_is_waited_for(
    anyio_backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "streamtools.providers")
    port = _free_port()
    url = f"http://127.0.0.1:{port}/v1"
    model = OpenAIChat("m", base_url=url, connect_wait=60, retry_base=0.01, max_retries=0)
    assert await _ask_then_open(model, port, lambda: bool(_waits(caplog))) == "Hello"
    assert _waits(caplog) == [
        f"connection refused at {url}/chat/completions; waiting for the server to start, "
        "at most 60 s (connect_wait)"
    ]


async def test_the_wait_is_bounded(anyio_backend: str) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    model = OpenAIChat("m", base_url=url, connect_wait=0.2, retry_base=0.01, max_retries=0)
    with anyio.fail_after(20), pytest.raises(ProviderError) as caught:
        await collect(model)
    assert f"nothing accepted a connection at {url}/chat/completions for 0.2 s " \
        "(connect_wait=0.2): is the server running, and is the URL right?" in str(caught.value)


async def test_without_connect_wait_a_refusal_fails_at_once(
    anyio_backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "streamtools.providers")
    url = f"http://127.0.0.1:{_free_port()}/v1"
    with pytest.raises(ProviderError, match="cannot connect") as caught:
        await collect(OpenAIChat("m", base_url=url, max_retries=0))
    assert _waits(caplog) == []
    # what the error says names the refusal and the option (anyio says only "failed")
    assert "(connection refused: nothing listens there yet; a server still loading its " \
        "model may open its port only then, which connect_wait waits for)" in str(caught.value)


async def test_a_server_that_answered_and_went_away_is_not_waited_for(
    anyio_backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "streamtools.providers")
    async with FakeServer(["Hi."], wire="openai") as server:
        model = OpenAIChat("m", base_url=server.base_url, connect_wait=60, max_retries=0)
        assert text_of(await collect(model)) == "Hi."
    with anyio.fail_after(20), pytest.raises(ProviderError, match="cannot connect"):
        await collect(model)  # the server is gone: no wait for it to start
    assert _waits(caplog) == []


def test_connect_wait_is_a_number_of_seconds() -> None:
    with pytest.raises(UsageError, match="connect_wait must be a number of seconds >= 0"):
        OpenAIChat("m", connect_wait=float("nan"))
