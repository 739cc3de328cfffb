"""What the UI layer costs per event: encoding our events as the AI SDK UI
message stream and as our own SSE, without I/O.

    python bench/ui.py

Prints events per second and microseconds per event for a realistic mix
(text deltas, a tool call with streamed arguments, results, turn events).
"""

from __future__ import annotations

import time

from streamtools.events import (
    ArgsDelta,
    CallEnd,
    CallStart,
    Event,
    Finish,
    TextDelta,
    ToolResult,
    TurnEnd,
    TurnStart,
)
from streamtools.ui import EventsFramer, UIMessageFramer


def turn(n: int) -> list[Event]:
    call_id = f"call_{n}"
    events: list[Event] = [TurnStart(turn=n)]
    events += [TextDelta(text=f"token {i} ") for i in range(40)]
    events.append(CallStart(index=0, id=call_id, name="search"))
    events += [ArgsDelta(index=0, id=call_id, delta=f'"q{i}", ') for i in range(20)]
    events.append(CallEnd(index=0, id=call_id, name="search", arguments={"q": "x"}, raw=""))
    events += [Finish(reason="stop"), ToolResult(index=0, id=call_id, name="search", content="r")]
    events.append(TurnEnd(turn=n, reason="tool_calls"))
    return events


def measure(
    name: str, make: type[UIMessageFramer] | type[EventsFramer], events: list[Event]
) -> None:
    best = float("inf")
    size = 0
    for _ in range(5):
        framer = make()
        start = time.perf_counter()
        out = [framer.open()]
        out += [framer.frame(e) for e in events]
        out.append(framer.close())
        best = min(best, time.perf_counter() - start)
        size = sum(len(b) for b in out)
    per = best / len(events)
    print(
        f"{name:<28} {len(events) / best:>12,.0f} events/s  {per * 1e6:6.2f} us/event"
        f"  {size / len(events):6.1f} bytes/event"
    )


def main() -> None:
    events = [e for n in range(1, 1001) for e in turn(n)]
    print(f"{len(events):,} events (1,000 turns: 40 text deltas, a call with 20 argument deltas)")
    measure("AI SDK UI message stream", UIMessageFramer, events)
    measure("our events over SSE", EventsFramer, events)


if __name__ == "__main__":
    main()
