"""A turn the server paused (Anthropic's ``pause_turn``) that the provider did not
go on with (past ``max_pauses``) is no answer: the agent ends the run with a
``ProviderError`` that says so, after a ``StreamError(kind="pause")``, instead of
a ``Final`` with the unfinished text (FakeServer over HTTP)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamtools.errors import ProviderError, TurnPaused
from streamtools.events import Event, Final, StreamError, TextDelta, TurnEnd
from streamtools.providers import AnthropicMessages
from streamtools.runtime.agent import Agent
from streamtools.runtime.hybrid import HybridAgent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply
from streamtools.tools import tool
from streamtools.transcript import AssistantMessage, Transcript

pytestmark = pytest.mark.anyio

WEB = {"tools": [{"type": "web_search_20250305", "name": "web_search"}]}


def ev(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


def answer(text: str, reason: str) -> Reply:
    """An SSE answer: a server tool's use, then ``text``, then ``reason``."""
    body = ev({"type": "message_start", "message": {"usage": {"input_tokens": 10}}})
    search = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    body += ev({"type": "content_block_start", "index": 0, "content_block": search})
    body += ev({"type": "content_block_stop", "index": 0})
    block = {"type": "text", "text": ""}
    body += ev({"type": "content_block_start", "index": 1, "content_block": block})
    delta = {"type": "text_delta", "text": text}
    body += ev({"type": "content_block_delta", "index": 1, "delta": delta})
    body += ev({"type": "content_block_stop", "index": 1})
    body += ev({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None},
                "usage": {"output_tokens": 5}})  # fmt: skip
    body += ev({"type": "message_stop"})
    return Reply(raw=body, content_type="text/event-stream")


PAUSED = answer("Searching more. ", "pause_turn")


@tool
def clock(zone: str = "UTC") -> str:
    """The time in a zone."""
    return f"noon {zone}"


async def events_and_error(agent: Agent | HybridAgent, prompt: Any) -> tuple[list[Event], Any]:
    seen: list[Event] = []
    with pytest.raises(ProviderError) as caught:
        async with agent.stream(prompt) as events:
            async for event in events:
                seen.append(event)
    return seen, caught.value


@pytest.mark.parametrize("native", [False, True])
async def test_a_pause_past_max_pauses_is_no_final_answer(anyio_backend: str, native: bool) -> None:
    async with FakeServer([PAUSED, PAUSED, answer("Sunny.", "end_turn")], wire="anthropic") as s:
        model = AnthropicMessages("m", base_url=s.base_url, max_pauses=1, extra_body=WEB)
        agent = Agent(model, [clock], native=native)
        transcript = Transcript()
        transcript.user("Weather?")
        seen, error = await events_and_error(agent, transcript)
        asked = len(s.requests)
    assert asked == 2  # the provider went on once (max_pauses=1), the agent never again
    assert not any(isinstance(e, Final) for e in seen)
    text = "".join(e.text for e in seen if isinstance(e, TextDelta))
    assert text == "Searching more. " * 2
    streamed = [e for e in seen if isinstance(e, StreamError)]
    assert [e.kind for e in streamed] == ["pause"]
    assert "pause_turn" in streamed[0].message and "unfinished" in streamed[0].message
    assert str(error) == streamed[0].message
    assert isinstance(error, TurnPaused)  # typed: a caller can catch it apart
    assert error.partial_text == text
    assert [e for e in seen if isinstance(e, TurnEnd)] == [TurnEnd(turn=1, reason="error")]
    # the unfinished reply is not in the history, as a broken stream's is not
    assert not any(isinstance(m, AssistantMessage) for m in transcript.messages)


async def test_a_paused_selection_turn_is_no_final_answer(anyio_backend: str) -> None:
    async with FakeServer([PAUSED], wire="anthropic") as s:
        model = AnthropicMessages("m", base_url=s.base_url, max_pauses=0, extra_body=WEB)
        seen, error = await events_and_error(HybridAgent(model, [clock]), "Weather?")
    assert not any(isinstance(e, Final) for e in seen)
    assert [e.kind for e in seen if isinstance(e, StreamError)] == ["pause"]
    assert "unfinished" in str(error) and error.partial_text == "Searching more. "
    assert isinstance(error, TurnPaused)


async def test_a_broken_stream_is_no_paused_turn(anyio_backend: str) -> None:
    # an error finish is a ProviderError, not the pause's subclass
    assert PAUSED.raw is not None
    cut = Reply(raw=PAUSED.raw.split(b"event: message_delta")[0], content_type="text/event-stream")
    async with FakeServer([cut], wire="anthropic") as s:
        model = AnthropicMessages("m", base_url=s.base_url, max_retries=0, extra_body=WEB)
        seen, error = await events_and_error(Agent(model, [clock]), "Weather?")
    assert [e.kind for e in seen if isinstance(e, StreamError)] == ["stream"]
    assert type(error) is ProviderError and error.partial_text == "Searching more. "


async def test_a_finished_turn_after_a_pause_is_the_answer(anyio_backend: str) -> None:
    async with FakeServer([PAUSED, answer("Sunny.", "end_turn")], wire="anthropic") as s:
        model = AnthropicMessages("m", base_url=s.base_url, max_pauses=1, extra_body=WEB)
        result = await Agent(model, [clock]).run("Weather?")
    assert result.text == "Searching more. Sunny."
