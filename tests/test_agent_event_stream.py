"""``event_stream`` on its own: plain errors after the events, cancellation on leaving."""

from __future__ import annotations

import anyio
import pytest

from streamtools.errors import BudgetExceeded
from streamtools.events import Event, TextDelta
from streamtools.runtime import Emit, RunResult, event_stream

pytestmark = pytest.mark.anyio


async def test_errors_come_out_plain_and_leaving_cancels_the_run(anyio_backend: str) -> None:
    async def failing(emit: Emit) -> RunResult:
        for i in range(100):  # more than the buffer holds: the run waits for the consumer
            await emit(TextDelta(text=str(i)))
        raise BudgetExceeded("out of turns", turns=3)

    seen: list[Event] = []
    with pytest.raises(BudgetExceeded) as info:  # the error itself, not an ExceptionGroup
        async with event_stream(failing) as events:
            async for event in events:
                seen.append(event)
    assert seen == [TextDelta(text=str(i)) for i in range(100)]
    assert info.value.turns == 3 and events.result is None

    started = anyio.Event()
    outcome: list[str] = []

    async def endless(emit: Emit) -> RunResult:
        await emit(TextDelta(text="first"))
        started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            outcome.append("cancelled")
            raise
        raise AssertionError("sleep_forever returned")  # pragma: no cover

    with anyio.fail_after(5):  # without the cancellation the block would never exit
        async with event_stream(endless) as events:
            async for event in events:
                assert event == TextDelta(text="first")
                await started.wait()
                break
        # Checked on leaving the block: the run is already gone, not still winding down.
        assert outcome == ["cancelled"]
    assert events.result is None and events.error is None
