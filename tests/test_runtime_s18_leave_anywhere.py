"""A consumer that leaves ``async with agent.stream(...)`` at any kind of event
(mid text, after a CallStart, while its tool runs, during the model's second
turn) leaves nothing behind: no task, no open HTTP connection at the server (a
real FakeServer on 127.0.0.1, the client keeping no idle connection, so that
an open one is a response left unclosed), no tool still running, and the
tool's ``finally`` ran. On asyncio and trio, over the OpenAI and Anthropic
wires."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext

import anyio
import httpx
import pytest
from provider_support import provider_for
from wait_support import until

from streamtools.events import ArgsDelta, CallEnd, CallStart, Event, TextDelta, TurnStart
from streamtools.runtime import Agent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply, Wire
from streamtools.tools import tool

pytestmark = pytest.mark.anyio

CALL = '<am:tool_call name="wait"><what>rain</what></am:tool_call>'
# the call, then more text while the tool runs; every event a little late
FIRST = Reply(text="Let me look. " + CALL + " Still writing after the call.", delay=0.02)
SECOND = Reply(text="It will rain tomorrow, and the day after as well.", delay=0.02)


class Probe:
    """What the tool did: started, and whether its ``finally`` ran."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.running = 0
        self.finished = 0
        self.slow = True


def wait_tool(probe: Probe) -> Callable[..., object]:
    @tool
    async def wait(what: str) -> str:
        """Wait for news of ``what``."""
        probe.running += 1
        probe.started.set()
        try:
            if probe.slow:
                await anyio.sleep_forever()
            return f"news of {what}"
        finally:
            probe.running -= 1
            probe.finished += 1

    return wait


# Where to leave, how (``break``, an exception of the consumer's own out of the
# block, or a cancel scope around the block cancelled: a UI's request ended),
# and over which wire (the providers read SSE in two shapes).
POINTS: list[tuple[str, str, Wire]] = [
    ("first_text", "break", "openai"),
    ("call_start", "raise", "anthropic"),
    ("args", "cancel", "openai"),
    ("tool_running", "break", "anthropic"),
    ("tool_running", "cancel", "openai"),
    ("second_turn_text", "raise", "openai"),
    ("second_turn_text", "break", "anthropic"),
]


class Leave(Exception):
    """The consumer's own error, raised out of the block."""


def task_ids() -> set[int]:
    return {t.id for t in anyio.get_running_tasks()}


def reached(point: str, event: Event, turn: int) -> bool:
    match point:
        case "first_text":
            return isinstance(event, TextDelta)
        case "call_start":
            return isinstance(event, CallStart)
        case "args":
            return isinstance(event, ArgsDelta)
        case "tool_running":
            return isinstance(event, CallEnd)
        case _:
            return turn == 2 and isinstance(event, TextDelta)


@pytest.mark.parametrize(("point", "how", "wire"), POINTS)
async def test_leaving_at_any_event_leaves_nothing(
    anyio_backend: str, point: str, how: str, wire: Wire
) -> None:
    probe = Probe()
    probe.slow = point != "second_turn_text"  # the first turn's tool must finish there
    before = task_ids()
    async with (
        FakeServer([FIRST, SECOND], wire=wire) as server,
        httpx.AsyncClient(limits=httpx.Limits(max_keepalive_connections=0)) as client,
    ):
        agent = Agent(provider_for(server, client=client), [wait_tool(probe)])
        turn = 0
        left = False
        raised = pytest.raises(Leave) if how == "raise" else nullcontext()
        with anyio.CancelScope() as outside, raised:
            async with agent.stream("Will it rain?") as events:
                async for event in events:
                    if isinstance(event, TurnStart):
                        turn = event.turn
                    if not reached(point, event, turn):
                        continue
                    if point == "tool_running":
                        await probe.started.wait()
                    left = True  # (the model is still streaming, unless this machine lags)
                    if how == "raise":
                        raise Leave
                    if how == "cancel":
                        outside.cancel()
                        await anyio.sleep_forever()
                    break
        assert left, "the run ended before the point to leave at"
        assert outside.cancel_called == (how == "cancel")
        # Leaving the block waited for the run: the tool is not running, its finally ran.
        assert probe.running == 0
        if point in ("tool_running", "second_turn_text"):
            assert probe.finished == 1
        # the model's response was closed, and with it its connection (bounded wait:
        # the server's thread sees the close when it next reads or writes)
        await until(lambda: server.open_connections == 0)
        assert task_ids() <= before
