"""HybridAgent without a server: what a run gives when selection goes wrong."""

from __future__ import annotations

import pytest

from streamtools.errors import BudgetExceeded, ProviderError, RepairExhausted, UsageError
from streamtools.events import Event, Final, ReasoningDelta, StreamError, TurnEnd, TurnStart
from streamtools.model import CallChunk, FinishChunk, TextChunk, UseTool
from streamtools.runtime.hybrid import SELECT_TOOLS, HybridAgent
from streamtools.testing import ScriptedModel
from streamtools.tools import ToolRegistry, tool
from streamtools.transcript import ToolResultMessage

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def test_a_selection_stream_cut_by_an_error_is_not_the_answer() -> None:
    """Text, then the stream ends with an error and no ``select_tools`` call:
    the text was cut off, so the run fails as an Agent's does (``ProviderError``
    after a ``StreamError``), instead of ending with the fragment as ``Final``."""
    model = ScriptedModel(
        [[TextChunk(text="The answer is"), FinishChunk(reason="error", message="reset")]]
    )
    events: list[Event] = []
    with pytest.raises(ProviderError, match="reset"):
        async with HybridAgent(model, [add]).stream("1 + 2?") as stream:
            async for event in stream:
                events.append(event)
    assert StreamError(kind="stream", message="reset") in events
    assert events[-1] == TurnEnd(turn=0, reason="error")
    assert not any(isinstance(e, Final) for e in events)


def test_work_phase_keywords_are_checked_when_the_agent_is_made() -> None:
    """A misspelt or invalid keyword fails at once, not only in runs that
    happen to select a tool; ``native`` and ``offer`` are the hybrid's own."""
    model = ScriptedModel([])
    with pytest.raises(TypeError, match="max_turn"):
        HybridAgent(model, [add], max_turn=3)  # type: ignore[call-arg]
    with pytest.raises(UsageError, match="max_turns"):
        HybridAgent(model, [add], max_turns=0)
    with pytest.raises(UsageError, match="tool_choice"):
        HybridAgent(model, [add], tool_choice=UseTool(""))
    with pytest.raises(UsageError, match="native"):
        HybridAgent(model, [add], native=True)  # type: ignore[call-arg]
    with pytest.raises(UsageError, match="offer"):
        HybridAgent(model, [add], offer=["add"])  # type: ignore[call-arg]


async def test_the_time_budget_covers_the_selection_turn() -> None:
    """``time_budget`` bounds the whole run: a selection turn that streams on
    and on ends with ``BudgetExceeded``, the work phase never starts."""
    model = ScriptedModel(["word " * 200], chunk_sizes=(1, 1), delay=0.01)
    with pytest.raises(BudgetExceeded, match="selection"):
        await HybridAgent(model, [add], time_budget=0.2).run("hi")
    assert len(model.requests) == 1


async def test_a_selection_turn_the_time_budget_cuts_short_still_ends() -> None:
    """The selection turn started (``TurnStart(turn=0)``) and the budget ran out
    in it: a consumer pairing turns got no ``TurnEnd``, where an Agent's cut
    turn gets ``TurnEnd(reason="error")``."""
    model = ScriptedModel(["word " * 200], chunk_sizes=(1, 1), delay=0.01)
    turns: list[Event] = []
    with pytest.raises(BudgetExceeded, match="selection"):
        async with HybridAgent(model, [add], time_budget=0.1).stream("hi") as stream:
            async for event in stream:
                if isinstance(event, TurnStart | TurnEnd):
                    turns.append(event)
    assert turns == [TurnStart(turn=0), TurnEnd(turn=0, reason="error")]


async def test_the_work_phase_gets_what_is_left_of_the_time_budget() -> None:
    select = CallChunk(index=0, id="s", name=SELECT_TOOLS, arguments='{"names": ["add"]}')
    slow = [TextChunk(text="x")] * 20
    model = ScriptedModel([[*[TextChunk(text=".")] * 15, select], slow], delay=0.02)
    with pytest.raises(BudgetExceeded) as info:
        await HybridAgent(model, [add], time_budget=0.5).run("hi")
    assert len(model.requests) == 2  # 0.3 s of selection, then 0.4 s of work: over 0.5 s
    # the budget as given, not the work phase's share of it ("0.287491 s"); the
    # selection turn counted, as in Final
    assert str(info.value) == "time budget of 0.5 s ran out during turn 1"
    assert info.value.turns == 2


