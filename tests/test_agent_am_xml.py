"""The default dialect end to end: the stop trick, am:request_tools, record then replay."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamtools.errors import RepairExhausted
from streamtools.events import (
    CallEnd,
    CallError,
    Event,
    Final,
    Retry,
    TextDelta,
    ToolResult,
    TurnEnd,
)
from streamtools.runtime import Agent, Replay, record
from streamtools.testing import ScriptedModel
from streamtools.tools import ToolRegistry, tool
from streamtools.transcript import ToolResultMessage

pytestmark = pytest.mark.anyio


def am(name: str, **params: object) -> str:
    body = "".join(f"<{k}>{v}</{k}>" for k, v in params.items())
    return f'<am:tool_call name="{name}">{body}</am:tool_call>'


@tool
async def weather(city: str, days: int = 1) -> str:
    """Forecast for a city."""
    return f"{city}: sunny for {days} day(s)"


@tool(name="kom.memory.v1.search")
async def search(query: str) -> list[str]:
    """Search memory."""
    return [f"note about {query}"]


async def collect(agent: Agent, prompt: str) -> list[Event]:
    async with agent.stream(prompt) as events:
        return [e async for e in events]


async def test_provider_cut_at_the_marker_completes_the_call() -> None:
    reply = "Let me check. " + am("weather", city="Paris", days=2) + "\n<am:tool_result>fake"
    model = ScriptedModel([reply, "Sunny."])  # honours stop like a provider
    agent = Agent(model, [weather], stop_at_call=True)
    events = await collect(agent, "Weather in Paris?")
    assert model.requests[0].stop == ("</am:tool_call>",)
    [call] = [e for e in events if isinstance(e, CallEnd)]
    assert call.arguments == {"city": "Paris", "days": 2}
    assert (
        ToolResult(index=0, id="call_1_0", name="weather", content="Paris: sunny for 2 day(s)")
        in events
    )
    # The call is written back with its closing marker restored; the result follows.
    history = model.requests[1].messages
    assert history[-2].role == "assistant"
    assert history[-2].content.endswith("</am:tool_call>")
    assert '<am:tool_result name="weather">Paris: sunny for 2 day(s)</am:tool_result>' in (
        history[-1].content
    )
    assert "fake" not in "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_past_call_goes_back_exactly_as_the_model_wrote_it() -> None:
    # DESIGN §5: text + raw call, no newline slipped in between ("Ok. \n<am:…").
    written = "Ok. " + am("weather", city="Oslo")
    model = ScriptedModel([written, "Sunny."])
    await Agent(model, [weather]).run("Weather?")
    assert model.requests[1].messages[-2].content == written

    # Cut by the stop marker: the same, with only the closing marker restored.
    model = ScriptedModel([written, "Sunny."])
    await Agent(model, [weather], stop_at_call=True).run("Weather?")
    assert model.requests[1].messages[-2].content == written


async def test_request_tools_adds_definitions_for_the_next_turn() -> None:
    model = ScriptedModel(
        [
            "I need memory. <am:request_tools>kom.memory.v1.search, nope</am:request_tools>",
            am("kom.memory.v1.search", query="paris"),
            "Found a note.",
        ]
    )
    agent = Agent(model, [weather, search], offer=["weather"], system="Be brief.")
    events = await collect(agent, "What do I know about Paris?")
    first, second = model.requests[0].messages[0].content, model.requests[1].messages[0].content
    assert first.startswith("Be brief.\n\n")
    assert '<am:tool name="weather"' in first
    assert '<am:tool name="kom.memory.v1.search"' not in first
    assert "- kom.memory.v1.search: Search memory." in first  # summarised
    # The summaries come after the full definitions (and after the user's system
    # text), where the renderer's ``more_tools`` puts them, not above the tools.
    assert first.index('<am:tool name="weather"') < first.index("# More tools")
    assert '<am:tool name="kom.memory.v1.search"' in second
    assert "These tools are now available: kom.memory.v1.search." in (
        model.requests[1].messages[-1].content
    )
    assert TurnEnd(turn=1, reason="tool_calls") in events
    assert (
        ToolResult(
            index=0, id="call_2_0", name="kom.memory.v1.search", content='["note about paris"]'
        )
        in events
    )
    assert events[-1] == Final(text="Found a note.", turns=3)


@pytest.mark.parametrize(
    "names",
    ['["kom.memory.v1.search"]', "'kom.memory.v1.search'", "[`kom.memory.v1.search`, nope]"],
)
async def test_request_tools_names_in_a_json_list_or_quotes(names: str) -> None:
    """``<am:request_tools>["kom.memory.v1.search"]</am:request_tools>``: the names
    split on commas were ``'["kom.memory.v1.search"]'``, no tool, so nothing was
    granted and the model was told the tool it named does not exist."""
    model = ScriptedModel(
        [f"<am:request_tools>{names}</am:request_tools>", "Granted.", "unused"]
    )
    await collect(Agent(model, [weather, search], offer=["weather"]), "Hi")
    assert '<am:tool name="kom.memory.v1.search"' in model.requests[1].messages[0].content
    assert model.requests[1].messages[-1].content == (
        "These tools are now available: kom.memory.v1.search."
    )


async def test_a_request_for_tools_that_grants_nothing_is_bounded_and_true() -> None:
    """``am:request_tools`` naming no tool that exists was answered "These tools are
    now available: (none found)." every time, up to ``max_turns``, where an unknown
    tool's call is repaired ``max_repairs`` times; under ``tool_choice="none"``
    the model was told "These tools are now available: search", none of which it
    could call. Now both are told the truth, as a bounded call-error repair."""
    ask = "<am:request_tools>nope</am:request_tools>"
    model = ScriptedModel([ask] * 8)
    agent = Agent(model, [weather, search], offer=["weather"], max_turns=8)
    events: list[Event] = []
    with pytest.raises(RepairExhausted) as info:
        async with agent.stream("Hi") as stream:
            async for event in stream:
                events.append(event)
    assert info.value.reason == "call_error" and info.value.turns == 3
    assert [e.reason for e in events if isinstance(e, Retry)] == ["call_error", "call_error"]
    assert model.requests[1].messages[-1].content == (
        "Unknown tool `nope`. The only tools you may call are: `weather`, "
        "`kom.memory.v1.search`."
    )
    assert events[-1] == TurnEnd(turn=3, reason="error")

    # with something to say beside it, the reply is the answer once repairs are spent
    model = ScriptedModel(["Let me look. " + ask] * 3)
    events = await collect(Agent(model, [weather, search], offer=["weather"]), "Hi")
    assert events[-1] == Final(text="Let me look. ", turns=3)

    ask = "<am:request_tools>kom.memory.v1.search</am:request_tools>"
    model = ScriptedModel([ask, "No tools, then."])
    agent = Agent(model, [weather, search], tool_choice="none")
    events = await collect(agent, "Hi")
    told = model.requests[1].messages[-1].content
    assert "now available" not in told and "no tools are available here" in told
    assert events[-1] == Final(text="No tools, then.", turns=2)


async def test_a_request_for_tools_already_offered_is_bounded() -> None:
    """Asking again for a tool already granted (or offered from the start) was
    answered "These tools are now available: …" each time, a turn of the run
    used up each time, on to ``max_turns``. It grants nothing, so it is repaired
    as a request for a tool that does not exist is: told so, ``max_repairs`` times."""
    ask = "<am:request_tools>kom.memory.v1.search</am:request_tools>"
    model = ScriptedModel([ask] * 8)
    agent = Agent(model, [weather, search], offer=["weather"], max_turns=8)
    events: list[Event] = []
    with pytest.raises(RepairExhausted) as info:
        async with agent.stream("Hi") as stream:
            async for event in stream:
                events.append(event)
    assert info.value.turns == 4  # granted once, then two repairs
    assert model.requests[1].messages[-1].content == (
        "These tools are now available: kom.memory.v1.search."
    )
    assert model.requests[2].messages[-1].content == (
        "The tool `kom.memory.v1.search` is already available to you: "
        "call it, do not ask for it."
    )
    assert [e.reason for e in events if isinstance(e, Retry)] == ["call_error", "call_error"]


async def test_a_tool_removed_mid_run_is_no_longer_offered() -> None:
    """``ToolRegistry.remove`` says an agent sees the change at its next turn; with
    ``offer`` (a HybridAgent's work phase) the offered tools were a copy made at
    the start, so a tool an MCP server withdrew stayed described in full, and
    its call was parsed as valid and failed only when run. Now it is unknown."""
    registry = ToolRegistry([weather, search])

    @tool
    def withdraw() -> str:
        """Withdraw the search tool."""
        registry.remove("kom.memory.v1.search")
        return "done"

    registry.add(withdraw)
    script = [am("withdraw"), am("kom.memory.v1.search", query="x"), "No search, then."]
    model = ScriptedModel(script)
    agent = Agent(model, registry, offer=["withdraw", "kom.memory.v1.search"])
    events = await collect(agent, "Hi")
    assert "Search memory." in model.requests[0].messages[0].content
    assert "Search memory." not in model.requests[1].messages[0].content
    [error] = [e for e in events if isinstance(e, CallError)]
    assert error.reason == "unknown_tool" and error.name == "kom.memory.v1.search"
    assert events[-1] == Final(text="No search, then.", turns=3)


async def test_record_a_session_then_replay_it_identically(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    script = ["Checking. " + am("weather", city="Oslo"), "Sunny in Oslo."]
    live = Agent(record(ScriptedModel(script, seed=5), path), [weather])
    recorded = await collect(live, "Oslo?")

    replay = Replay(path)
    replayed = await collect(Agent(replay, [weather]), "Oslo?")

    # Tool results interleave with the model's chunks as the scheduler runs
    # them (eager dispatch); everything else comes in the same order.
    def split(events: list[Event]) -> tuple[list[Event], list[Event]]:
        return [e for e in events if not isinstance(e, ToolResult)], [
            e for e in events if isinstance(e, ToolResult)
        ]

    assert split(replayed) == split(recorded)
    assert len(split(recorded)[1]) == 1
    assert replay.remaining == 0
    assert (
        replay.requests[1]
        .messages[-1]
        .content.startswith(
            '<am:tool_result name="weather">Oslo: sunny for 1 day(s)</am:tool_result>'
        )
    )


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), high=st.integers(1, 12))
async def test_any_chunking_gives_the_same_run(seed: int, high: int) -> None:
    script = [
        "Two things. " + am("weather", city="Rome", days=3) + " and " + am("weather", city="Oslo"),
        "Rome & Oslo: <b>sunny</b>.",
    ]
    model = ScriptedModel(script, seed=seed, chunk_sizes=(1, high))
    result = await Agent(model, [weather]).run("Rome and Oslo?")
    assert result.text == "Rome & Oslo: <b>sunny</b>."
    results = [m for m in result.transcript.messages if isinstance(m, ToolResultMessage)]
    assert [(r.call_id, r.content) for r in results] == [
        ("call_1_0", "Rome: sunny for 3 day(s)"),
        ("call_1_1", "Oslo: sunny for 1 day(s)"),
    ]


async def test_the_tool_that_must_be_called_is_offered_in_full() -> None:
    """``tool_choice`` naming a tool left out of ``offer`` (a ``HybridAgent`` told
    to use one its selection did not pick) forced a tool the model was not
    given: its definition was only summarised, the re-prompt listed the other
    tools, and the call itself was refused as an unknown tool. The tool that
    must be called is now offered in full from the first turn."""
    model = ScriptedModel([am("kom.memory.v1.search", query="paris"), "A note."])
    agent = Agent(model, [weather, search], offer=["weather"], tool_choice="kom.memory.v1.search")
    events = await collect(agent, "What do I know about Paris?")
    assert '<am:tool name="kom.memory.v1.search"' in model.requests[0].messages[0].content
    assert ToolResult(
        index=0, id="call_1_0", name="kom.memory.v1.search", content='["note about paris"]'
    ) in events
    assert events[-1] == Final(text="A note.", turns=2)
