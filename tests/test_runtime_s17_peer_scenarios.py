"""Scenarios users reported against other agent runtimes' tool execution, run
against ours:

- parallel results went back to the model in completion order, so a model
  that reads them by position paired them with the wrong calls, and the
  prompt's bytes changed from run to run (prompt caching broke): Claude Agent
  SDK (anthropics/claude-code#21906), vercel/ai#16577, oh-my-pi#11179;
- one failing call of a parallel batch discarded its siblings' results
  (langgraph#7412: ``asyncio.gather`` without ``return_exceptions``);
- a tool's value that cannot be written as JSON (a class, a datetime, bytes, an
  exception) crashed the run late, naming neither the tool nor the value
  (pydantic-ai#7335, github/copilot-sdk#2225);
- cancelling the run left its tools running (pydantic-ai#3960)."""

from __future__ import annotations

import datetime
import functools
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import anyio
import pytest

from streamtools.errors import ProviderError
from streamtools.events import CallEnd, ToolFailed, ToolResult
from streamtools.model import CallChunk, ChatMessage, Chunk, FinishChunk
from streamtools.runtime.agent import Agent
from streamtools.runtime.executor import Executor
from streamtools.testing import ScriptedModel
from streamtools.tools import ToolRegistry, tool
from streamtools.transcript import AssistantMessage, ToolResultMessage

pytestmark = pytest.mark.anyio


@tool
async def slow_lookup(key: str) -> str:
    """Look a key up, slowly."""
    await anyio.sleep(0.3)
    return f"slow:{key}"


@tool
async def fast_lookup(key: str) -> str:
    """Look a key up, fast."""
    return f"fast:{key}"


@tool
async def broken_lookup(key: str) -> str:
    """Look a key up on a server that is down."""
    await anyio.sleep(0.1)
    raise ConnectionError(f"cannot reach the server for {key}")


def native_calls(*calls: tuple[str, str]) -> Sequence[Chunk]:
    chunks: list[Chunk] = [
        CallChunk(index=i, id=f"call_{i}", name=name, arguments=f'{{"key": "{key}"}}', done=True)
        for i, (name, key) in enumerate(calls)
    ]
    chunks.append(FinishChunk(reason="tool_calls"))
    return chunks


def results_in(messages: Sequence[ChatMessage]) -> list[tuple[str | None, str]]:
    """(call id, content) of each tool message of a request, in order."""
    return [(m.tool_call_id, m.content) for m in messages if m.role == "tool"]


async def test_parallel_results_go_back_in_call_order_native(anyio_backend: str) -> None:
    model = ScriptedModel(
        [native_calls(("slow_lookup", "a"), ("fast_lookup", "b"), ("slow_lookup", "c")), "ok"]
    )
    agent = Agent(model, [slow_lookup, fast_lookup], native=True)
    with anyio.fail_after(10):
        async with agent.stream("go") as stream:
            events = [e async for e in stream]
    done = [e.content for e in events if isinstance(e, ToolResult)]
    assert done[0] == "fast:b"  # the fast one finished first, and was shown first
    sent = model.requests[1].messages
    assert results_in(sent) == [
        ("call_0", "slow:a"), ("call_1", "fast:b"), ("call_2", "slow:c"),
    ]  # fmt: skip


async def test_parallel_results_go_back_in_call_order_in_a_prompt_dialect(
    anyio_backend: str,
) -> None:
    calls = "".join(
        f'<tool_call>{{"name": "{name}", "arguments": {{"key": "{key}"}}}}</tool_call>'
        for name, key in (("slow_lookup", "a"), ("fast_lookup", "b"))
    )
    model = ScriptedModel([calls, "ok"])
    agent = Agent(model, [slow_lookup, fast_lookup], dialect="hermes")
    with anyio.fail_after(10):
        await agent.run("go")
    told = str(model.requests[1].messages)
    assert told.index("slow:a") < told.index("fast:b")


async def test_a_failing_call_keeps_its_siblings_results(anyio_backend: str) -> None:
    model = ScriptedModel(
        [native_calls(("fast_lookup", "a"), ("broken_lookup", "b"), ("slow_lookup", "c")), "ok"]
    )
    agent = Agent(model, [slow_lookup, fast_lookup, broken_lookup], native=True)
    with anyio.fail_after(10):
        result = await agent.run("go")
    assert result.text == "ok"
    sent = results_in(model.requests[1].messages)
    assert [call_id for call_id, _ in sent] == ["call_0", "call_1", "call_2"]
    assert sent[0][1] == "fast:a" and sent[2][1] == "slow:c"
    assert "ConnectionError: cannot reach the server for b" in sent[1][1]


