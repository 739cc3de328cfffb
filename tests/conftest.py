"""Shared test configuration: anyio's own pytest plugin over asyncio and trio, and a
guard against tests that leave a connection open after its server closed it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from socket_leaks import FDS, closed_by_peer, socket_inodes


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
