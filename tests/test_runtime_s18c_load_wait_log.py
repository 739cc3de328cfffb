"""A server still loading its model is waited for, and the wait is said.

78c8e96 made a llama-server answering ``503 Loading model`` be asked again
for up to ``load_wait`` seconds (300 by default), silently: ``streamtools
chat`` showed nothing at all for minutes. The first such answer is logged
now, once per request, as a warning (which Python prints with no logging set
up, as in ``streamtools chat``), saying it waits and for how long at most.
"""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest
from provider_support import HI, collect, provider_for

from streamtools.model import TextChunk
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

LLAMA = '{"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}'
SAID = (
    "OpenAI-compatible server answered HTTP 503: Loading model; "
    "waiting for the server to load its model, at most {} s (load_wait)"
)


def loading(times: int) -> list[Reply]:
    return [Reply(status=503, body=LLAMA, content_type="application/json")] * times


@pytest.mark.anyio
async def test_the_first_loading_answer_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="streamtools.providers")
    async with FakeServer([*loading(3), "Hello there"], wire="openai") as server:
        chunks = await collect(provider_for(server, retry_base=0.01, load_wait=30), HI)
        assert len(server.requests) == 4
    assert "".join(c.text for c in chunks if isinstance(c, TextChunk)) == "Hello there"
    said = [r for r in caplog.records if r.name == "streamtools.providers"]
    assert [(r.levelno, r.getMessage()) for r in said] == [(logging.WARNING, SAID.format(30))]


@pytest.mark.anyio
async def test_an_error_that_does_not_say_loading_is_not_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="streamtools.providers")
    overloaded = Reply(status=503, body='{"error": {"message": "server overloaded"}}')
    async with FakeServer([overloaded, "Hi"], wire="openai") as server:
        await collect(provider_for(server, retry_base=0.01), HI)
    assert not [r for r in caplog.records if r.name == "streamtools.providers"]


def test_streamtools_chat_shows_it() -> None:
    """At chat's own log level (none set up): the line is on stderr, the answer
    follows on stdout."""
    with FakeServer([*loading(2), "Hello there"]) as server:
        proc = subprocess.run(
            [
                sys.executable, "-m", "streamtools", "chat", "--base-url", server.base_url,
                "--model", "m", "--color", "never", "hi",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Hello there"
    assert proc.stderr.splitlines() == [SAID.format(300)]
