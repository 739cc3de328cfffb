"""A server still loading its model is waited for, within ``load_wait``.

llama-server answers ``503 {"error": {"code": 503, "message": "Loading model",
"type": "unavailable_error"}}`` from the moment it listens until the model is
loaded (tens of seconds, minutes for a big one). The retries (``max_retries=2``
from ``retry_base=0.5``: about 1.5 s) gave up long before, so a request right
after starting the server failed. Such an answer is asked again outside
``max_retries`` until ``load_wait`` seconds have passed, then fails saying so.
Against a real server on 127.0.0.1 (``FakeServer``).
"""

from __future__ import annotations

import httpx
import pytest
from provider_support import HI, collect, provider_for

from streamtools.errors import ProviderError, UsageError
from streamtools.model import FinishChunk, TextChunk
from streamtools.providers import OpenAIChat
from streamtools.providers.failures import status_error, still_loading
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio

LLAMA = '{"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}'
LOADING = {
    "llama-server": LLAMA,
    # llama-server as some builds and wrappers send it, without the "error" object
    "unwrapped": '{"message": "Loading model", "type": "unavailable_error", "code": 503}',
    "tgi": '{"error": "Model org/m is currently loading", "estimated_time": 20.0}',
    "text": "Loading model",
}


def loading(body: str = LLAMA, times: int = 1) -> list[Reply]:
    kind = "application/json" if body.startswith("{") else "text/plain"
    return [Reply(status=503, body=body, content_type=kind)] * times


@pytest.mark.parametrize("body", LOADING.values(), ids=list(LOADING))
def test_what_says_loading(body: str) -> None:
    kind = "application/json" if body.startswith("{") else "text/plain"
    answer = httpx.Response(503, headers={"content-type": kind}, content=body.encode())
    error = status_error("server", ("text/event-stream",), answer, body.encode())
    assert still_loading(error)
    assert not still_loading(status_error("server", (), httpx.Response(500), body.encode()))


async def test_a_loading_server_is_waited_for_past_max_retries() -> None:
    """Four answers "Loading model", then the stream: more than ``max_retries``
    (2) allows, each asked again after a short wait."""
    async with FakeServer([*loading(times=4), "Hello there"], wire="openai") as server:
        chunks = await collect(provider_for(server, retry_base=0.01), HI)
        assert server.remaining == 0
        assert len(server.requests) == 5
    assert "".join(c.text for c in chunks if isinstance(c, TextChunk)) == "Hello there"
    assert isinstance(chunks[-1], FinishChunk) and chunks[-1].reason == "stop"


async def test_the_wait_is_bounded_and_the_error_says_the_model_was_loading() -> None:
    async with FakeServer(loading(times=200), wire="openai") as server:
        model = provider_for(server, retry_base=0.01, load_wait=0.3)
        with pytest.raises(ProviderError) as info:
            await collect(model, HI)
        asked = len(server.requests)
    # asked again (past max_retries: the test above), but not for ever; how often
    # in 0.3 s depends on the machine's load
    assert 1 < asked < 200
    error = info.value
    assert error.status == 503 and error.retryable
    message = str(error)
    assert message.startswith("OpenAI-compatible server answered HTTP 503: Loading model; ")
    assert "still loading the model" in message and "load_wait=0.3" in message


async def test_after_loading_the_usual_retries_still_apply() -> None:
    """Loading answers do not spend ``max_retries``: two 500s after them are
    still retried, the third error is raised."""
    failing = [Reply(status=500, body='{"error": {"message": "boom"}}')] * 3
    async with FakeServer([*loading(times=3), *failing, "late"], wire="openai") as server:
        with pytest.raises(ProviderError, match="boom") as info:
            await collect(provider_for(server, retry_base=0.01), HI)
        assert len(server.requests) == 6
    assert info.value.status == 500


@pytest.mark.parametrize(
    "reply",
    [
        # a 503 that does not say it is loading: the usual retries
        Reply(status=503, body='{"error": {"message": "server overloaded"}}'),
        # a page that says loading is no server's word that the model is
        Reply(status=503, body="<html><body>Loading...</body></html>"),
        # the server says not to ask again
        Reply(status=503, body=LLAMA, headers={"x-should-retry": "false"}),
    ],
    ids=["overloaded", "html", "should-not-retry"],
)
async def test_other_503s_keep_max_retries(reply: Reply) -> None:
    async with FakeServer([reply] * 5 + ["never"], wire="openai") as server:
        with pytest.raises(ProviderError):
            await collect(provider_for(server, retry_base=0.01), HI)
        asked = len(server.requests)
    assert asked == (1 if "x-should-retry" in reply.headers else 3)


async def test_load_wait_zero_does_not_wait() -> None:
    async with FakeServer([*loading(times=5), "Hello"], wire="openai") as server:
        with pytest.raises(ProviderError, match="Loading model") as info:
            await collect(provider_for(server, retry_base=0.01, load_wait=0), HI)
        assert len(server.requests) == 3
    assert "load_wait" not in str(info.value)


@pytest.mark.parametrize("bad", [-1.0, float("nan")])
def test_load_wait_must_be_seconds(bad: float) -> None:
    with pytest.raises(UsageError, match="load_wait"):
        OpenAIChat("m", base_url="http://127.0.0.1:9/v1", load_wait=bad)
