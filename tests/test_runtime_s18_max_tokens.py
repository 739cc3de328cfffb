"""A reply cut off at max_tokens (finish ``length``): in its text, it is the
answer marked ``truncated``; inside a call, the model is told the limit cut it
and to make the call smaller, once; cut there again, the run ends with
``RepairExhausted(reason="max_tokens")`` instead of asking for the same long
call until the repairs run out."""

from __future__ import annotations

import io

import pytest
from provider_support import provider_for

from streamtools.errors import RepairExhausted
from streamtools.events import CallError, Event, Final, Retry, TurnEnd
from streamtools.model import CallChunk, Chunk, FinishChunk, ReasoningChunk, TextChunk
from streamtools.runtime import Agent
from streamtools.runtime.console import ConsoleRenderer
from streamtools.runtime.hybrid import HybridAgent
from streamtools.testing import FakeServer, ScriptedModel
from streamtools.testing.fake_server import Reply, Wire
from streamtools.tools import tool
from streamtools.transcript import AssistantMessage

pytestmark = pytest.mark.anyio

written: list[tuple[str, str]] = []


@tool
def write(path: str, content: str) -> str:
    """Write a text file."""
    written.append((path, content))
    return f"wrote {len(content)} characters to {path}"


LONG_CALL = '<am:tool_call name="write"><path>a.txt</path><content>' + "word " * 40


def cut(text: str) -> list[Chunk]:
    return [TextChunk(text=text), FinishChunk(reason="length")]


async def run(agent: Agent | HybridAgent, prompt: str) -> list[Event]:
    async with agent.stream(prompt) as events:
        return [e async for e in events]


async def test_text_cut_at_max_tokens_is_the_answer_marked_truncated() -> None:
    model = ScriptedModel([cut("The answer is long and it was cu"), "Short and whole."])
    agent = Agent(model, [write])
    async with agent.stream("explain") as events:
        seen = [e async for e in events]
    assert seen[-1] == Final(text="The answer is long and it was cu", turns=1, truncated=True)
    assert events.result is not None and events.result.truncated
    assert events.result.text == "The answer is long and it was cu"
    whole = await agent.run("again")
    assert (whole.text, whole.truncated) == ("Short and whole.", False)


async def test_a_call_cut_at_max_tokens_is_told_why_and_a_shorter_one_runs() -> None:
    written.clear()
    short = '<am:tool_call name="write"><path>a.txt</path><content>part 1</content></am:tool_call>'
    model = ScriptedModel([cut(LONG_CALL), short, "Wrote part 1."])
    events = await run(Agent(model, [write]), "write a long file")
    retry = next(e for e in events if isinstance(e, Retry))
    assert retry.reason == "call_error"
    assert "max_tokens" in retry.message and "smaller calls" in retry.message
    assert "max_tokens" in str(model.requests[1].messages[-1].content)
    assert written == [("a.txt", "part 1")]
    assert events[-1] == Final(text="Wrote part 1.", turns=3)


async def test_a_call_cut_again_ends_the_run_instead_of_asking_again() -> None:
    """It was asked for again until ``max_repairs`` ran out: the same long call
    cut at the same place each time, one full request each."""
    model = ScriptedModel([cut("I will write it now. " + LONG_CALL)] * 5)
    with pytest.raises(RepairExhausted) as info:
        await Agent(model, [write], max_tokens=64, max_repairs=4).run("write a long file")
    assert info.value.reason == "max_tokens"
    assert "max_tokens (64)" in str(info.value) and "`write`" in str(info.value)
    assert len(model.requests) == 2
    transcript = info.value.transcript
    assert transcript is not None
    # the cut reply stays in the history the error carries, text and all
    last = transcript.messages[-1]
    assert isinstance(last, AssistantMessage) and "I will write it now." in last.text


async def test_no_repair_left_a_cut_call_ends_the_run_saying_max_tokens() -> None:
    model = ScriptedModel([cut("Sure. " + LONG_CALL)])
    with pytest.raises(RepairExhausted, match="raise max_tokens") as info:
        await Agent(model, [write], max_repairs=0).run("write a long file")
    assert info.value.reason == "max_tokens"
    assert len(model.requests) == 1


async def test_complete_calls_before_a_second_cut_still_run_and_go_back() -> None:
    written.clear()
    whole = '<am:tool_call name="write"><path>b.txt</path><content>b</content></am:tool_call>'
    model = ScriptedModel([cut(LONG_CALL), cut(whole + LONG_CALL), "Done with b."])
    events = await run(Agent(model, [write]), "write files")
    assert written == [("b.txt", "b")]
    assert [e.reason for e in events if isinstance(e, Retry)] == ["call_error"]
    assert TurnEnd(turn=2, reason="tool_calls") in events
    assert events[-1] == Final(text="Done with b.", turns=3)


async def test_a_call_cut_after_a_repair_of_another_kind_is_still_told_once() -> None:
    bad = '<am:tool_call name="write"><path>a.txt</path></am:tool_call>'  # content missing
    model = ScriptedModel([bad, cut(LONG_CALL), cut(LONG_CALL)])
    events: list[Event] = []
    with pytest.raises(RepairExhausted) as info:
        async with Agent(model, [write], max_repairs=5).stream("write") as stream:
            async for event in stream:
                events.append(event)
    assert info.value.reason == "max_tokens"
    messages = [e.message for e in events if isinstance(e, Retry)]
    assert len(messages) == 2
    assert "max_tokens" not in messages[0] and "max_tokens" in messages[1]