async def test_work_phase_failures_count_the_selection_turn() -> None:
    """``Final.turns`` counts the selection call, and so does a selection turn's
    ``BudgetExceeded`` (``turns=1``); the work phase's ``BudgetExceeded`` and
    ``RepairExhausted`` did not: three model calls were reported as two."""
    select = CallChunk(index=0, id="s", name=SELECT_TOOLS, arguments='{"names": ["add"]}')
    calls = [f'<am:tool_call name="add"><a>{n}</a><b>1</b></am:tool_call>' for n in range(3)]
    model = ScriptedModel([[select], *calls])
    with pytest.raises(BudgetExceeded) as budget:
        await HybridAgent(model, [add], max_turns=2).run("hi")
    assert len(model.requests) == 3 and budget.value.turns == 3
    assert str(budget.value).startswith("no final answer after 2 turns: max_turns=2 ")

    broken = '<am:tool_call name="add"><a>x</a></am:tool_call>'
    model = ScriptedModel([[select], broken, broken])
    with pytest.raises(RepairExhausted) as repair:
        await HybridAgent(model, [add], max_repairs=1).run("hi")
    assert len(model.requests) == 3 and repair.value.turns == 3
    assert repair.value.reason == "call_error"


async def test_think_open_applies_to_the_selection_turn_and_the_work() -> None:
    """``think_open`` reaches both phases: the selection turn's reasoning is not
    its answer, and a call drafted in the work phase's reasoning does not run."""
    model = ScriptedModel(["Just greet.\n</think>\n\nHello!"])
    events: list[Event] = []
    async with HybridAgent(model, [add], think_open=True).stream("hi") as stream:
        events = [e async for e in stream]
    assert ReasoningDelta(text="Just greet.\n") in merged(events)
    assert events[-1] == Final(text="\n\nHello!", turns=1)

    select = CallChunk(index=0, id="s", name=SELECT_TOOLS, arguments='{"names": ["add"]}')
    drafted = '<am:tool_call name="add"><a>1</a><b>1</b></am:tool_call></think>'
    work = drafted + '<am:tool_call name="add"><a>2</a><b>3</b></am:tool_call>'
    model = ScriptedModel([[TextChunk(text="Need add.</think>"), select], work, "</think>5"])
    result = await HybridAgent(model, [add], think_open=True).run("2+3?")
    assert result.text == "5"
    runs = [m for m in result.transcript.messages if isinstance(m, ToolResultMessage)]
    assert [m.content for m in runs] == ["5"]


def merged(events: list[Event]) -> list[Event]:
    out: list[Event] = []
    for e in events:
        if isinstance(e, ReasoningDelta) and out and isinstance(out[-1], ReasoningDelta):
            out[-1] = ReasoningDelta(text=out[-1].text + e.text)
        else:
            out.append(e)
    return out


@tool
def sub(a: int, b: int) -> int:
    """Subtract two integers."""
    return a - b


@pytest.mark.parametrize(
    ("names", "offered"),
    [
        ('"add, sub"', ["add", "sub"]),
        ('"sub,add"', ["add", "sub"]),
        ('" sub "', ["sub"]),
        ('"sub, nope"', ["sub"]),
        ('["add", " sub"]', ["add", "sub"]),
        # a JSON list inside the string, as models write it too
        ('"[\\"add\\", \\"sub\\"]"', ["add", "sub"]),
        ('" [\\"sub\\"] "', ["sub"]),
        ('"[add, sub]"', ["add", "sub"]),
        ('"\\"add\\", \'sub\'"', ["add", "sub"]),
        ('"[]"', []),
    ],
)
async def test_select_tools_names_as_one_comma_separated_string(
    names: str, offered: list[str]
) -> None:
    """Models send ``names`` as one string, ``"add, sub"``, as well as a list:
    that string matched no tool (it was taken as one name), so the work phase
    had summaries only, where ``<am:request_tools>add, sub</am:request_tools>``
    splits on commas. It is read the same way now."""
    select = CallChunk(index=0, id="s", name=SELECT_TOOLS, arguments=f'{{"names": {names}}}')
    model = ScriptedModel([[select], "done"])
    assert (await HybridAgent(model, [add, sub]).run("hi")).text == "done"
    system = model.requests[1].messages[0].content
    assert [n for n in ("add", "sub") if f'<am:tool name="{n}"' in system] == offered


class Stop(BaseException):
    """A tool's own signal, a ``BaseException`` so that ``except Exception`` lets it by."""


async def test_a_work_phase_tool_s_base_exception_comes_out_as_itself() -> None:
    """A tool of the work phase raising a ``BaseException`` that is not an
    ``Exception`` came out of the hybrid run in exception groups nested three
    deep; it is raised as itself, as by an ``Agent``."""

    @tool
    def halt() -> str:
        """Stop everything."""
        raise Stop("halt")

    select = CallChunk(index=0, id="s", name=SELECT_TOOLS, arguments='{"names": ["halt"]}')
    model = ScriptedModel([[select], '<am:tool_call name="halt"></am:tool_call>', "never"])
    with pytest.raises(Stop, match="halt"):
        await HybridAgent(model, [halt]).run("hi")
    assert len(model.requests) == 2


