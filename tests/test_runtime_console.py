"""ConsoleRenderer's layout with colour on: a block starts on a fresh line,
without a blank line before it."""

from __future__ import annotations

import io

import pytest

from streamtools.events import CallStart, Event, ReasoningDelta, TextDelta
from streamtools.runtime.console import ConsoleRenderer


@pytest.mark.parametrize("color", [False, True])
@pytest.mark.parametrize("before", [ReasoningDelta(text="thinking\n"), TextDelta(text="Adding.\n")])
def test_a_call_after_a_line_that_ended_starts_without_a_blank_line(
    color: bool, before: Event
) -> None:
    """With colour on, a reasoning line's newline came before its reset code, so
    the renderer took the cursor to be mid-line and a call after it got a
    blank line of its own, which it did not get without colour."""
    out = io.StringIO()
    renderer = ConsoleRenderer(out, color=color)
    renderer.render(before)
    renderer.render(CallStart(index=0, id="c", name="add"))
    plain = out.getvalue().replace("\x1b[2m", "").replace("\x1b[36m", "").replace("\x1b[0m", "")
    assert plain.endswith("\n  -> add ") and "\n\n" not in plain
