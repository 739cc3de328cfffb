"""Shared test configuration: anyio's own pytest plugin over asyncio and trio, and
guards against tests that leave a connection open after its server closed it, or
a child process or thread running."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings
from leak_guards import left_running, live_children, own_threads
from socket_leaks import FDS, closed_by_peer, socket_inodes

# What a property asserts is never how fast an example ran: on a loaded machine (CI's
# two cores, shared) hypothesis's 200 ms deadline and its too_slow health check fail
# examples that are right. The default of every test; its own settings still apply.
settings.register_profile(
    "streamtools", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("streamtools")


def pytest_configure(config: pytest.Config) -> None:
    # The MCP SDK's HTTP client returns from inside its loop over an SSE answer once it
    # has the response (closed first: no connection is left), so httpx2's generators
    # under it are collected unexhausted, and trio's finalizer warns of each. A server
    # answers SSE when a tool reports progress, or when a handler runs past 15 s on a
    # loaded machine: that failed trio tests at random. Upstream: an open SDK PR,
    # https://github.com/modelcontextprotocol/python-sdk/pull/3543. Only this message of
    # trio's, only for httpx2 and httpcore2 (our providers are on httpx); the socket
    # guard below still fails a test that leaves a connection open.
    config.addinivalue_line(
        "filterwarnings", r"ignore:Async generator 'http(x|core)2\.:ResourceWarning"
    )


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(autouse=True)
def _no_socket_left_to_the_collector() -> Iterator[None]:
    """Fail a test that ends holding a connection its server has closed (an SDK or
    httpx client never closed, its pool kept alive by a reference cycle). Such a
    socket is closed only when the garbage collector finds it, at a random later
    moment, and its ResourceWarning (an error here) then failed whatever unrelated
    test was running: a flake that named the wrong test. Sockets opened before the
    test (a module's server) are not its own; where /proc is missing nothing is
    checked."""
    if not FDS.is_dir():
        yield
        return
    before = socket_inodes()
    yield
    left = closed_by_peer(socket_inodes() - before)
    if left:
        pytest.fail(
            "the test left a connection open after its server closed it "
            f"({', '.join(left)}): close the client that made it (a with block)",
            pytrace=False,
        )


@pytest.fixture(autouse=True)
def _no_process_or_thread_left_running() -> Iterator[None]:
    """Fail a test that ends with a child process or a thread it started still
    running. Over asyncio, an ``anyio.open_process`` never closed went unnoticed
    (over trio, and for a ``Popen`` dropped unwaited, a ResourceWarning said it); a
    server process kept by the test, or a thread never joined, went unnoticed on
    both, and ran on into later tests (a non-daemon one kept pytest from exiting).
    What is ending gets a generous moment (STREAMTOOLS_TEST_GRACE seconds, 10 unless
    set: the guard's own test sets less); a process found is killed."""
    children, threads = live_children(), own_threads()
    yield
    grace = float(os.environ.get("STREAMTOOLS_TEST_GRACE", "10"))
    processes, names = left_running(children, threads, grace=grace)
    if processes or names:
        said = [f"process {p}" for p in processes] + [f"thread {n!r}" for n in names]
        pytest.fail(
            f"the test left running: {'; '.join(said)}: end it (kill and wait, "
            "a with block, join)",
            pytrace=False,
        )
