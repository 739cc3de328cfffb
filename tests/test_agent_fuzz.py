"""Fuzz: the agent loop over model replies made of anything (prose, markers,
whole, broken and half calls of the dialect, calls to missing tools, calls
whose tool raises or whose arguments are wrong), in every dialect and at any
chunking, and over native call deltas made of anything (split, repeated or
shared ids, reused indexes, late names, broken JSON, any finish). The run ends
with a result or with one of our errors, never another exception or a hang,
and its transcript pairs every call with exactly one result."""

from __future__ import annotations

from typing import Any

import anyio
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_parser_properties import FRAGMENTS, model_replies

from streamtools import Agent, RunResult
from streamtools.errors import StreamtoolsError
from streamtools.model import CallChunk, Chunk, FinishChunk, ReasoningChunk, TextChunk, UsageChunk
from streamtools.testing import ScriptedModel
from streamtools.tools import tool
from streamtools.transcript import AssistantMessage, ToolResultMessage


@tool
def search(q: str = "", n: int = 1) -> dict[str, object]:
    """Search."""
    if q == "boom":
        raise RuntimeError("boom")
    return {"q": q, "n": n}


@tool
def calc(a: float = 0, b: float = 0) -> float:
    """Divide."""
    return a / b  # b == 0: the tool raises


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search", {"q": "x"}),
    ("search", {"q": "boom"}),
    ("search", {"n": "many"}),  # invalid arguments
    ("calc", {"a": 1, "b": 0}),
    ("calc", {"a": 1, "b": 2}),
    ("nope", {}),  # no such tool
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    dialect=st.sampled_from(sorted(FRAGMENTS)),
    seed=st.integers(0, 99),
    turns=st.integers(1, 3),
)
def test_any_replies_end_in_a_result_or_our_error(
    data: st.DataObject, dialect: str, seed: int, turns: int
) -> None:
    script = [data.draw(model_replies(dialect, CALLS)) for _ in range(turns)] + ["done"]
    model = ScriptedModel(script, seed=seed, chunk_sizes=(1, 7))
    agent = Agent(model, [search, calc], dialect=dialect, max_turns=turns + 1, tool_timeout=5)

    async def run() -> RunResult | None:
        with anyio.fail_after(20):  # a hang fails the test instead of stalling it
            try:
                return await agent.run("go")
            except StreamtoolsError:  # repairs exhausted, turn limit: ours, and typed
                return None

    result = anyio.run(run)
    if result is None:
        return
    messages = result.transcript.messages
    calls = [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.calls]
    answered = [m.call_id for m in messages if isinstance(m, ToolResultMessage)]
    assert len(set(calls)) == len(calls)
    assert sorted(calls) == sorted(answered)


ARGUMENT_PIECES = [
    '{"q": "x"}', '{"q": "boom"}', '{"a": 1, "b": 0}', '{"n": "many"}', "{", '"q"', ': "y"}',
    "}", "", "[1]", "nul", '{"q": "\\u00e9"}',
]
_call_chunk = st.builds(
    CallChunk,
    index=st.integers(0, 2),
    id=st.sampled_from([None, "", "a", "b", "call_1"]),
    name=st.sampled_from([None, "", "search", "calc", "nope"]),
    arguments=st.sampled_from(ARGUMENT_PIECES),
    done=st.booleans(),
)
_chunk = st.one_of(
    _call_chunk,
    _call_chunk,
    st.builds(TextChunk, text=st.text(max_size=5)),
    st.builds(ReasoningChunk, text=st.text(max_size=3)),
    st.builds(UsageChunk, input_tokens=st.integers(0, 9), output_tokens=st.integers(0, 9)),
)
_finish = st.builds(FinishChunk, reason=st.sampled_from(["stop", "tool_calls", "length", "error"]))
_native_reply = st.tuples(st.lists(_chunk, max_size=10), _finish).map(lambda t: [*t[0], t[1]])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(replies=st.lists(_native_reply, min_size=1, max_size=3))
@example(  # two calls of one reply with one id: once two results no one could tell apart
    replies=[
        [
            CallChunk(index=0, id="a", name="search", arguments='{"q": "x"}'),
            CallChunk(index=1, id="a", name="search", arguments='{"q": "y"}'),
            FinishChunk(reason="tool_calls"),
        ]
    ]
)
def test_any_native_deltas_end_in_a_result_or_our_error(replies: list[list[Chunk]]) -> None:
    model = ScriptedModel([*replies, "done"])
    agent = Agent(model, [search, calc], native=True, max_turns=len(replies) + 1, tool_timeout=5)

    async def run() -> RunResult | None:
        with anyio.fail_after(20):
            try:
                return await agent.run("go")
            except StreamtoolsError:  # a provider error finish, repairs exhausted: ours
                return None

    result = anyio.run(run)
    if result is None:
        return
    messages = result.transcript.messages
    for i, message in enumerate(messages):
        if isinstance(message, AssistantMessage) and message.calls:
            ids = [c.id for c in message.calls]
            assert len(set(ids)) == len(ids)  # each can be answered
            answers = []
            for later in messages[i + 1 :]:
                if not isinstance(later, ToolResultMessage):
                    break
                answers.append(later.call_id)
            assert sorted(answers) == sorted(ids)