class Opaque:
    def __repr__(self) -> str:
        return "<Opaque thing>"


def looped() -> dict[str, Any]:
    mapping: dict[str, Any] = {}
    mapping["self"] = mapping
    return mapping


def deep(levels: int) -> list[Any]:
    top: list[Any] = []
    inner = top
    for _ in range(levels):
        inner.append([])
        inner = inner[0]
    return top


VALUES: list[tuple[str, Any]] = [
    ("a_class", dict),
    ("a_datetime", datetime.datetime(2026, 11, 23, 4, 0, tzinfo=datetime.UTC)),
    ("some_bytes", b"\x00\xffbinary"),
    ("a_set", {3, 1, 2}),
    ("an_exception", ValueError("bad")),
    ("an_object", Opaque()),
    ("nested", {"when": datetime.date(2026, 1, 2), "raw": b"ab", "kind": dict}),
    ("nothing", None),
    ("a_loop", looped()),
    ("very_deep", deep(100_000)),
]


@pytest.mark.parametrize(("name", "value"), VALUES, ids=[n for n, _ in VALUES])
async def test_any_value_reaches_the_model_as_text_naming_the_tool(
    anyio_backend: str, name: str, value: Any
) -> None:
    def give() -> Any:
        """Give a value."""
        return value

    executor = Executor(ToolRegistry([tool(give, name=name)]))
    with anyio.fail_after(10):
        outcome = await executor.execute(
            CallEnd(index=0, id="c1", name=name, arguments={}, raw="")
        )
    match outcome:
        case ToolResult(content=content):
            assert isinstance(content, str) and content
        case ToolFailed(kind=kind, message=message):
            assert kind == "unencodable_result", outcome
            assert repr(name) in message


async def test_cancelling_the_run_stops_its_tools(anyio_backend: str) -> None:
    ticks: list[int] = []
    stopped: list[str] = []

    @tool
    async def ticker() -> str:
        """Tick for a long time."""
        try:
            for i in range(500):
                ticks.append(i)
                await anyio.sleep(0.01)
        finally:
            stopped.append("stopped")
        return "done"

    model = ScriptedModel(['<tool_call>{"name": "ticker", "arguments": {}}</tool_call>', "ok"])
    agent = Agent(model, [ticker], dialect="hermes")
    with anyio.move_on_after(0.3) as scope:
        await agent.run("go")
    assert scope.cancelled_caught
    assert stopped == ["stopped"]
    seen = len(ticks)
    await anyio.sleep(0.1)
    assert len(ticks) == seen  # nothing ticks on after the run


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text for this error")


async def test_an_exception_that_cannot_be_printed_is_still_reported(anyio_backend: str) -> None:
    @tool
    def fails() -> str:
        """Fail oddly."""
        raise Unprintable()

    executor = Executor(ToolRegistry([fails]))
    with anyio.fail_after(10):
        outcome = await executor.execute(
            CallEnd(index=0, id="c1", name="fails", arguments={}, raw="")
        )
    assert isinstance(outcome, ToolFailed) and outcome.kind == "exception"
    assert "Unprintable" in outcome.message


async def test_a_timeout_does_not_wait_for_a_tools_slow_cleanup(anyio_backend: str) -> None:
    """openai-agents-python#4899: past the timeout, the runner waited for the
    tool's ``finally`` that awaited a slow cleanup before it reported anything.
    Here the cleanup's wait is cancelled too (the scope stays cancelled)."""
    log: list[str] = []

    @tool(timeout=0.2)
    async def fetch() -> str:
        """Fetch, then close a connection slowly."""
        try:
            await anyio.sleep(10)
        finally:
            log.append("closing")
            try:
                await anyio.sleep(5)  # a close that never answers
            finally:
                log.append("close cut")
        return "late"

    with anyio.fail_after(3):
        outcome = await Executor(ToolRegistry([fetch])).execute(
            CallEnd(index=0, id="c1", name="fetch", arguments={}, raw="")
        )
    assert isinstance(outcome, ToolFailed) and outcome.kind == "timeout"
    assert log == ["closing", "close cut"]


