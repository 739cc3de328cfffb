"""``FakeServer``'s address read outside its block: the error said "use it as a
context manager", which reads as wrong to a test that did, and read
``server.base_url`` after its ``with`` block had ended."""

from __future__ import annotations

import pytest

from streamtools.testing import FakeServer


def test_after_the_block_the_error_says_the_block_has_ended() -> None:
    with FakeServer(["hi"]) as server:
        inside = server.base_url
    assert inside.startswith("http://127.0.0.1:")
    with pytest.raises(RuntimeError) as raised:
        _ = server.base_url
    message = str(raised.value)
    assert "serves only inside its `with` (or `async with`) block" in message
    assert "has ended" in message


def test_before_the_block_too() -> None:
    with pytest.raises(RuntimeError, match="has not begun"):
        _ = FakeServer(["hi"]).url
