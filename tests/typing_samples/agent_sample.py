"""A user's agent loop: stream events and narrow them, run to the result."""

from __future__ import annotations

from typing import Any, assert_never, assert_type

import anyio

from streamtools import (
    Agent,
    ArgsDelta,
    AssistantMessage,
    CallEnd,
    CallError,
    CallStart,
    Event,
    Final,
    Finish,
    HybridAgent,
    ReasoningDelta,
    ReasoningRetracted,
    Retry,
    RunResult,
    StreamError,
    SystemMessage,
    TextDelta,
    ToolCall,
    ToolFailed,
    ToolProgress,
    ToolResult,
    ToolResultMessage,
    Transcript,
    TurnEnd,
    TurnStart,
    Usage,
    UserMessage,
    UseTool,
    decode_event,
    encode_events,
    tool,
)
from streamtools.testing import ScriptedModel


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def echo(text: str, times: int = 1) -> str:
    """Echo the text."""
    return text * times


def describe(event: Event) -> str:
    match event:
        case TextDelta(text=t):
            assert_type(t, str)
            return t
        case ReasoningDelta(text=t) | ReasoningRetracted(text=t):
            return t
        case CallStart(index=i, name=name):
            assert_type(i, int)
            return f"{i}:{name}"
        case ArgsDelta(delta=d):
            return d
        case CallEnd(name=name, arguments=arguments):
            assert_type(arguments, dict[str, Any])
            return f"{name}({arguments})"
        case CallError(name=name, reason=reason):
            assert_type(name, str | None)
            return f"{name}: {reason}"
        case Finish(reason=reason, stop_sequence=stop):
            assert_type(stop, str | None)
            return reason
        case TurnStart(turn=n) | TurnEnd(turn=n):
            return str(n)
        case ToolResult(content=content):
            return content
        case ToolFailed(kind=kind, message=message):
            return f"{kind}: {message}"
        case ToolProgress(progress=progress, total=total, message=message):
            assert_type(total, float | None)
            return f"{progress:g}/{total}: {message}"
        case Retry(reason=reason):
            return reason
        case Usage(input_tokens=tokens):
            assert_type(tokens, int | None)
            return str(tokens)
        case StreamError(kind=kind):
            return kind
        case Final(text=text, turns=turns, truncated=truncated):
            assert_type(turns, int)
            assert_type(truncated, bool)
            return text
        case _:
            assert_never(event)


async def main() -> None:
    model = ScriptedModel(['<am:tool_call name="add"><a>2</a><b>3</b></am:tool_call>', "5."])
    agent = Agent(model, [add], dialect="am_xml", max_turns=4, tool_choice=UseTool("add"))
    async with agent.stream("What is 2 + 3?") as events:
        async for event in events:
            assert_type(event, Event)
            if isinstance(event, CallEnd):
                assert_type(event, CallEnd)
                print(event.arguments["a"])
            elif isinstance(event, TextDelta | ReasoningDelta):
                print(event.text)
            print(describe(event))
        assert_type(events.usage, Usage)
        assert_type(events.result, RunResult | None)

    result = await Agent(ScriptedModel(["Hi."]), [add]).run("Hello")
    assert_type(result, RunResult)
    assert_type(result.text, str)
    assert_type(result.transcript, Transcript)
    assert_type(result.turns, int)
    assert_type(result.usage, Usage)
    assert_type(result.truncated, bool)
    assert_type(result.usage.input_tokens, int | None)

    for message in result.transcript.messages:
        match message:
            case UserMessage(content=content) | SystemMessage(content=content):
                assert_type(content, str)
            case AssistantMessage(text=text, calls=calls):
                assert_type(text, str)
                for call in calls:
                    assert_type(call, ToolCall)
                    assert_type(call.arguments, dict[str, Any])
            case ToolResultMessage(content=content, is_error=is_error):
                assert_type(is_error, bool)
            case _:
                assert_never(message)
    lines = encode_events([Final(text="x", turns=1)])
    assert_type(decode_event(lines.splitlines()[0]), Event)

    transcript = Transcript()
    transcript.user("Hello")
    again = await Agent(ScriptedModel(["Hi."]), ToolRegistryLike()).run(transcript)
    assert_type(again, RunResult)

    listed = [add, echo]  # tools of different signatures, in a variable
    assert_type(await Agent(ScriptedModel(["Hi."]), listed).run("Hi"), RunResult)
    hybrid = HybridAgent(
        ScriptedModel(["Hi.", "Hi again."]), listed, max_turns=3, stop=["END"], think_open=False
    )
    assert_type(await hybrid.run("Hello"), RunResult)
    async with hybrid.stream("Hello") as more:
        async for event in more:
            assert_type(event, Event)


async def wrong_use() -> None:
    """The events come from the entered stream; iterating ``stream()`` itself is
    a type error (an unused ignore, were it accepted), not only a TypeError."""
    async for _ in Agent(ScriptedModel(["Hi."])).stream("Hi"):  # type: ignore[attr-defined]
        pass
    # HybridAgent checks the Agent keywords it passes on as Agent does
    HybridAgent(ScriptedModel([]), max_trns=3)  # type: ignore[call-arg]
    HybridAgent(ScriptedModel([]), max_turns="3")  # type: ignore[arg-type]


def ToolRegistryLike() -> list[Any]:
    return [add]


if __name__ == "__main__":
    anyio.run(main)
