"""Helpers for the MCP tests: start the SDK test server, serve an ASGI app in a thread."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn
from uvicorn_thread import QuickStop

HERE = Path(__file__).parent
MEMORY_SERVER = str(HERE / "memory_server.py")
BROKEN_SERVER = str(HERE / "broken_server.py")
CHANGING_SERVER = str(HERE / "changing_server.py")
RAW_SERVER = str(HERE / "raw_server.py")
PROGRESS_SERVER = str(HERE / "progress_server.py")


def memory_command() -> str:
    """The command line that starts the SDK test server over stdio."""
    return f"{sys.executable} {MEMORY_SERVER}"


def changing_command(*args: str) -> str:
    """The command line of the server whose tools change (``legacy``: a pre-2026 one)."""
    return " ".join([sys.executable, CHANGING_SERVER, *args])


def broken_command(mode: str) -> str:
    """A command that is not a working MCP server: ``garbage``, ``silent`` or ``exit``."""
    return f"{sys.executable} {BROKEN_SERVER} {mode}"


def raw_command(*args: str) -> str:
    """The command line of the server that writes its JSON-RPC by hand (and wrong)."""
    return " ".join([sys.executable, RAW_SERVER, *args])


def progress_command(marker: Path) -> str:
    """The command line of the server whose tools report progress or stay silent
    (``silent`` writes ``marker`` when it is cancelled)."""
    return f"{sys.executable} {PROGRESS_SERVER} {marker}"


def _listening_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    return sock


@contextmanager
def memory_http_server() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The SDK test server over streamable HTTP in a subprocess, on a random port.

    The parent binds and listens, the child serves on the inherited socket: the
    port is known before the child starts and connections queue until it accepts.
    """
    sock = _listening_socket()
    port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, MEMORY_SERVER, "http-fd", str(sock.fileno())],
        pass_fds=[sock.fileno()],
        stdin=subprocess.DEVNULL,
    )
    sock.close()
    try:
        yield f"http://127.0.0.1:{port}/mcp", proc
    finally:
        proc.kill()
        proc.wait(timeout=10)


@contextmanager
def http_server_processes(
    script: str, *args: str
) -> Iterator[tuple[str, Callable[[], subprocess.Popen[bytes]], Callable[[], None]]]:
    """A test server over streamable HTTP, as many processes of it as asked for.

    Yields the URL, ``spawn``, which starts a process serving it, and ``unlisten``,
    which closes the parent's listening socket. The parent keeps listening until
    then, so when a process dies, the next one serves the same port: a server that
    was restarted (connections wait in the backlog meanwhile). Once no process
    and not the parent listens, connections are refused.
    """
    sock = _listening_socket()
    port = sock.getsockname()[1]
    processes: list[subprocess.Popen[bytes]] = []

    def spawn() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [sys.executable, script, "http-fd", str(sock.fileno()), *args],
            pass_fds=[sock.fileno()],
            stdin=subprocess.DEVNULL,
        )
        processes.append(proc)
        return proc

    try:
        yield f"http://127.0.0.1:{port}/mcp", spawn, sock.close
    finally:
        for proc in processes:
            proc.kill()
            proc.wait(timeout=10)
        sock.close()


@contextmanager
def asgi_server(app_factory: Callable[[], Any]) -> Iterator[str]:
    """Serve an ASGI app with uvicorn in a thread on 127.0.0.1; yield its base URL.

    The app is built by ``app_factory`` inside the server's thread: the SDK's app
    creates anyio primitives, which bind to the event loop of the thread that
    builds them (a test running on trio must not build them).
    """
    sock = _listening_socket()
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app_factory, factory=True, log_level="warning", lifespan="on", timeout_graceful_shutdown=1
    )
    server = QuickStop(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    try:
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
