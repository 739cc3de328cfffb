"""A model stream that fails mid-reply: the history the caller keeps, and what the error carries."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from streamtools.errors import ProviderError
from streamtools.model import FinishChunk, ModelRequest, TextChunk
from streamtools.runtime import Agent
from streamtools.runtime.hybrid import HybridAgent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool
from streamtools.transcript import AssistantMessage, ToolResultMessage, Transcript, UserMessage

pytestmark = pytest.mark.anyio


def hermes(name: str, **arguments: Any) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def sent_text(request: ModelRequest) -> str:
    return "\n".join(str(m.content) for m in request.messages)


async def test_a_reply_cut_by_an_in_band_error_stays_out_of_the_callers_history() -> None:
    """Turn 1 runs a tool; turn 2's stream breaks mid-sentence. The caller's
    transcript keeps turn 1 (the tool ran) but not the fragment, which is on the
    error; asking again with the same transcript does not show it to the model."""
    cut = "The sum is fi"
    model = ScriptedModel(
        [
            hermes("add", a=2, b=3),
            [TextChunk(text=cut), FinishChunk(reason="error", message="connection reset")],
            "The sum is 5.",
        ]
    )
    agent = Agent(model, [add], dialect="hermes")
    transcript = Transcript()
    transcript.user("2+3?")
    with pytest.raises(ProviderError, match="connection reset") as info:
        await agent.run(transcript)
    assert info.value.partial_text == cut
    assert info.value.transcript is transcript
    messages = transcript.messages
    assert isinstance(messages[-1], ToolResultMessage) and messages[-1].content == "5"
    assert not any(isinstance(m, AssistantMessage) and cut in m.text for m in messages)
    result = await agent.run(transcript)  # the chat asks again
    assert result.text == "The sum is 5."
    assert cut not in sent_text(model.requests[-1])
    assert [type(m) for m in transcript.messages] == [
        UserMessage,
        AssistantMessage,
        ToolResultMessage,
        AssistantMessage,
    ]


async def test_a_string_prompt_gets_its_history_on_the_error() -> None:
    model = ScriptedModel(
        [
            hermes("add", a=1, b=1),
            [TextChunk(text="Two"), FinishChunk(reason="error", message="overloaded")],
        ]
    )
    with pytest.raises(ProviderError) as info:
        await Agent(model, [add], dialect="hermes").run("1+1?")
    history = info.value.transcript
    assert history is not None
    assert [type(m) for m in history.messages] == [
        UserMessage,
        AssistantMessage,
        ToolResultMessage,
    ]
    assert info.value.partial_text == "Two"


class Exploding:
    """A model whose stream raises after some text, as a custom provider may."""

    @asynccontextmanager
    async def _opened(self) -> Any:
        async def chunks() -> Any:
            yield TextChunk(text="Hello th")
            raise ProviderError("connection reset")

        yield chunks()

    def stream(self, request: ModelRequest) -> Any:
        return self._opened()


async def test_a_stream_that_raises_keeps_its_text_on_the_error() -> None:
    transcript = Transcript()
    transcript.user("hi")
    with pytest.raises(ProviderError) as info:
        await Agent(Exploding(), [add], dialect="hermes").run(transcript)
    assert info.value.partial_text == "Hello th"
    assert info.value.transcript is transcript
    assert transcript.messages == [UserMessage(content="hi")]


async def test_a_hybrid_selection_cut_by_an_error_keeps_its_text_on_the_error() -> None:
    model = ScriptedModel(
        [[TextChunk(text="The answer is"), FinishChunk(reason="error", message="reset")]]
    )
    transcript = Transcript()
    transcript.user("1 + 2?")
    with pytest.raises(ProviderError) as info:
        await HybridAgent(model, [add]).run(transcript)
    assert info.value.partial_text == "The answer is"
    assert info.value.transcript is transcript
    assert transcript.messages == [UserMessage(content="1 + 2?")]


async def test_a_last_turn_cut_by_an_error_is_not_the_answer() -> None:
    """After repeats stopped tool use the model gets one last turn to answer; a
    stream that broke in it ended the run with the fragment as ``Final``."""
    fetch_call = hermes("add", a=1, b=2)
    model = ScriptedModel(
        [
            fetch_call,
            fetch_call,
            fetch_call,
            [TextChunk(text="The sum is"), FinishChunk(reason="error", message="reset")],
        ]
    )
    transcript = Transcript()
    transcript.user("1+2?")
    with pytest.raises(ProviderError, match="reset") as info:
        await Agent(model, [add], dialect="hermes").run(transcript)
    assert info.value.partial_text == "The sum is"
    assert not any(
        isinstance(m, AssistantMessage) and m.text == "The sum is" for m in transcript.messages
    )


class RaisesAfterACall:
    """A model whose stream writes a call, then raises (a custom provider, a replay)."""

    @asynccontextmanager
    async def _opened(self) -> Any:
        async def chunks() -> Any:
            yield TextChunk(text="Adding. " + hermes("add", a=2, b=3))
            await anyio.sleep(0.05)  # the call runs meanwhile
            raise ProviderError("connection reset")

        yield chunks()

    def stream(self, request: ModelRequest) -> Any:
        return self._opened()


async def test_calls_that_ran_before_a_stream_raised_stay_in_the_history() -> None:
    """They ran (a message sent, a file written): a chat that asks again must
    see them, lest the model make them again."""
    transcript = Transcript()
    transcript.user("2+3?")
    with pytest.raises(ProviderError):
        await Agent(RaisesAfterACall(), [add], dialect="hermes").run(transcript)
    assert [type(m) for m in transcript.messages] == [
        UserMessage,
        AssistantMessage,
        ToolResultMessage,
    ]
    result = transcript.messages[2]
    assert isinstance(result, ToolResultMessage) and result.content == "5"
