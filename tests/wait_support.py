"""A bounded wait for tests: poll a condition another task or thread makes true."""

from __future__ import annotations

from collections.abc import Callable

import anyio


async def until(condition: Callable[[], bool]) -> None:
    """Return once ``condition()`` holds; fail after about 10 s of polling."""
    for _ in range(1000):
        if condition():
            return
        await anyio.sleep(0.01)
    raise AssertionError("the condition never held")
