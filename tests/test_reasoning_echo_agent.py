"""An Agent in native mode against a thinking model's server: DeepSeek's and
Kimi's refuse (400) a request whose past replies with tool calls lack the
``reasoning_content`` they were streamed with, and OpenAI's API refuses a
message property it does not know. Real servers on 127.0.0.1 play both
(``reasoning_support.Server``): the reasoning goes back to the server and model
that streamed it, from a transcript saved and loaded or a recording replayed
too, and to no other.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from reasoning_support import (
    MODEL,
    STREAMED,
    Server,
    deepseek_check,
    multiply,
    openai_check,
    sse,
    two_tool_turns,
)

from streamtools.errors import ProviderError
from streamtools.providers import OpenAIChat
from streamtools.runtime import Agent, Replay, record
from streamtools.transcript import AssistantMessage, Transcript

pytestmark = pytest.mark.anyio


@pytest.fixture
def deepseek() -> Iterator[Server]:
    with Server(two_tool_turns(), deepseek_check(STREAMED)) as server:
        yield server


async def test_agent_with_two_tool_turns_passes_reasoning_back(deepseek: Server) -> None:
    provider = OpenAIChat(MODEL, base_url=deepseek.base_url, max_retries=0)
    result = await Agent(provider, [multiply], native=True).run("What is (6*7) squared?")
    assert deepseek.refused == []
    assert result.text == "1764"
    # the third request carries both replies' reasoning, each on its own message
    replies = [m for m in deepseek.bodies[2]["messages"] if m["role"] == "assistant"]
    assert [m["reasoning_content"] for m in replies] == [STREAMED["call_a"], STREAMED["call_b"]]


async def test_a_saved_transcript_goes_on_with_its_reasoning(deepseek: Server) -> None:
    # DeepSeek wants the reasoning of past tool-call replies in every later
    # turn: a transcript saved, loaded and carried on by a new provider has it
    first = OpenAIChat(MODEL, base_url=deepseek.base_url, max_retries=0)
    done = await Agent(first, [multiply], native=True).run("What is (6*7) squared?")
    loaded = Transcript.decode(done.transcript.encode())
    loaded.user("And halved?")
    deepseek.replies.append(sse([{"reasoning_content": "Half."}, {"content": "882"}], "stop"))
    again = OpenAIChat(MODEL, base_url=deepseek.base_url + "/", max_retries=0)
    result = await Agent(again, [multiply], native=True).run(loaded)
    assert deepseek.refused == []
    assert result.text == "882"
    sent = [m.get("reasoning_content") for m in deepseek.bodies[3]["messages"]]
    assert sent.count(STREAMED["call_a"]) == sent.count(STREAMED["call_b"]) == 1


async def test_another_server_gets_none_of_it(deepseek: Server) -> None:
    first = OpenAIChat(MODEL, base_url=deepseek.base_url, max_retries=0)
    done = await Agent(first, [multiply], native=True).run("What is (6*7) squared?")
    transcript = Transcript.decode(done.transcript.encode())
    transcript.user("And halved?")
    with Server([sse([{"content": "882"}], "stop")], openai_check) as openai:
        provider = OpenAIChat("gpt-5", base_url=openai.base_url, max_retries=0)
        result = await Agent(provider, [multiply], native=True).run(transcript)
        assert openai.refused == []
        assert result.text == "882"


async def test_the_same_server_under_another_model_gets_none_of_it(deepseek: Server) -> None:
    # Groq refuses ``reasoning`` for a model that does not reason, though
    # another of its models streamed it: the origin is the server and model
    first = OpenAIChat(MODEL, base_url=deepseek.base_url, max_retries=0)
    done = await Agent(first, [multiply], native=True).run("What is (6*7) squared?")
    deepseek.check = openai_check
    deepseek.replies.append(sse([{"content": "882"}], "stop"))
    done.transcript.user("And halved?")
    other = OpenAIChat("another-model", base_url=deepseek.base_url, max_retries=0)
    result = await Agent(other, [multiply], native=True).run(done.transcript)
    assert deepseek.refused == []
    assert result.text == "882"


async def test_a_replayed_recording_keeps_where_the_reasoning_came_from(
    deepseek: Server, tmp_path: Path
) -> None:
    path = tmp_path / "run.jsonl"
    live = record(OpenAIChat(MODEL, base_url=deepseek.base_url, max_retries=0), path)
    done = await Agent(live, [multiply], native=True).run("What is (6*7) squared?")
    replayed = await Agent(Replay(path), [multiply], native=True).run("What is (6*7) squared?")
    origins = [
        m.reasoning_origin for m in replayed.transcript.messages if isinstance(m, AssistantMessage)
    ]
    assert origins == [
        m.reasoning_origin for m in done.transcript.messages if isinstance(m, AssistantMessage)
    ]
    assert len(origins) == 3 and all(o is not None for o in origins)
    # and the replayed transcript goes on against the server that wrote it
    replayed.transcript.user("And halved?")
    deepseek.replies.append(sse([{"content": "882"}], "stop"))
    provider = OpenAIChat(MODEL, base_url=deepseek.base_url, max_retries=0)
    result = await Agent(provider, [multiply], native=True).run(replayed.transcript)
    assert deepseek.refused == []
    assert result.text == "882"


async def test_without_the_reasoning_deepseek_refuses(deepseek: Server) -> None:
    # the server is honest: the same run, told to send no reasoning, is refused
    provider = OpenAIChat(MODEL, base_url=deepseek.base_url, max_retries=0, send_reasoning=False)
    with pytest.raises(ProviderError) as caught:
        await Agent(provider, [multiply], native=True).run("What is (6*7) squared?")
    assert caught.value.status == 400
    assert deepseek.refused and "must be passed back" in deepseek.refused[0]

