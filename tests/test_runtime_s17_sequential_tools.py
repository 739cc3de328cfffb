"""Calls of one reply run at once (eager dispatch), so a model that writes a
file and then reads it back in one reply raced its own calls: the read could
run before the write and see the old content, and the model concluded its
write had failed (gemini-cli#10287, pi#2692, term-llm#312). A tool marked
``@tool(sequential=True)`` (a write, a shell command) runs alone, in its place
in the reply: the calls before it finish first, and the calls after it wait
for it. Other calls still run at once; waiting is not part of a call's
timeout."""

from __future__ import annotations

import threading

import anyio
import pytest

from streamtools.events import ToolResult
from streamtools.runtime.agent import Agent
from streamtools.testing import ScriptedModel
from streamtools.tools import Tool, tool

pytestmark = pytest.mark.anyio


def call(name: str, **arguments: str) -> str:
    args = ", ".join(f'"{k}": "{v}"' for k, v in arguments.items())
    return f'<tool_call>{{"name": "{name}", "arguments": {{{args}}}}}</tool_call>'


class Notes:
    def __init__(self) -> None:
        self.store: dict[str, str] = {}
        self.log: list[str] = []
        self.lock = threading.Lock()

    def tools(self, *, sequential: bool) -> list[Tool]:
        @tool(sequential=sequential, timeout=1.0)
        def write_note(key: str, text: str) -> str:
            """Save a note."""
            threading.Event().wait(0.3)  # a slow disk
            with self.lock:
                self.store[key] = text
                self.log.append(f"wrote {key}")
            return "saved"

        @tool
        def read_note(key: str) -> str:
            """Read a note."""
            with self.lock:
                self.log.append(f"read {key}")
                return self.store.get(key, "(no such note)")

        @tool
        async def slow_read(key: str) -> str:
            """Read a note, slowly."""
            await anyio.sleep(0.3)
            with self.lock:
                self.log.append(f"slow read {key}")
                return self.store.get(key, "(no such note)")

        return [write_note, read_note, slow_read]


async def run(notes: Notes, reply: str, *, sequential: bool) -> dict[str, str]:
    model = ScriptedModel([reply, "Done."])
    agent = Agent(model, notes.tools(sequential=sequential), dialect="hermes")
    with anyio.fail_after(10):
        async with agent.stream("go") as stream:
            events = [e async for e in stream]
    return {e.id: e.content for e in events if isinstance(e, ToolResult)}


async def test_a_read_after_a_sequential_write_sees_it(anyio_backend: str) -> None:
    notes = Notes()
    reply = call("write_note", key="a", text="hello") + call("read_note", key="a")
    got = await run(notes, reply, sequential=True)
    assert got == {"call_1_0": "saved", "call_1_1": "hello"}
    assert notes.log == ["wrote a", "read a"]


async def test_without_it_the_calls_race(anyio_backend: str) -> None:
    """What the option is for: the same reply, the write not marked."""
    notes = Notes()
    reply = call("write_note", key="a", text="hello") + call("read_note", key="a")
    got = await run(notes, reply, sequential=False)
    assert got["call_1_1"] == "(no such note)"
    assert notes.log == ["read a", "wrote a"]


async def test_a_sequential_write_waits_for_the_calls_before_it(anyio_backend: str) -> None:
    notes = Notes()
    notes.store["a"] = "old"
    reply = (
        call("slow_read", key="a")
        + call("write_note", key="a", text="new")
        + call("read_note", key="a")
    )
    got = await run(notes, reply, sequential=True)
    assert got == {"call_1_0": "old", "call_1_1": "saved", "call_1_2": "new"}
    assert notes.log == ["slow read a", "wrote a", "read a"]


async def test_waiting_is_not_part_of_the_timeout(anyio_backend: str) -> None:
    """Three writes of 0.3 s each, one after the other, each with a 1 s timeout:
    the last one starts 0.6 s after the reply and still has its whole second."""
    notes = Notes()
    reply = "".join(call("write_note", key=k, text=k) for k in ("a", "b", "c", "d"))
    got = await run(notes, reply, sequential=True)
    assert list(got.values()) == ["saved"] * 4
    assert notes.log == ["wrote a", "wrote b", "wrote c", "wrote d"]
