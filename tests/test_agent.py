"""The agent loop against ScriptedModel: turns, eager dispatch, results, transcript, stop."""

from __future__ import annotations

import json
import math
from typing import Any

import anyio
import pytest

from streamtools.errors import ProviderError, UnknownDialectError, UsageError
from streamtools.events import (
    CallEnd,
    CallError,
    Event,
    Final,
    Finish,
    ReasoningDelta,
    StreamError,
    TextDelta,
    ToolFailed,
    ToolResult,
    TurnEnd,
    TurnStart,
    Usage,
)
from streamtools.model import (
    CallChunk,
    Chunk,
    FinishChunk,
    ModelRequest,
    TextChunk,
    UsageChunk,
    UseTool,
)
from streamtools.runtime import Agent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool
from streamtools.transcript import (
    AssistantMessage,
    ToolCall,
    ToolResultMessage,
    Transcript,
    UserMessage,
)

pytestmark = pytest.mark.anyio


def hermes(name: str, **arguments: Any) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def fail(reason: str) -> str:
    """Always raises."""
    raise RuntimeError(reason)


async def collect(agent: Agent, prompt: str | Transcript) -> list[Event]:
    async with agent.stream(prompt) as events:
        return [e async for e in events]


def kinds(events: list[Event]) -> list[str]:
    return [type(e).__name__ for e in events]


async def test_call_then_answer_events_transcript_and_requests() -> None:
    model = ScriptedModel(["Adding. " + hermes("add", a=2, b=3), "The sum is 5."])
    agent = Agent(model, [add], dialect="hermes", system="Be brief.")
    events = await collect(agent, "What is 2+3?")
    names = kinds(events)
    assert names[0] == "TurnStart" and names[-3:] == ["Finish", "TurnEnd", "Final"]
    assert names.count("TurnStart") == 2
    assert events[-1] == Final(text="The sum is 5.", turns=2)
    assert [e for e in events if isinstance(e, ToolResult)] == [
        ToolResult(index=0, id="call_1_0", name="add", content="5")
    ]
    assert TurnEnd(turn=1, reason="tool_calls") in events
    # The second request carries the system prompt, the call as written, the result.
    second = model.requests[1]
    assert second.messages[0].role == "system" and "Be brief." in second.messages[0].content
    assert second.messages[2].content.endswith(hermes("add", a=2, b=3))
    assert '"content": "5"' in second.messages[3].content
    assert second.stop == ()


async def test_run_returns_text_and_appends_to_a_given_transcript() -> None:
    transcript = Transcript()
    transcript.user("What is 2+3?")
    model = ScriptedModel([hermes("add", a=2, b=3), "5.", hermes("add", a=5, b=5), "10."])
    agent = Agent(model, [add], dialect="hermes")
    first = await agent.run(transcript)
    assert (first.text, first.turns) == ("5.", 2)
    assert first.transcript is transcript
    transcript.user("And 5+5?")
    second = await agent.run(transcript)
    assert second.text == "10."
    msgs = transcript.messages
    assert [type(m).__name__ for m in msgs] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "AssistantMessage",
    ]
    call = msgs[1]
    assert isinstance(call, AssistantMessage)
    assert call.calls == (
        ToolCall(
            id="call_1_0",
            name="add",
            arguments={"a": 2, "b": 3},
            raw=hermes("add", a=2, b=3),
            offset=0,  # the reply's first thing: no text before it
        ),
    )
    assert msgs[2] == ToolResultMessage(call_id="call_1_0", name="add", content="5")
    assert msgs[4] == UserMessage(content="And 5+5?")
    # Ids stay unique across runs on one transcript: the second run's call is
    # in the transcript's third reply.
    assert msgs[6] == ToolResultMessage(call_id="call_3_0", name="add", content="10")


