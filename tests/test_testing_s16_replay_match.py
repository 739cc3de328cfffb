"""``Replay(path, match_requests=True)``: each request is checked against the
one recorded for that call, as a cassette library matches requests, so a test
whose agent now asks something else fails, naming the first difference,
instead of passing on answers to questions no longer asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamtools.errors import UsageError
from streamtools.model import ChatMessage, ModelRequest, TextChunk
from streamtools.runtime import Agent, Replay, record
from streamtools.runtime.recording import Header, encode_chunk, encode_header
from streamtools.testing import ScriptedModel
from streamtools.tools import tool

pytestmark = pytest.mark.anyio

CALL = '<am:tool_call name="add"><a>2</a><b>3</b></am:tool_call>'
SYSTEM = "You add numbers for the user."


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(name="add")
def add_wrongly(a: int, b: int) -> int:
    """Add two integers."""
    return a + b + 1


async def _session(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    model = record(ScriptedModel([CALL, "It is 5."]), path)
    await Agent(model, [add], system=SYSTEM, temperature=0.2).run("What is 2 + 3?")
    return path


async def test_the_same_agent_replays_its_recording(tmp_path: Path) -> None:
    path = await _session(tmp_path)
    replay = Replay(path, match_requests=True)
    result = await Agent(replay, [add], system=SYSTEM, temperature=0.2).run("What is 2 + 3?")
    assert result.text == "It is 5." and replay.remaining == 0


async def test_a_changed_prompt_fails_on_the_first_call(tmp_path: Path) -> None:
    path = await _session(tmp_path)
    replay = Replay(path, match_requests=True)
    agent = Agent(replay, [add], system="You add numbers for the admin.", temperature=0.2)
    with pytest.raises(UsageError) as raised:
        await agent.run("What is 2 + 3?")
    message = str(raised.value)
    assert f"{path}: call 1 was recorded for another request" in message
    at = SYSTEM.index("user")
    assert f"request.messages[0].content differs at character {at}:" in message
    assert "numbers for the user." in message and "numbers for the admin." in message
    assert replay.requests == []  # nothing was played for it

    # without matching, the same recording plays whatever is asked
    result = await Agent(Replay(path), [add], system="Other.").run("Anything?")
    assert result.text == "It is 5."


async def test_a_changed_tool_result_fails_on_the_call_that_sends_it(tmp_path: Path) -> None:
    path = await _session(tmp_path)
    replay = Replay(path, match_requests=True)
    agent = Agent(replay, [add_wrongly], system=SYSTEM, temperature=0.2)
    with pytest.raises(UsageError, match=r"call 2 was recorded for another request") as raised:
        await agent.run("What is 2 + 3?")
    assert "request.messages[" in str(raised.value) and "differs at character" in str(raised.value)
    assert len(replay.requests) == 1


async def test_other_options_and_messages_are_named(tmp_path: Path) -> None:
    path = await _session(tmp_path)
    with pytest.raises(UsageError, match=r"\(request.temperature: recorded 0.2, sent 0.7\)"):
        await Agent(Replay(path, match_requests=True), [add], system=SYSTEM, temperature=0.7).run(
            "What is 2 + 3?"
        )
    [segment] = [Header(request=ModelRequest(messages=(ChatMessage(role="user", content="a"),)))]
    one = tmp_path / "one.jsonl"
    one.write_bytes(encode_header(segment) + encode_chunk(TextChunk(text="x"), 0.1))
    two = ModelRequest(
        messages=(ChatMessage(role="user", content="a"), ChatMessage(role="user", content="b"))
    )
    with pytest.raises(UsageError, match=r"\(request.messages: 1 recorded, 2 sent\)"):
        async with Replay(one, match_requests=True).stream(two):
            pytest.fail("not played")  # pragma: no cover


async def test_a_header_with_no_request_matches_any(tmp_path: Path) -> None:
    path = tmp_path / "bare.jsonl"
    path.write_bytes(encode_header(Header()) + encode_chunk(TextChunk(text="Hi"), 0.1))
    replay = Replay(path, match_requests=True)
    async with replay.stream(ModelRequest(messages=())) as chunks:
        assert [c async for c in chunks] == [TextChunk(text="Hi")]
