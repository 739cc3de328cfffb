"""The conftest guard's reading of /proc: a connection its server closed is found
while the client holds it, and not before nor after."""

from __future__ import annotations

import socket
import time

import pytest
from socket_leaks import FDS, closed_by_peer, socket_inodes

pytestmark = pytest.mark.skipif(not FDS.is_dir(), reason="reads Linux's /proc")


def _wait_found(inodes: set[str]) -> list[str]:
    """The server's FIN crosses the loopback at once; a busy machine may take longer."""
    for _ in range(200):
        found = closed_by_peer(inodes)
        if found:
            return found
        time.sleep(0.01)
    return []


def test_a_connection_its_server_closed_is_found_until_the_client_closes_it() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        server_port = listener.getsockname()[1]
        before = socket_inodes()
        client = socket.create_connection(("127.0.0.1", server_port), timeout=5)
        try:
            accepted, _ = listener.accept()
            new = socket_inodes() - before
            assert len(new) == 2  # the client's end and the server's
            assert closed_by_peer(new) == []  # both ends open
            accepted.close()
            client_port = client.getsockname()[1]
            assert _wait_found(new) == [f"port {client_port} -> port {server_port}"]
        finally:
            client.close()
        assert closed_by_peer(new) == []
        assert socket_inodes() & new == set()