async def test_tool_exception_goes_back_to_the_model() -> None:
    model = ScriptedModel([hermes("fail", reason="disk full"), "Sorry, it failed."])
    result = await Agent(model, [fail], dialect="hermes").run("go")
    assert result.text == "Sorry, it failed."
    failed = result.transcript.messages[2]
    assert failed == ToolResultMessage(
        call_id="call_1_0",
        name="fail",
        content="Tool 'fail' raised RuntimeError: disk full",
        is_error=True,
    )
    assert "disk full" in model.requests[1].messages[-1].content


async def test_eager_dispatch_result_arrives_while_the_model_streams() -> None:
    tail = " And now a long explanation follows while the tool is already running." * 3
    model = ScriptedModel([hermes("add", a=1, b=1) + tail, "2."], delay=0.002)
    events = await collect(Agent(model, [add], dialect="hermes"), "1+1")
    turn1 = events[: events.index(TurnEnd(turn=1, reason="tool_calls"))]
    result_at = next(i for i, e in enumerate(turn1) if isinstance(e, ToolResult))
    finish_at = next(i for i, e in enumerate(turn1) if isinstance(e, Finish))
    later_text = [e for e in turn1[result_at:] if isinstance(e, TextDelta)]
    assert result_at < finish_at
    assert later_text, "the model kept streaming after the tool had returned"


async def test_calls_of_one_turn_run_concurrently() -> None:
    started = {"a": anyio.Event(), "b": anyio.Event()}

    @tool
    async def meet(me: str, other: str) -> str:
        """Waits until the other call has started too."""
        started[me].set()
        await started[other].wait()
        return f"{me} met {other}"

    reply = hermes("meet", me="a", other="b") + hermes("meet", me="b", other="a")
    model = ScriptedModel([reply, "done"])
    events = await collect(Agent(model, [meet], dialect="hermes", tool_timeout=2), "go")
    contents = sorted(e.content for e in events if isinstance(e, ToolResult))
    assert contents == ["a met b", "b met a"]
    # Results go into the transcript in call order, whatever order they finished in.
    assert not any(isinstance(e, ToolFailed) for e in events)


async def test_stop_at_call_sends_the_marker_and_cuts_client_side() -> None:
    reply = "Checking. " + hermes("add", a=1, b=2) + " I will now invent the result: 99."
    honoured = ScriptedModel([reply, "3."])
    events = await collect(Agent(honoured, [add], dialect="hermes", stop_at_call=True), "1+2")
    assert honoured.requests[0].stop == ("</tool_call>",)
    assert ToolResult(index=0, id="call_1_0", name="add", content="3") in events
    assert "invent" not in "".join(e.text for e in events if isinstance(e, TextDelta))

    ignored = ScriptedModel([reply, "3."], honor_stop=False, chunk_sizes=(1, 2))
    agent = Agent(ignored, [add], dialect="hermes", stop_at_call=True)
    events = await collect(agent, "1+2")
    assert "invent" not in "".join(e.text for e in events if isinstance(e, TextDelta))
    assert Finish(reason="stop", stop_sequence="</tool_call>") in events
    assert ToolResult(index=0, id="call_1_0", name="add", content="3") in events
    assert ignored.open_streams == 0


async def test_user_stop_sequence_ends_the_reply() -> None:
    model = ScriptedModel(["Answer: 4\nObservation: made up"], honor_stop=False)
    result = await Agent(model, [add], dialect="hermes", stop=["\nObservation:"]).run("2+2")
    assert result.text == "Answer: 4"
    assert model.requests[0].stop == ("\nObservation:",)


async def test_a_plain_string_stop_is_one_stop_sequence() -> None:
    # A str is a Sequence[str] of its characters; it must not become ("O", "b", …).
    model = ScriptedModel(["Answer: 4 Observed\nObservation: made up"], honor_stop=False)
    result = await Agent(model, [add], dialect="hermes", stop="\nObservation:").run("2+2")
    assert result.text == "Answer: 4 Observed"
    assert model.requests[0].stop == ("\nObservation:",)


