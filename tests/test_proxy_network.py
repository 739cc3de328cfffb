"""The proxy's upstream pools share no state between the proxy's clients."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.abc
import httpx
import pytest

from streamtools.proxy.network import upstream_client

pytestmark = pytest.mark.anyio


async def test_upstream_pools_keep_no_cookies() -> None:
    """One client's upstream cookie must not travel with another client's request."""
    received: list[bytes] = []

    async def serve(client: Any) -> None:
        async with client:
            for _ in range(2):  # two requests on the kept-alive connection
                data = b""
                while b"\r\n\r\n" not in data:
                    data += await client.receive()
                received.append(data)
                await client.send(
                    b"HTTP/1.1 200 OK\r\nset-cookie: session=alice; Path=/\r\n"
                    b"content-length: 2\r\n\r\nok"
                )

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, serve)
        with anyio.fail_after(10):
            async with upstream_client(httpx.Limits(max_connections=1), True, 5.0) as client:
                for _ in range(2):
                    response = await client.get(f"http://127.0.0.1:{port}/")
                    assert response.status_code == 200
        assert len(received) == 2 and b"alice" not in received[1].lower()
        tg.cancel_scope.cancel()
