"""A run that fails still spent tokens: ``BudgetExceeded``, ``RepairExhausted``
and ``ProviderError`` raised out of a run carry ``usage``, the sum of its
requests' counts, as ``RunResult.usage`` does for a run that succeeds. With
``run`` the caller had no way to what a failed run cost (the usage events went
by inside it), and a failing run is the one that loops and bills most."""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest

from streamtools.errors import BudgetExceeded, ProviderError, RepairExhausted
from streamtools.events import TurnStart, Usage
from streamtools.model import CallChunk, Chunk, FinishChunk, TextChunk, UsageChunk
from streamtools.runtime import Agent
from streamtools.runtime.hybrid import SELECT_TOOLS, HybridAgent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool

pytestmark = pytest.mark.anyio


@tool
def look(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def hermes(name: str, **arguments: Any) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def reply(text: str, tokens_in: int, tokens_out: int) -> list[Chunk]:
    usage = UsageChunk(input_tokens=tokens_in, output_tokens=tokens_out)
    return [TextChunk(text=text), FinishChunk(reason="stop"), usage]


async def test_budget_exceeded_carries_what_the_turns_used() -> None:
    model = ScriptedModel([reply(hermes("look", key=str(n)), 100 + n, 10) for n in range(3)])
    with pytest.raises(BudgetExceeded) as info:
        await Agent(model, [look], dialect="hermes", max_turns=3).run("loop")
    assert info.value.usage == Usage(input_tokens=303, output_tokens=30)
    # an error sent on (pickled from a worker) keeps it
    assert pickle.loads(pickle.dumps(info.value)).usage == info.value.usage


async def test_repair_exhausted_carries_the_repairs_too() -> None:
    broken = "<tool_call>{not json</tool_call>"
    model = ScriptedModel([reply(broken, 50, 5)] * 3)
    with pytest.raises(RepairExhausted) as info:
        await Agent(model, [look], dialect="hermes").run("go")
    assert info.value.usage == Usage(input_tokens=150, output_tokens=15)


async def test_a_provider_error_mid_run_carries_the_turns_before_it() -> None:
    model = ScriptedModel(
        [reply(hermes("look", key="a"), 70, 7), ProviderError("HTTP 500", status=500)]
    )
    with pytest.raises(ProviderError) as info:
        await Agent(model, [look], dialect="hermes").run("go")
    assert info.value.usage == Usage(input_tokens=70, output_tokens=7)


async def test_the_stream_raises_it_with_the_usage_too() -> None:
    model = ScriptedModel([reply(hermes("look", key="a"), 20, 2)] * 2)
    with pytest.raises(BudgetExceeded) as info:
        async with Agent(model, [look], dialect="hermes", max_turns=2).stream("go") as events:
            async for _ in events:
                pass
    assert info.value.usage == Usage(input_tokens=40, output_tokens=4)


async def test_a_hybrid_run_counts_its_selection_request_in_the_error() -> None:
    select: list[Chunk] = [
        CallChunk(index=0, id="s", name=SELECT_TOOLS, arguments='{"names": ["look"]}'),
        FinishChunk(reason="tool_calls"),
        UsageChunk(input_tokens=1000, output_tokens=1),
    ]
    model = ScriptedModel([select, *[reply(hermes("look", key=str(n)), 10, 1) for n in range(2)]])
    with pytest.raises(BudgetExceeded) as info:
        await HybridAgent(model, [look], dialect="hermes", max_turns=2).run("loop")
    assert info.value.usage == Usage(input_tokens=1020, output_tokens=3)


async def test_a_consumer_that_leaves_still_has_what_was_spent() -> None:
    """A UI's stop button: the run is cancelled, no result, no error; the
    tokens of the requests made until then are on the event stream."""
    model = ScriptedModel([reply(hermes("look", key="a"), 80, 8), reply("It is a.", 90, 9)])
    async with Agent(model, [look], dialect="hermes").stream("go") as events:
        async for event in events:
            if isinstance(event, TurnStart) and event.turn == 2:
                break
    assert events.result is None and events.error is None
    assert events.usage == Usage(input_tokens=80, output_tokens=8)
    async with Agent(ScriptedModel([reply("Done.", 5, 1)]), [look]).stream("go") as whole:
        async for _ in whole:
            pass
    assert whole.result is not None and whole.usage == whole.result.usage
    assert whole.usage == Usage(input_tokens=5, output_tokens=1)