async def test_usage_is_reported_and_errors_surface() -> None:
    script: list[list[Chunk]] = [
        [TextChunk(text="ok"), FinishChunk(reason="stop"), UsageChunk(input_tokens=7)]
    ]
    events = await collect(Agent(ScriptedModel(script), [add], dialect="hermes"), "x")
    assert Usage(input_tokens=7) in events

    broken = ScriptedModel(
        [[TextChunk(text="partial"), FinishChunk(reason="error", message="cut")]]
    )
    agent = Agent(broken, [add], dialect="hermes")
    seen: list[Event] = []
    with pytest.raises(ProviderError, match="cut"):
        async with agent.stream("x") as stream:
            async for event in stream:
                seen.append(event)
    assert StreamError(kind="stream", message="cut") in seen


class Exploding:
    """A model whose stream raises mid-way, as a provider does on a cut connection."""

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest) -> Any:
        from contextlib import asynccontextmanager

        @asynccontextmanager
        async def opened() -> Any:
            async def chunks() -> Any:
                yield TextChunk(text="Hello")
                raise ProviderError("connection reset", status=None) from OSError(104)

            yield chunks()

        return opened()


async def test_provider_error_reaches_the_consumer_unwrapped() -> None:
    agent = Agent(Exploding(), [add], dialect="hermes")
    seen: list[Event] = []
    with pytest.raises(ProviderError, match="connection reset") as info:
        async with agent.stream("hi") as events:
            async for event in events:
                seen.append(event)
    assert seen[-1] == TurnEnd(turn=1, reason="error")
    assert isinstance(info.value.__cause__, OSError)  # the cause survives the hand-off


async def test_consumer_exception_comes_out_unwrapped() -> None:
    agent = Agent(ScriptedModel(["hello there"]), [add], dialect="hermes")
    with pytest.raises(KeyError):
        async with agent.stream("hi") as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    raise KeyError("mine")


async def test_native_mode_maps_call_chunks() -> None:
    script: list[str | list[Chunk]] = [
        [
            CallChunk(index=0, id="n1", name="add", arguments='{"a": 4,'),
            CallChunk(index=0, arguments=' "b": 5}'),
            FinishChunk(reason="tool_calls"),
        ],
        "9.",
    ]
    model = ScriptedModel(script)
    agent = Agent(model, [add], native=True, tool_choice="auto")
    events = await collect(agent, "4+5")
    assert (
        CallEnd(index=0, id="n1", name="add", arguments={"a": 4, "b": 5}, raw='{"a": 4, "b": 5}')
        in events
    )
    assert ToolResult(index=0, id="n1", name="add", content="9") in events
    first = model.requests[0]
    assert first.tools is not None and [t.name for t in first.tools] == ["add"]
    assert first.tool_choice == "auto"
    assert model.requests[1].messages[-2].tool_calls[0].id == "n1"
    assert events[-1] == Final(text="9.", turns=2)
    assert TurnStart(turn=2) in events


@pytest.mark.parametrize("choice", ["required", "add"])
async def test_native_forced_choice_is_lifted_once_a_call_has_run(
    anyio_backend: str, choice: str
) -> None:
    """A native API that is sent ``required`` (or a named tool) must call a tool:
    sent again after the call ran, the model could never answer, and the run
    would end in ``BudgetExceeded``. The requirement holds until a call has run."""
    call: list[Chunk] = [
        CallChunk(index=0, id="n1", name="add", arguments='{"a": 1, "b": 2}'),
        FinishChunk(reason="tool_calls"),
    ]
    model = ScriptedModel(["No call.", call, "3."])
    events = await collect(Agent(model, [add], native=True, tool_choice=choice), "1+2?")
    assert events[-1] == Final(text="3.", turns=3)
    forced = model.requests[0].tool_choice
    assert forced == choice or getattr(forced, "name", None) == choice
    # the re-prompt after the answer without a call is still forced; the answer is not
    assert [r.tool_choice for r in model.requests] == [forced, forced, "auto"]


