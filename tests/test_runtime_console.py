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


class _Terminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("value", "color"), [(None, True), ("1", False), ("", True)])
def test_no_color_counts_when_set_and_not_empty(
    monkeypatch: pytest.MonkeyPatch, value: str | None, color: bool
) -> None:
    """no-color.org: NO_COLOR turns colour off when present and not empty; an empty
    value (``NO_COLOR=`` in a shell profile, to undo it) leaves it on."""
    if value is None:
        monkeypatch.delenv("NO_COLOR", raising=False)
    else:
        monkeypatch.setenv("NO_COLOR", value)
    assert ConsoleRenderer(_Terminal()).color is color
