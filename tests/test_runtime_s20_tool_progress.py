"""A running tool's progress reaches the agent's events as ``ToolProgress``.

MCP servers report progress on a long call (``notifications/progress``) and a
tool of our own may know how far it has come, but nothing showed it: the
progress only kept the call's timeout going. A tool now reports through
``call_progress().report(progress, total, message)`` (``streamtools.runtime.
progress``), MCP notifications are reported so, and the agent sends each as a
``ToolProgress`` between the call's ``CallEnd`` and its result; the model and the
transcript never see it. Reports do not wait for the consumer: only the latest
is sent. The MCP server is the official SDK's (``MCPServer``) over stdio.
"""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import pytest
from mcp_servers.harness import progress_command

from streamtools.errors import UsageError
from streamtools.events import (
    CallEnd,
    Event,
    ToolFailed,
    ToolProgress,
    ToolResult,
    decode_event,
    encode_events,
)
from streamtools.mcp import mcp_tools
from streamtools.runtime import Agent
from streamtools.runtime.progress import CallProgress, call_progress
from streamtools.testing import ScriptedModel
from streamtools.tools import Tool, ToolRegistry, tool

pytestmark = pytest.mark.anyio

CALL = '<tool_call>{"name": "%s", "arguments": %s}</tool_call>'


def _agent(tools: ToolRegistry | list[Tool], name: str, arguments: str = "{}") -> Agent:
    model = ScriptedModel([CALL % (name, arguments), "Done."])
    return Agent(model, tools, dialect="hermes")


def _progress(events: list[Event]) -> list[tuple[float, float | None, str | None]]:
    return [(e.progress, e.total, e.message) for e in events if isinstance(e, ToolProgress)]


def _between_call_and_outcome(events: list[Event]) -> None:
    """Every ``ToolProgress`` comes after its call's ``CallEnd`` and before its outcome."""
    types = [type(e) for e in events]
    shown = [i for i, t in enumerate(types) if t is ToolProgress]
    assert shown
    assert types.index(CallEnd) < shown[0]
    outcome = next(i for i, t in enumerate(types) if t in (ToolResult, ToolFailed))
    assert shown[-1] < outcome


async def test_an_async_tool_s_reports_are_events_between_its_call_and_result() -> None:
    seen = [anyio.Event(), anyio.Event()]

    @tool
    async def index_files() -> str:
        """Index the files."""
        reporter = call_progress()
        assert reporter is not None
        reporter.report(1, 2, "first half")
        await seen[0].wait()  # the consumer has it: the next is not coalesced with it
        reporter.report(2, 2)
        await seen[1].wait()
        return "indexed"

    events: list[Event] = []
    with anyio.fail_after(10):
        async with _agent([index_files], "index_files").stream("Index.") as stream:
            async for event in stream:
                events.append(event)
                if isinstance(event, ToolProgress):
                    seen[len(_progress(events)) - 1].set()
    assert _progress(events) == [(1.0, 2.0, "first half"), (2.0, 2.0, None)]
    first = next(e for e in events if isinstance(e, ToolProgress))
    assert (first.index, first.id, first.name) == (0, "call_1_0", "index_files")
    _between_call_and_outcome(events)


async def test_a_sync_tool_reports_from_its_worker_thread() -> None:
    seen = threading.Event()

    @tool
    def copy_files() -> str:
        """Copy the files (in a worker thread)."""
        reporter = call_progress()
        assert reporter is not None  # the call's, in its thread too
        reporter.report(3, None, "3 files copied")
        assert seen.wait(5)
        return "copied"

    events: list[Event] = []
    with anyio.fail_after(10):
        async with _agent([copy_files], "copy_files").stream("Copy.") as stream:
            async for event in stream:
                events.append(event)
                if isinstance(event, ToolProgress):
                    seen.set()
    assert _progress(events) == [(3.0, None, "3 files copied")]
    _between_call_and_outcome(events)