async def test_native_call_cut_at_max_tokens_is_told_once() -> None:
    args = '{"path": "a.txt", "content": "' + "word " * 40
    reply: list[Chunk] = [
        CallChunk(index=0, id="c1", name="write", arguments=args),
        FinishChunk(reason="length"),
    ]
    model = ScriptedModel([reply, reply])
    events: list[Event] = []
    with pytest.raises(RepairExhausted) as info:
        async with Agent(model, [write], native=True).stream("write") as stream:
            async for event in stream:
                events.append(event)
    assert info.value.reason == "max_tokens"
    assert [e.reason for e in events if isinstance(e, CallError)] == ["unterminated"] * 2
    retry = next(e for e in events if isinstance(e, Retry))
    assert "max_tokens" in retry.message and "tool-calling interface" in retry.message


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_over_http_a_length_finish_marks_the_answer(anyio_backend: str, wire: Wire) -> None:
    replies = [Reply(text="Half an answ", finish="length"), Reply(text="Whole.")]
    async with FakeServer(replies, wire=wire) as server:
        agent = Agent(provider_for(server), [write])
        first = await run(agent, "one")
        second = await run(agent, "two")
    assert first[-1] == Final(text="Half an answ", turns=1, truncated=True)
    assert second[-1] == Final(text="Whole.", turns=1)


async def test_a_hybrid_agent_passes_the_mark_on() -> None:
    select: list[Chunk] = [
        CallChunk(index=0, id="s", name="select_tools", arguments='{"names": ["write"]}'),
        FinishChunk(reason="tool_calls"),
    ]
    model = ScriptedModel([select, cut("Cut sho")])
    agent = HybridAgent(model, [write])
    async with agent.stream("go") as events:
        seen = [e async for e in events]
    assert seen[-1] == Final(text="Cut sho", turns=2, truncated=True)
    assert events.result is not None and events.result.truncated
    assert events.result.turns == 2


async def test_the_console_says_the_answer_was_cut() -> None:
    out = io.StringIO()
    console = ConsoleRenderer(out)
    for event in await run(Agent(ScriptedModel([cut("Half")]), [write]), "go"):
        console.render(event)
    assert "cut off at max_tokens" in out.getvalue()
    out = io.StringIO()
    console = ConsoleRenderer(out)
    for event in await run(Agent(ScriptedModel(["Whole"]), [write]), "go"):
        console.render(event)
    assert "cut off" not in out.getvalue()


async def test_json_object_answer_cut_at_max_tokens_is_the_answer_truncated() -> None:
    """The whole reply is one object there, the answer inside it: cut in the
    answer, the object is unterminated with no tool named. It is the answer, as
    prose cut off is in the other dialects, not a call to ask for again."""
    model = ScriptedModel([cut('{"thought": "easy", "final": {"content": "The long answ')])
    events = await run(Agent(model, [write], dialect="json_object"), "explain")
    assert events[-1] == Final(text="The long answ", turns=1, truncated=True)
    assert len(model.requests) == 1


async def test_json_object_call_or_thought_cut_at_max_tokens_is_repaired_once() -> None:
    action = '{"thought": "t", "action": {"tool": "write", "args": {"path": "a", "content": "x x'
    thought = '{"thought": "' + "hmm " * 30
    for reply in (action, thought):
        model = ScriptedModel([cut(reply), cut(reply)])
        events: list[Event] = []
        with pytest.raises(RepairExhausted) as info:
            async with Agent(model, [write], dialect="json_object").stream("go") as stream:
                async for event in stream:
                    events.append(event)
        assert info.value.reason == "max_tokens"
        retry = next(e for e in events if isinstance(e, Retry))
        assert "max_tokens" in retry.message


async def test_a_hybrid_selection_answer_cut_at_max_tokens_is_marked() -> None:
    """The selection turn's reply is the answer when it selects nothing."""
    model = ScriptedModel([cut("No tool needed: the answer is lon"), "Whole."])
    agent = HybridAgent(model, [write])
    first = await agent.run("explain")
    assert first.text == "No tool needed: the answer is lon"
    assert (first.truncated, first.turns) == (True, 1)
    events = await run(agent, "again")
    assert events[-1] == Final(text="Whole.", turns=1)


async def test_a_reply_that_spent_max_tokens_thinking_is_told_so() -> None:
    """Nothing but reasoning, cut at the limit: "your reply was empty" would not
    tell the model why; the re-prompt says the limit was spent on reasoning."""
    thinking: list[Chunk] = [ReasoningChunk(text="Hm " * 20), FinishChunk(reason="length")]
    model = ScriptedModel([thinking, "Briefly: yes."])
    events = await run(Agent(model, [write]), "is it?")
    retry = next(e for e in events if isinstance(e, Retry))
    assert retry.reason == "empty_reply"
    assert "output token limit" in retry.message and "reasoning" in retry.message
    assert events[-1] == Final(text="Briefly: yes.", turns=2)
    plain = await run(Agent(ScriptedModel(["", "Yes."]), [write]), "is it?")
    told = next(e for e in plain if isinstance(e, Retry))
    assert "token limit" not in told.message and "was empty" in told.message