@pytest.mark.parametrize(
    ("choice", "told"),
    [("required", "must call at least one of the tools"), ("add", "must call the tool `add`")],
)
async def test_prompt_mode_tells_the_model_of_a_forced_choice_until_its_call_ran(
    choice: str, told: str
) -> None:
    """A prompt dialect has no tool_choice field: the model is told, in the last
    user message of the first request, not only after a reply without the call
    (a turn lost); once the call has run, the answer is free again."""
    model = ScriptedModel([hermes("fail", reason="x"), hermes("add", a=1, b=2), "3."])
    events = await collect(Agent(model, [add, fail], dialect="hermes", tool_choice=choice), "1+2?")
    assert events[-1] == Final(text="3.", turns=3)
    lasts = [r.messages[-1].content for r in model.requests]
    # "required" is met by the first call (to fail); "add" only by the call to add
    expected = [True, False, False] if choice == "required" else [True, True, False]
    assert [told in last for last in lasts] == expected
    assert all(told not in m.content for r in model.requests for m in r.messages[:-1])
    call: list[Chunk] = [
        CallChunk(index=0, id="n1", name="add", arguments='{"a": 1, "b": 2}'),
        FinishChunk(reason="tool_calls"),
    ]
    native = ScriptedModel([call, "3."])
    await collect(Agent(native, [add], native=True, tool_choice=choice), "1+2?")
    assert told not in native.requests[0].messages[-1].content  # the field says it there


async def test_request_options_and_argument_checks() -> None:
    model = ScriptedModel(["hi"])
    agent = Agent(
        model, [add], dialect="hermes", temperature=0.2, max_tokens=64, top_p=0.9, seed=7
    )
    await agent.run("x")
    request = model.requests[0]
    assert (request.temperature, request.max_tokens) == (0.2, 64)
    assert (request.top_p, request.seed, request.top_k) == (0.9, 7, None)
    assert request.tools is None and request.tool_choice is None  # prompt mode
    with pytest.raises(UsageError, match="tool_choice must be"):
        Agent(model, [add], tool_choice=UseTool(""))
    with pytest.raises(UsageError, match="tool_choice must be"):  # no such tool: at the run
        await Agent(model, [add], tool_choice="sometimes").run("x")
    with pytest.raises(UsageError, match="max_turns must be at least 1"):
        Agent(model, [add], max_turns=0)
    with pytest.raises(UnknownDialectError):
        Agent(model, [add], dialect="smoke_signals")


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("max_concurrency", 0),  # every call waited for a slot forever
        ("tool_timeout", math.nan),  # an exception group from anyio, mid-run
        ("tool_timeout", 0),
        ("tool_timeout", -1.0),
        ("time_budget", math.nan),  # anyio's ValueError, mid-run
        ("time_budget", -1.0),
        ("max_concurrency", 2.5),  # anyio's TypeError, at the first run
        ("max_turns", math.nan),  # no turn was ever the last: the loop had no bound
        ("max_repairs", None),  # a TypeError when a call first needed repair, mid-run
        ("max_repairs", math.nan),  # no repair, without a word
        ("max_repairs", -1),
        # sent as null (msgspec's NaN and infinity): the server's default, without a word
        ("temperature", math.nan),
        ("top_p", math.inf),
        ("presence_penalty", -math.inf),
        ("frequency_penalty", math.nan),
    ],
)
def test_limits_that_cannot_work_are_refused_when_the_agent_is_made(
    option: str, value: float
) -> None:
    with pytest.raises(UsageError, match=f"{option} must be"):
        options: dict[str, Any] = {option: value}
        Agent(ScriptedModel(["hi"]), [add], **options)


@pytest.mark.parametrize("stop", ["", ["STOP", ""], [7]])
def test_a_stop_string_that_cannot_work_is_refused_when_the_agent_is_made(stop: Any) -> None:
    """It was refused only by the first run's parser."""
    with pytest.raises(UsageError, match="stop strings must be non-empty str"):
        Agent(ScriptedModel(["hi"]), [add], stop=stop)