async def test_reports_faster_than_the_consumer_are_coalesced_to_the_latest() -> None:
    @tool
    async def count() -> str:
        """Count to 1000."""
        reporter = call_progress()
        assert reporter is not None
        for n in range(1, 1001):
            reporter.report(n, 1000)
            if n % 100 == 0:
                await anyio.lowlevel.checkpoint()
        await anyio.sleep(0.01)
        return "counted"

    events = await _collect(_agent([count], "count"))
    shown = [p for p, _total, _message in _progress(events)]
    # one event at most per checkpoint, each the latest report then
    assert 1 <= len(shown) <= 10
    assert shown == sorted(shown)
    assert all(p % 100 == 0 for p in shown)


async def test_a_report_that_is_not_a_number_fails_the_tool_with_a_usage_error() -> None:
    @tool
    async def broken() -> str:
        """Report nonsense."""
        reporter = call_progress()
        assert reporter is not None
        reporter.report(float("nan"))
        return "never"

    events = await _collect(_agent([broken], "broken"))
    failed = [e for e in events if isinstance(e, ToolFailed)]
    assert len(failed) == 1
    assert failed[0].kind == "exception"
    assert "UsageError" in failed[0].message
    assert "finite numbers, got nan and None" in failed[0].message
    assert _progress(events) == []


async def test_report_refuses_a_message_that_is_not_text() -> None:
    sent: list[ToolProgress] = []

    async def emit(event: ToolProgress) -> None:
        sent.append(event)

    async with anyio.create_task_group() as tasks:
        call = CallEnd(index=0, id="c", name="t", arguments={}, raw="")
        reporter = CallProgress(call, tasks, emit)
        with pytest.raises(UsageError, match="must be a string, got int"):
            reporter.report(1, 2, 3)  # type: ignore[arg-type]
        reporter.close()
    assert sent == []


async def test_reporting_keeps_a_call_past_its_timeout() -> None:
    @tool(timeout=0.2)
    async def slow() -> str:
        """Work for 0.4 s, reporting."""
        reporter = call_progress()
        assert reporter is not None
        for step in range(10):
            reporter.report(step, 10)
            await anyio.sleep(0.04)
        return "finished"

    events = await _collect(_agent([slow], "slow"))
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["finished"]


async def test_the_model_and_the_transcript_never_see_progress() -> None:
    @tool
    async def fetch() -> str:
        """Fetch."""
        reporter = call_progress()
        assert reporter is not None
        reporter.report(1, 1, "PROGRESS-MARKER")
        await anyio.sleep(0.01)
        return "fetched"

    agent = _agent([fetch], "fetch")
    events = await _collect(agent)
    assert _progress(events) == [(1.0, 1.0, "PROGRESS-MARKER")]
    result = await _agent([fetch], "fetch").run("Fetch.")
    assert b"PROGRESS-MARKER" not in result.transcript.encode()
    model = agent.model
    assert isinstance(model, ScriptedModel)
    assert all("PROGRESS-MARKER" not in m.content for r in model.requests for m in r.messages)


def test_the_event_encodes_and_decodes() -> None:
    full = ToolProgress(index=1, id="c", name="t", progress=0.5, total=1.0, message="half")
    bare = ToolProgress(index=0, id="d", name="t", progress=3.0)
    line = encode_events([full, bare]).splitlines()
    assert [decode_event(x) for x in line] == [full, bare]
    assert line[1] == b'{"type":"tool_progress","index":0,"id":"d","name":"t","progress":3.0}'


async def test_an_mcp_server_s_progress_notifications_are_events(tmp_path: Path) -> None:
    async with mcp_tools(progress_command(tmp_path / "cancelled")) as registry:
        agent = _agent(registry, "steps", '{"count": 3}')
        with anyio.fail_after(30):
            events = await _collect(agent)
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["3 steps"]
    shown = _progress(events)
    # the server's three reports, 50 ms apart (one may be coalesced into the next)
    sent = [(n, 3.0, f"step {n:g} of 3") for n in (1.0, 2.0, 3.0)]
    assert shown and all(report in sent for report in shown)
    assert shown == sorted(shown)
    _between_call_and_outcome(events)


async def _collect(agent: Agent) -> list[Event]:
    with anyio.fail_after(10):
        async with agent.stream("Go.") as stream:
            return [event async for event in stream]
