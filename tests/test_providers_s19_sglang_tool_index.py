"""SGLang numbers a streamed call's first delta (its id and name) by the
tool's place in the request's ``tools`` and the rest of the call by its place
in the reply (sgl-project/sglang#6310, still open). With two calls, the
second call's arguments came on the index of the first call, whose arguments
were whole by then: they were read as a late part of it (a malformed call
error) and the second call ran with ``{}``. Its Gemma 4 parser numbers every
delta by the tool's place (sgl-project/sglang#38198): two calls of one tool
share index 0, told apart by their ids. FakeServer over HTTP, OpenAI wire,
through the agent."""

from __future__ import annotations

from typing import Any

import pytest
from provider_support import DONE, sse

from streamtools.events import CallEnd, CallError, Event, ToolResult
from streamtools.providers import OpenAIChat
from streamtools.runtime.agent import Agent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply
from streamtools.tools import tool

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@tool
def note(text: str) -> str:
    """Write a note."""
    return text


def _delta(index: int, *, id: str | None = None, name: str | None = None,
           args: str = "") -> dict[str, Any]:
    call: dict[str, Any] = {"index": index, "type": "function",
                            "function": {"name": name, "arguments": args}}
    if id is not None:
        call["id"] = id
    choice = {"index": 0, "delta": {"role": None, "content": None, "tool_calls": [call]},
              "finish_reason": None, "matched_stop": None}
    return {"id": "27b2", "object": "chat.completion.chunk", "model": "QWen", "choices": [choice]}


def _end() -> dict[str, Any]:
    choice = {"index": 0, "delta": {"role": None, "content": None}, "finish_reason": "tool_calls",
              "matched_stop": None}
    return {"id": "27b2", "object": "chat.completion.chunk", "model": "QWen", "choices": [choice]}


# tools are [add, multiply]; the model calls multiply (tool 1) and then add (tool 0)
SGLANG_6310 = sse(
    _delta(1, id="call_m", name="multiply"),
    _delta(0, args='{"a": 3, '), _delta(0, args='"b": 12}'),
    _delta(0, id="call_a", name="add"), _delta(1, args='{"a": 11, '), _delta(1, args='"b": 49}'),
    _end(), DONE,
)
# three calls: multiply, add, multiply (first deltas on 1, 0, 1; the rest on 0, 1, 2)
SGLANG_6310_THREE = sse(
    _delta(1, id="call_m", name="multiply"), _delta(0, args='{"a": 3, "b": 12}'),
    _delta(0, id="call_a", name="add"), _delta(1, args='{"a": 11, "b": 49}'),
    _delta(1, id="call_n", name="multiply"), _delta(2, args='{"a": 2, "b": 5}'),
    _end(), DONE,
)
# blanks after a whole call's arguments stay that call's, even while another is open
# inside a string (where a newline would break it)
BLANKS_AFTER = sse(
    _delta(0, id="call_m", name="multiply"), _delta(0, args='{"a": 3, "b": 12}'),
    _delta(1, id="call_n", name="note"), _delta(1, args='{"text": "x'),
    _delta(0, args="\n"), _delta(1, args='y"}'),
    _end(), DONE,
)
# Gemma 4's parser: every delta on the tool's place; two calls of multiply
GEMMA4 = sse(
    _delta(1, id="call_m", name="multiply"), _delta(1, args='{"a": 3, "b": 12}'),
    _delta(1, id="call_n", name="multiply"), _delta(1, args='{"a": 2, "b": 5}'),
    _end(), DONE,
)


@pytest.mark.parametrize(("body", "expected"), [
    (SGLANG_6310, [("multiply", {"a": 3, "b": 12}), ("add", {"a": 11, "b": 49})]),
    (SGLANG_6310_THREE, [("multiply", {"a": 3, "b": 12}), ("add", {"a": 11, "b": 49}),
                         ("multiply", {"a": 2, "b": 5})]),
    (GEMMA4, [("multiply", {"a": 3, "b": 12}), ("multiply", {"a": 2, "b": 5})]),
    (BLANKS_AFTER, [("multiply", {"a": 3, "b": 12}), ("note", {"text": "xy"})]),
], ids=["sglang-6310", "sglang-6310-three", "gemma4", "blanks-after"])
async def test_each_call_gets_its_own_arguments(
    anyio_backend: str, body: str, expected: list[tuple[str, dict[str, int]]]
) -> None:
    calls = Reply(raw=body.encode(), content_type="text/event-stream")
    async with FakeServer([calls, "Done."], wire="openai") as server:
        model = OpenAIChat("qwen", base_url=server.base_url)
        agent = Agent(model, [add, multiply, note], native=True)
        async with agent.stream("What is 3 * 12? Also, what is 11 + 49?") as events:
            seen: list[Event] = [e async for e in events]
    assert [e for e in seen if isinstance(e, CallError)] == []
    assert [(e.name, e.arguments) for e in seen if isinstance(e, CallEnd)] == expected
    results = {(r.name, r.content) for r in seen if isinstance(r, ToolResult)}
    done = {"multiply": lambda a: a["a"] * a["b"], "add": lambda a: a["a"] + a["b"],
            "note": lambda a: a["text"]}
    assert results == {(n, str(done[n](a))) for n, a in expected}