@pytest.mark.parametrize("native", [False, True])
async def test_finish_names_the_stop_string_the_provider_cut_at(
    anyio_backend: str, native: bool
) -> None:
    """The provider cut at the user's stop string (the parser never saw it): the
    turn's ``Finish`` still names it, in prompt mode as in native mode."""
    agent = Agent(ScriptedModel(["hello STOP more"]), [add], stop="STOP", native=native)
    events = await collect(agent, "go")
    (finish,) = [e for e in events if isinstance(e, Finish)]
    assert finish == Finish(reason="stop", stop_sequence="STOP")
    assert events[-1] == Final(text="hello ", turns=1)


@pytest.mark.parametrize("native", [False, True])
async def test_tool_choice_none_runs_no_tool(anyio_backend: str, native: bool) -> None:
    """No tool is shown, and a call the model writes anyway (copying its history)
    does not run: it is an unknown tool's error, and the model is told so."""
    call_text = '<am:tool_call name="add"><a>1</a><b>2</b></am:tool_call>'
    native_call: list[Chunk] = [
        CallChunk(index=0, id="c1", name="add", arguments='{"a": 1, "b": 2}'),
        FinishChunk(reason="tool_calls"),
    ]
    model = ScriptedModel([native_call if native else call_text, "Three, without tools."])
    events = await collect(Agent(model, [add], tool_choice="none", native=native), "1+2?")
    assert not [e for e in events if isinstance(e, ToolResult | ToolFailed)]
    (error,) = [e for e in events if isinstance(e, CallError)]
    assert error.name == "add" and error.reason == "unknown_tool"
    assert model.requests[0].tools is None and "add" not in str(model.requests[0].messages[0])
    assert events[-1] == Final(text="Three, without tools.", turns=2)


async def test_history_is_sent_back_as_the_model_wrote_it(anyio_backend: str) -> None:
    """Text around a call and a second call cut off by the token limit: the next
    request carries the reply exactly as written (the cut call after the good
    one, not before it, where it would swallow it)."""
    call = '<am:tool_call name="add"><a>1</a><b>2</b></am:tool_call>'
    reply = f"Adding. {call} Then more. <am:tool_call name=\"add\"><a>4"
    cut: list[Chunk] = [TextChunk(text=reply), FinishChunk(reason="length")]
    model = ScriptedModel([cut, "3."])
    events = await collect(Agent(model, [add], dialect="am_xml", max_repairs=0), "1+2?")
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["3"]
    assistant = next(m for m in model.requests[1].messages if m.role == "assistant")
    assert assistant.content == reply


async def test_think_open_starts_each_reply_inside_reasoning() -> None:
    """A chat template that ends the prompt with ``<think>`` (DeepSeek-R1, QwQ):
    the reply is ``reasoning…</think>answer``. With ``think_open`` the call the
    model drafts in its reasoning is reasoning and does not run; the one after
    ``</think>`` does, and the answer is only the text after ``</think>``."""
    draft = "I could " + hermes("add", a=1, b=1) + " but no.</think>"
    model = ScriptedModel([draft + "Adding. " + hermes("add", a=2, b=3), "hm</think>It is 5."])
    agent = Agent(model, [add], dialect="hermes", think_open=True)
    events = await collect(agent, "What is 2+3?")
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["5"]
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert reasoning == "I could " + hermes("add", a=1, b=1) + " but no.hm"
    assert events[-1] == Final(text="It is 5.", turns=2)
    # without the option the drafted call runs too, and </think> is shown as text
    model = ScriptedModel([draft + "Adding. " + hermes("add", a=2, b=3), "hm</think>It is 5."])
    events = await collect(Agent(model, [add], dialect="hermes"), "What is 2+3?")
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["2", "5"]