@pytest.mark.parametrize("honor_stop", [True, False])
async def test_the_selection_turn_honours_stop_and_max_tokens(honor_stop: bool) -> None:
    """The selection request carried neither the user's ``stop`` nor ``max_tokens``,
    and its text was not cut at a stop string: an answer given without selecting
    a tool ran on past it (``"It is 5. END and more"``), where an Agent's ends."""
    model = ScriptedModel(["It is 5. END and more"], honor_stop=honor_stop)
    agent = HybridAgent(model, [add], stop="END", max_tokens=50)
    result = await agent.run("2 + 3?")
    assert result.text == "It is 5. "
    assert model.requests[0].stop == ("END",)
    assert model.requests[0].max_tokens == 50


async def test_the_selection_turn_s_think_tags_are_reasoning_with_a_stop_string() -> None:
    """The selection turn's text is read as a native-mode reply is: ``<think>`` in
    it is reasoning (it was shown as text), and a stop string cuts it."""
    model = ScriptedModel(["\n<think>x</think>a b END c"], honor_stop=False)
    async with HybridAgent(model, [add], stop="END").stream("?") as stream:
        events = [e async for e in stream]
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "x"
    assert stream.result is not None and stream.result.text == "\na b "


async def test_tool_choice_none_shows_the_selection_turn_no_tool() -> None:
    """``tool_choice="none"`` was ignored by the selection turn: every tool was
    listed and ``select_tools`` offered. It is a plain chat request now."""
    model = ScriptedModel(["3, without tools."])
    result = await HybridAgent(model, [add], tool_choice="none").run("1 + 2?")
    request = model.requests[0]
    assert request.tools is None and request.tool_choice is None
    assert "add" not in str(request.messages)
    assert result.text == "3, without tools." and result.turns == 1


@pytest.mark.parametrize("choice", ["required", "add"])
async def test_a_required_tool_is_not_skipped_by_the_selection_turn(choice: str) -> None:
    """With a tool required, the selection turn asked ``tool_choice="auto"`` and took
    a reply without ``select_tools`` as the answer: the run ended with no tool
    run. ``select_tools`` is required now; a model that answers anyway goes on to
    the work phase, with every tool shown, whose re-prompt asks for the call."""
    call = '<am:tool_call name="add"><a>1</a><b>2</b></am:tool_call>'
    model = ScriptedModel(["It is 3.", "Still 3.", call, "3, checked."])
    events: list[Event] = []
    async with HybridAgent(model, [add], tool_choice=choice).stream("1 + 2?") as stream:
        async for event in stream:
            events.append(event)
    assert model.requests[0].tool_choice == "required"
    assert TurnEnd(turn=0, reason="retry") in events
    assert 'name="add"' in model.requests[1].messages[0].content  # shown in full
    assert model.requests[2].messages[-1].content.startswith("A ")  # the re-prompt
    assert isinstance(events[-1], Final) and events[-1].text == "3, checked."
    assert events[-1].turns == 4


@pytest.mark.parametrize("choice", ["auto", "required"])
async def test_a_hybrid_agent_with_no_tools_is_a_plain_chat(choice: str) -> None:
    """With no tools the selection turn offered ``select_tools`` with
    ``"enum": []``, an invalid schema, asked the model to choose among no tools
    and, under ``required``, forced that call and spent a second turn. There is
    nothing to select: the request is a plain chat and its reply the answer."""
    model = ScriptedModel(["Hello there.", "unused"])
    result = await HybridAgent(model, [], tool_choice=choice).run("hi")
    request = model.requests[0]
    assert request.tools is None and request.tool_choice is None
    assert SELECT_TOOLS not in str(request.messages)
    assert result.text == "Hello there." and result.turns == 1
    assert model.remaining == 1


async def test_tools_added_after_the_hybrid_agent_is_made_are_selected_from() -> None:
    """A registry filled after the agent is made (tools from an MCP server) is
    read at each run: made with no tools, the agent still selects once it has some."""
    select = CallChunk(index=0, id="s", name=SELECT_TOOLS, arguments='{"names": ["add"]}')
    model = ScriptedModel([[select], "3."])
    registry = ToolRegistry()
    agent = HybridAgent(model, registry)
    registry.add(add)
    result = await agent.run("1 + 2?")
    assert model.requests[0].tools is not None
    assert model.requests[0].tools[0].name == SELECT_TOOLS
    assert result.text == "3." and result.turns == 2
