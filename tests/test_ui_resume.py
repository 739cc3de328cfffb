"""``useChat({ resume: true })``: on mount, the AI SDK asks ``GET
{api}/{chatId}/stream`` for a stream to resume, and anything but 204 or a
stream is an error the chat shows. The server is stateless: there is never
one to resume, so it answers 204. Checked with the SDK's own chat client."""

from __future__ import annotations

import json
import os
import subprocess

import httpx
import pytest
from test_ui_node import JS, SDKS, node_available
from test_ui_support import HELLO, ScriptedSource, serve

from streamtools.ui import create_app


def test_there_is_never_a_stream_to_resume() -> None:
    source = ScriptedSource(HELLO)
    with serve(create_app(source)) as server:
        response = httpx.get(server.url + "/api/chat/chat-123/stream")
    assert response.status_code == 204
    assert response.content == b""
    assert source.prompts == []


@pytest.mark.parametrize("sdk", list(SDKS))
def test_a_chat_that_resumes_on_mount_gets_no_error(sdk: str) -> None:
    node = node_available()
    if node is None:
        pytest.skip("Node.js/npm not installed (CI installs them: apt-get install nodejs npm)")
    source = ScriptedSource(HELLO)
    with serve(create_app(source)) as server:
        done = subprocess.run(
            [node, str(JS / "chat_client.mjs"), server.url + "/api/chat", "Hi"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "AI_PACKAGE": sdk, "RESUME": "1"},
            check=False,
        )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["errors"] == []  # was ['Not Found']
    assert result["status"] == "ready"
    texts = [p["text"] for m in result["messages"] for p in m["parts"] if p["type"] == "text"]
    assert texts == ["Hi", "Hello."]
    assert len(source.prompts) == 1
