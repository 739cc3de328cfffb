"""``uvicorn_thread.QuickStop``, the tests' uvicorn, stops the way uvicorn does,
without its sleeps: a request in flight when it is told to stop is answered
first, the app's lifespan ends, and ``timeout_graceful_shutdown`` bounds a
request that never ends."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import httpx
import uvicorn
from uvicorn_thread import QuickStop
from wait_support import until


def wait_for(condition: Callable[[], bool]) -> None:
    anyio.run(until, condition)


class App:
    """Answers ``/`` once ``release`` is set; notes the lifespan's messages."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.lifespan: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                self.lifespan.append(message["type"])
                await send({"type": message["type"] + ".complete"})
                if message["type"] == "lifespan.shutdown":
                    return
        self.started.set()
        while not self.release.is_set():  # noqa: ASYNC110 (set by the test's thread)
            await asyncio.sleep(0.01)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"answered"})


@contextmanager
def running(app: App, grace: int | None) -> Iterator[tuple[QuickStop, threading.Thread, str]]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    config = uvicorn.Config(app, log_level="critical", timeout_graceful_shutdown=grace)
    server = QuickStop(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        wait_for(lambda: server.started)
        yield server, thread, url
    finally:
        app.release.set()
        server.should_exit = True
        thread.join(10)
        sock.close()


def refused(url: str) -> bool:
    try:
        httpx.get(url, timeout=1)
    except httpx.TransportError:  # refused, or left unanswered in the closed backlog
        return True
    return False


def ask(url: str, answers: list[Any]) -> threading.Thread:
    def request() -> None:
        try:
            answers.append(httpx.get(url, timeout=30).text)
        except httpx.HTTPError as exc:
            answers.append(exc)

    thread = threading.Thread(target=request)
    thread.start()
    return thread


def test_a_request_in_flight_is_answered_before_the_server_stops() -> None:
    app, answers = App(), list[Any]()
    with running(app, grace=None) as (server, thread, url):
        client = ask(url, answers)
        wait_for(app.started.is_set)
        server.should_exit = True
        wait_for(lambda: refused(url))  # it is stopping: it listens no more
        assert thread.is_alive()  # and waits for the request
        app.release.set()
        client.join(30)
        thread.join(10)
        assert not thread.is_alive()
    assert answers == ["answered"]
    assert app.lifespan == ["lifespan.startup", "lifespan.shutdown"]


def test_the_graceful_timeout_bounds_a_request_that_never_ends() -> None:
    app, answers = App(), list[Any]()
    with running(app, grace=1) as (server, thread, url):
        client = ask(url, answers)
        wait_for(app.started.is_set)
        server.should_exit = True
        thread.join(10)
        assert not thread.is_alive()  # stopped though the request never ended
        client.join(30)
    assert len(answers) == 1 and answers[0] != "answered"  # cut: an error or a 500
    assert app.lifespan == ["lifespan.startup", "lifespan.shutdown"]
