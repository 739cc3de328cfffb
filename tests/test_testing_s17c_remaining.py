"""FakeServer counts its unplayed replies as ``remaining``, the name ScriptedModel
and Replay use for theirs (it said ``pending``)."""

from __future__ import annotations

import httpx

from streamtools.testing import FakeServer, ScriptedModel


def test_remaining_counts_down_as_replies_are_served() -> None:
    scripted = ScriptedModel(["one", "two"])
    with FakeServer(["one", "two"]) as server:
        assert server.remaining == scripted.remaining == 2
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        r = httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=10)
        assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "one"
        assert server.remaining == 1
        httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=10)
        assert server.remaining == 0
    assert not hasattr(server, "pending")  # one name for one count