async def test_think_open_reads_native_text_too() -> None:
    """``think_open`` with ``native=True`` was a ``UsageError``; native text is
    read by the same parser now, so the reply's reasoning is reasoning."""
    model = ScriptedModel(["Say hi.</think>Hi!"])
    events = await collect(Agent(model, [add], native=True, think_open=True), "hi")
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Say hi."
    assert events[-1] == Final(text="Hi!", turns=1)


async def test_a_native_call_s_offset_counts_the_visible_text_only() -> None:
    """Native mode keeps the reply's visible text in the transcript, without the
    raw text (argument JSON) of a failed call; a later call's ``offset`` still
    counted that raw text, and placed the call inside the text after it (21,
    not 2, in ``AB`` + 30 characters)."""
    reply: list[Chunk] = [
        TextChunk(text="A"),
        CallChunk(index=0, id="x", name="nope", arguments='{"zzzzzzzzzzzz": 1}', done=True),
        TextChunk(text="B"),
        CallChunk(index=1, id="y", name="add", arguments='{"a": 1, "b": 2}', done=True),
        TextChunk(text="C" * 30),
        FinishChunk(reason="tool_calls"),
    ]
    model = ScriptedModel([reply, "3."])
    result = await Agent(model, [add], native=True, max_repairs=0).run("1 + 2?")
    message = result.transcript.messages[1]
    assert isinstance(message, AssistantMessage)
    assert message.text == "AB" + "C" * 30
    assert [(c.name, c.offset) for c in message.calls] == [("add", 2)]


@pytest.mark.parametrize("native", [False, True])
async def test_a_stop_string_ends_the_text_when_the_provider_ignores_stop(native: bool) -> None:
    """In native mode the text was not cut at the user's stop string when the
    provider ignored ``stop`` (``"It is 5. END and more"`` was the answer), where a
    prompt dialect's parser cuts it. Text held back as a stop string's start is
    still released when it was not one."""
    model = ScriptedModel(["It is 5. END and more"], honor_stop=False)
    async with Agent(model, [add], stop="END", native=native).stream("2 + 3?") as stream:
        events = [e async for e in stream]
    assert stream.result is not None and stream.result.text == "It is 5. "
    assert Finish(reason="stop", stop_sequence="END") in events
    model = ScriptedModel(["It is EN"], honor_stop=False)
    result = await Agent(model, [add], stop="END", native=native).run("?")
    assert result.text == "It is EN"


async def test_a_native_reply_s_think_tags_are_reasoning_with_a_stop_string() -> None:
    """Native mode reads ``<think>`` in the reply's text as a prompt dialect does
    (a server that does not split reasoning out sends it there); a stop string
    still cuts the text."""
    model = ScriptedModel(["\n<think>x</think>a b END c"], honor_stop=False)
    result = await Agent(model, [add], stop="END", native=True).run("?")
    assert result.text == "\na b "
    [message] = [m for m in result.transcript.messages if isinstance(m, AssistantMessage)]
    assert message.reasoning == "x"


async def test_tool_choice_none_shows_no_summary_either() -> None:
    """With ``offer`` (a HybridAgent's work phase) and ``tool_choice="none"``, the
    tools not offered in full were still listed in summary, with how to ask for
    them, though none may be called and every request is refused."""
    model = ScriptedModel(["Three."])
    await Agent(model, [add, fail], offer=["add"], tool_choice="none").run("1+2?")
    assert [m.role for m in model.requests[0].messages] == ["user"]
    assert "request_tools" not in str(model.requests[0].messages)


async def test_offer_given_as_one_name_is_that_tool() -> None:
    """``offer="add"`` was read as its characters (``["a", "d", "d"]``): no tool was
    offered in full, and ``add`` was only listed in summary."""
    model = ScriptedModel(["3."])
    await Agent(model, [add, fail], offer="add").run("1+2?")
    system = model.requests[0].messages[0].content
    assert '<am:tool name="add"' in system and '<am:tool name="fail"' not in system
