"""``create_app(max_body=...)``: the chat endpoints refused any body over 4 MiB
(413) with no way to allow more, though a conversation's attachments are read
and a few images pass that."""

from __future__ import annotations

import httpx
import msgspec
import pytest
from test_ui_support import ScriptedSource, read_ui_stream, serve

from streamtools.errors import UsageError
from streamtools.events import Event, Final, Finish, TextDelta, TurnEnd, TurnStart
from streamtools.ui import create_app

SCRIPT: list[Event] = [
    TurnStart(turn=1),
    TextDelta(text="Seen."),
    Finish(reason="stop"),
    TurnEnd(turn=1, reason="final"),
    Final(text="Seen.", turns=1),
]


def _chat(size: int) -> bytes:
    """A conversation whose one message is ``size`` bytes of text, as JSON."""
    text = "x" * size
    message = {"id": "u", "role": "user", "parts": [{"type": "text", "text": text}]}
    return msgspec.json.encode({"messages": [message]})


def test_a_larger_limit_takes_a_body_the_default_refuses() -> None:
    body = _chat(5_000_000)
    source = ScriptedSource(SCRIPT)
    with serve(create_app(source, max_body=8 * 1024 * 1024)) as server:
        response = httpx.post(server.url + "/api/chat", content=body, timeout=30)
    assert response.status_code == 200
    assert read_ui_stream(response.content).text == "Seen."
    assert len(source.prompts) == 1
    with serve(create_app(ScriptedSource(SCRIPT))) as server:
        refused = httpx.post(server.url + "/api/chat", content=body, timeout=30)
    assert refused.status_code == 413
    assert refused.json()["error"]["message"] == "request body larger than 4194304 bytes"


@pytest.mark.parametrize("path", ["/api/chat", "/api/events"])
def test_a_smaller_limit_is_kept_by_both_endpoints(path: str) -> None:
    source = ScriptedSource(SCRIPT)
    with serve(create_app(source, max_body=1000)) as server:
        response = httpx.post(server.url + path, content=_chat(2000), timeout=10)
    assert response.status_code == 413
    assert response.json()["error"]["message"] == "request body larger than 1000 bytes"
    assert source.prompts == []


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_a_limit_that_is_not_a_size_is_refused_at_once(bad: object) -> None:
    with pytest.raises(UsageError, match="max_body must be a whole number of bytes"):
        create_app(ScriptedSource(SCRIPT), max_body=bad)  # type: ignore[arg-type]
