"""``ScriptedModel`` replies that fail, and replies computed from the request.

An exception as a reply is raised on opening the stream (a provider's error
status); an exception among a reply's chunks is raised there, after the chunks
before it (a connection cut mid-answer). A function of the request (sync or
async) answers what was asked, as pydantic-ai's ``FunctionModel`` does."""

from __future__ import annotations

import re

import anyio
import pytest

from streamtools.errors import ProviderError
from streamtools.events import TextDelta
from streamtools.model import ChatMessage, Chunk, FinishChunk, ModelRequest, TextChunk
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool

pytestmark = pytest.mark.anyio

REQ = ModelRequest(messages=(ChatMessage(role="user", content="hi"),))
CALL = '<am:tool_call name="add"><a>2</a><b>3</b></am:tool_call>'


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def test_an_exception_reply_is_raised_on_opening() -> None:
    limited = ProviderError("HTTP 429: slow down", status=429, retryable=True, retry_after=2.0)
    model = ScriptedModel([limited, "Hello"])
    with pytest.raises(ProviderError) as raised:
        async with model.stream(REQ):
            pytest.fail("a refused request opens no stream")  # pragma: no cover
    assert raised.value is limited
    assert model.requests == [REQ] and model.remaining == 1 and model.open_streams == 0
    async with model.stream(REQ) as chunks:  # asked again: the next reply
        got = [c async for c in chunks]
    assert "".join(c.text for c in got if isinstance(c, TextChunk)) == "Hello"


async def test_an_exception_among_the_chunks_breaks_the_stream_there() -> None:
    reset = ProviderError("connection reset")
    model = ScriptedModel([[TextChunk(text="The ans"), TextChunk(text="wer is"), reset]])
    got: list[Chunk] = []
    with pytest.raises(ProviderError, match="connection reset"):
        async with model.stream(REQ) as chunks:
            async for chunk in chunks:
                got.append(chunk)
    # the chunks before it, and no finish added after it
    assert got == [TextChunk(text="The ans"), TextChunk(text="wer is")]
    assert model.open_streams == 0


async def test_an_agent_fails_as_for_a_provider_that_broke_mid_answer() -> None:
    model = ScriptedModel([[TextChunk(text="The answer is"), ProviderError("connection reset")]])
    events = []
    with anyio.fail_after(5), pytest.raises(ProviderError, match="reset") as raised:
        async with Agent(model).stream("hi") as stream:
            async for event in stream:
                events.append(event)
    assert raised.value.partial_text == "The answer is"
    assert TextDelta(text="The answer is") in events


async def test_a_function_reply_answers_what_was_asked() -> None:
    """The second reply reads the tool result the agent sent back."""
    seen: list[ModelRequest] = []

    def from_result(request: ModelRequest) -> str:
        seen.append(request)
        found = re.search(r"<am:tool_result[^>]*>(\d+)<", request.messages[-1].content or "")
        assert found is not None, request.messages[-1].content
        return f"The sum is {found[1]}."

    model = ScriptedModel([CALL, from_result])
    result = await Agent(model, [add]).run("What is 2 + 3?")
    assert result.text == "The sum is 5."
    assert seen == [model.requests[1]]


async def test_an_async_function_reply_and_what_it_may_return() -> None:
    async def slow(request: ModelRequest) -> list[Chunk | Exception]:
        await anyio.lowlevel.checkpoint()
        return [TextChunk(text=f"{len(request.messages)} messages"), FinishChunk(reason="length")]

    def refuse(request: ModelRequest) -> Exception:
        return ProviderError("HTTP 401", status=401)

    def broken(request: ModelRequest) -> str:
        raise ProviderError("HTTP 500", status=500)

    model = ScriptedModel([slow, refuse, broken, lambda request: "Stop here. Not this."])
    async with model.stream(REQ) as chunks:
        got = [c async for c in chunks]
    assert got == [TextChunk(text="1 messages"), FinishChunk(reason="length")]
    for status in (401, 500):
        with pytest.raises(ProviderError) as raised:
            async with model.stream(REQ):
                pytest.fail("refused")  # pragma: no cover
        assert raised.value.status == status
    # a string a function returns is played as any string reply: split, stop honoured
    stopped = ModelRequest(messages=REQ.messages, stop=(" Not",))
    async with model.stream(stopped) as chunks:
        got = [c async for c in chunks]
    assert "".join(c.text for c in got if isinstance(c, TextChunk)) == "Stop here."
    assert got[-1] == FinishChunk(reason="stop", stop_sequence=" Not")
    assert len(model.requests) == 4 and model.remaining == 0

