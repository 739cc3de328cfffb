"""What the ``streamtools chat`` tests share: a user's typed lines, and the
parsed command line of a chat against a FakeServer."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable

from streamtools.cli.chat import register
from streamtools.testing import FakeServer


def reader(lines: list[str]) -> Callable[[], Awaitable[str | None]]:
    """The session's ``read``: each line in turn, then None (end of input)."""
    queue = list(lines)

    async def read() -> str | None:
        return queue.pop(0) if queue else None

    return read


def args_for(server: FakeServer, *extra: str) -> argparse.Namespace:
    """``streamtools chat`` at ``server``, with the provider its wire speaks."""
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    argv = ["chat", "--base-url", server.base_url, "--model", "m", "--provider", server.wire]
    return parser.parse_args([*argv, *extra])