async def test_a_tool_whose_retry_loop_catches_the_cancellation_is_stopped(
    anyio_backend: str,
) -> None:
    """harbor#1223: a retry decorator that retried on ``CancelledError`` kept a
    call running past its timeout. This one retries on anything but gives up
    after a few errors that are not a cancellation. Ours reports the timeout
    and stops it after the grace period (1 s). The close that was the last
    resort threw ``GeneratorExit`` into it, which it caught too, and awaited
    again inside trio's sleep: the coroutine was left suspended there, with the
    sleep's cancel scope open, and trio failed ("Cancel scope stack corrupted")."""
    cancelled = anyio.get_cancelled_exc_class()
    caught: list[str] = []

    @tool(timeout=0.2)
    async def flaky() -> str:
        """Call a flaky service, retrying whatever happens."""
        end = anyio.current_time() + 10  # a bound for the test
        strikes = 0
        while anyio.current_time() < end:
            try:
                await anyio.sleep(0.05)
                raise ConnectionError("flaky")
            except BaseException as exc:  # the bug under test: it retries anything
                if not isinstance(exc, cancelled | ConnectionError):
                    caught.append(type(exc).__name__)
                    strikes += 1
                    if strikes > 3:
                        raise
        return "gave up"

    with anyio.fail_after(5):
        outcome = await Executor(ToolRegistry([flaky])).execute(
            CallEnd(index=0, id="c1", name="flaky", arguments={}, raw="")
        )
    assert outcome == ToolFailed(
        index=0, id="c1", name="flaky", kind="timeout",
        message="Tool 'flaky' timed out after 0.2 s.",
    )  # fmt: skip
    assert len(caught) == 4 and "GeneratorExit" not in caught
    with anyio.move_on_after(0.1) as scope:  # this task's own scopes still work
        await anyio.sleep(1)
    assert scope.cancelled_caught


async def test_a_model_stream_failing_mid_call_leaves_every_call_answered(
    anyio_backend: str,
) -> None:
    """google/adk-python#2425: a run cancelled while an async tool ran left a
    call with no result in the session, which the API refuses on the next
    request. Here the model's stream breaks while a dispatched call runs: the
    transcript the error carries answers every call, the cut one as an error."""
    reply: list[Any] = [
        CallChunk(index=0, id="c0", name="fast_lookup", arguments='{"key": "a"}', done=True),
        CallChunk(index=1, id="c1", name="slow_lookup", arguments='{"key": "b"}', done=True),
        ProviderError("connection reset"),
    ]
    model = ScriptedModel([reply, "never asked"])
    agent = Agent(model, [slow_lookup, fast_lookup], native=True)
    with anyio.fail_after(10), pytest.raises(ProviderError) as raised:
        await agent.run("go")
    transcript = raised.value.transcript
    assert transcript is not None
    calls = [c.id for m in transcript.messages if isinstance(m, AssistantMessage) for c in m.calls]
    answered = [m for m in transcript.messages if isinstance(m, ToolResultMessage)]
    assert calls == ["c0", "c1"]
    assert [(m.call_id, m.is_error) for m in answered] == [("c0", False), ("c1", True)]
    assert answered[0].content == "fast:a"


async def test_a_timed_out_tool_leaves_no_child_process(anyio_backend: str) -> None:
    """HKUDS/nanobot#2765, MoonshotAI/kimi-cli#82: a shell tool cancelled by its
    timeout left its subprocess running. An async tool's ``run_process`` is
    killed with the call."""
    if not await anyio.Path("/proc/self").exists():
        pytest.skip("needs /proc to tell whether the process still runs")
    pid_file = anyio.Path(f"/tmp/streamtools-s17-{anyio_backend}-{id(object())}.pid")

    @tool(timeout=0.3)
    async def shell() -> str:
        """Run a long command."""
        done = await anyio.run_process(["sh", "-c", f"echo $$ > {pid_file}; exec sleep 30"])
        return done.stdout.decode()

    with anyio.fail_after(10):
        outcome = await Executor(ToolRegistry([shell])).execute(
            CallEnd(index=0, id="c1", name="shell", arguments={}, raw="")
        )
    assert isinstance(outcome, ToolFailed) and outcome.kind == "timeout"
    pid = int((await pid_file.read_text()).strip())
    await pid_file.unlink()
    assert not await anyio.Path(f"/proc/{pid}").exists() or (
        (await anyio.Path(f"/proc/{pid}/stat").read_text()).split()[2] == "Z"
    )


