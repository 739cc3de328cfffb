"""A ``think_open`` reply that finishes with no ``</think>`` is read again at its
end as a reply without the option (``decoders.TextReader.end``): these are the
cases around that re-read, each compared with the same reply read as text from
its start, or with the reply as it was read before the re-read existed."""

from __future__ import annotations

import json

import pytest

from streamtools.events import Event, Final, Finish, ReasoningDelta, TextDelta, ToolResult
from streamtools.runtime import Agent
from streamtools.runtime.hybrid import HybridAgent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool
from streamtools.transcript import AssistantMessage, Transcript

pytestmark = pytest.mark.anyio

looked: list[str] = []


@tool
def look(city: str) -> str:
    """Look a city up."""
    looked.append(city)
    return f"{city}: sunny"


def call(city: str) -> str:
    body = json.dumps({"name": "look", "arguments": {"city": city}})
    return f"<tool_call>{body}</tool_call>"


async def run(agent: Agent) -> tuple[list[Event], Transcript]:
    looked.clear()
    transcript = Transcript()
    transcript.user("weather?")
    async with agent.stream(transcript) as events:
        return [e async for e in events], transcript


def replies(transcript: Transcript) -> list[AssistantMessage]:
    return [m for m in transcript.messages if isinstance(m, AssistantMessage)]


async def test_stop_at_call_cuts_a_reply_read_again_at_its_first_call() -> None:
    # A provider that ignores ``stop`` goes on past the call: a made-up result,
    # another call. Read as text, the reply is cut at its first call; read again
    # at its end (think_open, no </think>), every call in it ran and the made-up
    # result was kept as the model's text.
    first = "Checking. " + call("Oslo") + " Result: rainy. " + call("Rome")
    outcomes = []
    for think_open in (False, True):
        model = ScriptedModel([first, "It is sunny."], honor_stop=False)
        agent = Agent(model, [look], dialect="hermes", stop_at_call=True, think_open=think_open)
        events, transcript = await run(agent)
        reply = replies(transcript)[0]
        finishes = [e for e in events if isinstance(e, Finish)]
        outcomes.append((list(looked), reply.text, [c.name for c in reply.calls], finishes[0]))
        assert [e.content for e in events if isinstance(e, ToolResult)] == ["Oslo: sunny"]
        assert events[-1] == Final(text="It is sunny.", turns=2)
    assert outcomes[0] == outcomes[1]
    assert outcomes[1][:3] == (["Oslo"], "Checking. ", ["look"])


@pytest.mark.parametrize("lead", ["", "\n"])
async def test_a_reply_that_opens_its_own_think_streams_its_reasoning_once(lead: str) -> None:
    # The model writes <think> itself too and never closes it: read again, it is
    # reasoning still, and it was sent a second time (a UI showed it twice).
    model = ScriptedModel([lead + "<think>I think hard", "Paris.</think>Paris."])
    events, transcript = await run(Agent(model, [look], dialect="hermes", think_open=True))
    thought = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert thought == lead + "I think hard" + "Paris."
    assert not any(isinstance(e, TextDelta) and not e.text.strip() for e in events)
    assert events[-1] == Final(text="Paris.", turns=2)
    assert replies(transcript)[0].reasoning == lead + "I think hard"


async def test_a_hybrid_selection_answered_without_thinking_is_the_answer() -> None:
    # The selection turn read the reply as all reasoning: an empty answer, so the
    # work phase asked the model again, with every tool in full.
    model = ScriptedModel(["Paris is the capital.", "Asked again."], chunk_sizes=(1, 6))
    agent = HybridAgent(model, [look], dialect="hermes", think_open=True)
    async with agent.stream("capital of France?") as stream:
        events = [e async for e in stream]
    assert len(model.requests) == 1
    assert events[-1] == Final(text="Paris is the capital.", turns=1)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Paris is the capital."
    assert stream.result is not None
    [reply] = replies(stream.result.transcript)
    assert (reply.text, reply.reasoning) == ("Paris is the capital.", "")


@pytest.mark.parametrize("native", [False, True])
async def test_an_answer_at_a_stop_string_is_read_the_same_where_it_is_cut(native: bool) -> None:
    # A provider that honours ``stop`` ends the reply at "END" (finish stop, the
    # text before it), and the reply is read again as the answer; one that ignores
    # it is cut client-side at the same place, and the reply stayed reasoning: an
    # empty reply, asked again.
    seen = []
    for honor_stop in (True, False):
        model = ScriptedModel(["Paris END and more", "Asked again."], honor_stop=honor_stop)
        agent = Agent(model, [look], dialect="hermes", think_open=True, native=native,
                      stop=["END"])
        events, transcript = await run(agent)
        reply = replies(transcript)[0]
        seen.append((events[-1], len(model.requests), reply.text, reply.reasoning))
    assert seen[0] == seen[1] == (Final(text="Paris ", turns=1), 1, "Paris ", "")
