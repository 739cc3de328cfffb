"""A name that comes, on a server's index, after the call there ended without one.

``ToolCallDeltas`` passed it to the ended call as a late part, while
``NativeCalls`` (that call already a ``CallError``: no tool name) started a
new call from it: that call was then never completed by a ``done`` chunk,
ended only in ``NativeCalls.end``, after the calls that began later, so
its events were no longer together (found by the property test in
tests/test_providers_interleaved.py).
"""

from __future__ import annotations

import json

import pytest
from test_providers_interleaved import delta_events

from streamtools.events import ArgsDelta, CallEnd, CallError, CallStart

Delta = tuple[int, str | None, str | None, str]


@pytest.mark.parametrize(
    ("deltas", "ends"),
    [
        (
            [(1, None, None, '{"x": 1}'), (0, None, None, '{"x": 1}'), (1, "a", "t", ""),
             (0, None, "t", "{")],
            [("a", "t", {})],
        ),
        (
            [(1, None, None, '"s"'), (0, None, None, ""), (1, "a", "t", ""),
             (1, None, None, '{"x": 1}'), (1, None, "u", "")],
            [("a", "t", {"x": 1}), (None, "u", {})],
        ),
    ],
)  # fmt: skip
def test_a_named_call_after_a_nameless_one_on_its_index_is_a_call_of_its_own(
    deltas: list[Delta], ends: list[tuple[str | None, str, dict[str, int]]]
) -> None:
    events = [e for e in delta_events(deltas, "tool_calls") if not isinstance(e, CallError)]
    current: int | None = None
    texts: dict[int, str] = {}
    done: list[tuple[str | None, str, dict[str, int]]] = []
    for event in events:
        if isinstance(event, CallStart):
            assert current is None, f"call {event.index} began inside {current}"
            current, texts[event.index] = event.index, ""
        elif isinstance(event, ArgsDelta):
            assert event.index == current, f"a delta of call {event.index} inside {current}"
            texts[event.index] += event.delta
        elif isinstance(event, CallEnd):
            assert event.index == current
            assert json.loads(texts[event.index]) == event.arguments
            done.append((event.id if event.id == "a" else None, event.name, event.arguments))
            current = None
    assert done == ends