def logged(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A sync decorator, as users wrap tools (logging, metrics)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return wrapper


async def test_a_sync_wrapped_async_tool_runs(anyio_backend: str) -> None:
    """strands-agents#4410, crewAI#7474: an async tool behind a sync decorator
    gave the model ``<coroutine object ...>`` and never ran."""
    ran: list[str] = []

    @tool
    @logged
    async def lookup(name: str) -> str:
        """Look a customer up."""
        await anyio.sleep(0.01)
        ran.append(name)
        return f"found {name}"

    with anyio.fail_after(10):
        outcome = await Executor(ToolRegistry([lookup])).execute(
            CallEnd(index=0, id="c1", name="lookup", arguments={"name": "Ada"}, raw="")
        )
    assert outcome == ToolResult(index=0, id="c1", name="lookup", content="found Ada")
    assert ran == ["Ada"]


async def test_a_tool_reading_a_stream_that_swallows_cancellation_is_stopped(
    anyio_backend: str,
) -> None:
    """A streaming client whose reading loop retries on anything (here an async
    generator that swallows every cancellation) held its call past the timeout
    for as long as the stream went on: a tool waiting inside an async generator
    was never stopped, as closing (the old way to stop it) cannot unwind one.
    The exception thrown to stop it can: the generator's frame unwinds too."""
    swallowed: list[int] = []
    ended: list[str] = []

    async def chunks() -> AsyncIterator[int]:
        cancelled = anyio.get_cancelled_exc_class()
        end = anyio.current_time() + 10  # a bound for the test
        try:
            while anyio.current_time() < end:
                try:
                    await anyio.sleep(0.05)
                except cancelled:
                    swallowed.append(1)
                    time.sleep(0.002)  # noqa: ASYNC251 (not a busy spin)
                yield 1
        finally:
            ended.append("ran to its bound" if anyio.current_time() >= end else "stopped")

    @tool(timeout=0.2)
    async def read_stream() -> int:
        """Read a stream."""
        return sum([n async for n in chunks()])

    with anyio.fail_after(5):
        outcome = await Executor(ToolRegistry([read_stream])).execute(
            CallEnd(index=0, id="c1", name="read_stream", arguments={}, raw="")
        )
    assert isinstance(outcome, ToolFailed) and outcome.kind == "timeout"
    assert swallowed and ended == ["stopped"]
    with anyio.move_on_after(0.1) as scope:  # this task's own scopes still work
        await anyio.sleep(1)
    assert scope.cancelled_caught


async def test_a_streaming_tool_that_swallows_cancellation_is_cut_at_its_timeout(
    anyio_backend: str,
) -> None:
    """An async generator tool (a streamed result) whose loop swallows the
    cancellation and goes on yielding was drained to its end past its timeout:
    an endless one for ever, its items piling up in memory. It is cut at the
    next item once its call timed out, and closed, as a sync generator is."""
    ended: list[str] = []

    @tool(timeout=0.2)
    async def ticks() -> AsyncIterator[int]:
        """Stream ticks."""
        cancelled = anyio.get_cancelled_exc_class()
        end = anyio.current_time() + 10  # a bound for the test
        try:
            while anyio.current_time() < end:
                try:
                    await anyio.sleep(0.01)
                except cancelled:
                    time.sleep(0.002)  # noqa: ASYNC251 (not a busy spin)
                yield 1
        finally:
            ended.append("ran to its bound" if anyio.current_time() >= end else "stopped")

    with anyio.fail_after(5):
        outcome = await Executor(ToolRegistry([ticks])).execute(
            CallEnd(index=0, id="c1", name="ticks", arguments={}, raw="")
        )
    assert isinstance(outcome, ToolFailed) and outcome.kind == "timeout"
    assert ended == ["stopped"]


async def test_a_streaming_tool_waiting_for_its_next_item_is_stopped(
    anyio_backend: str,
) -> None:
    """The same tool swallowing the cancellation while it waits for its next
    item (it yields none) held the call: its steps were not awaited through
    ``Stoppable``. It is stopped after the grace period (1 s)."""
    ended: list[str] = []

    @tool(timeout=0.2)
    async def slow_ticks() -> AsyncIterator[int]:
        """Stream ticks, slowly."""
        cancelled = anyio.get_cancelled_exc_class()
        end = anyio.current_time() + 10  # a bound for the test
        try:
            while anyio.current_time() < end:
                try:
                    await anyio.sleep(0.05)
                except cancelled:
                    time.sleep(0.002)  # noqa: ASYNC251 (not a busy spin)
            yield 1
        finally:
            ended.append("ran to its bound" if anyio.current_time() >= end else "stopped")

    with anyio.fail_after(5):
        outcome = await Executor(ToolRegistry([slow_ticks])).execute(
            CallEnd(index=0, id="c1", name="slow_ticks", arguments={}, raw="")
        )
    assert isinstance(outcome, ToolFailed) and outcome.kind == "timeout"
    assert ended == ["stopped"]
