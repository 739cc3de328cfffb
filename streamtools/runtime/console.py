"""Events to a terminal: text as it streams, calls as their arguments grow.

Theory of operation
-------------------
``ConsoleRenderer.render(event)`` writes one event to a text stream at once
(and flushes), so what the user sees follows the model token by token.
Layout: visible text runs on as written; reasoning is dimmed, and the text
after it starts a line of its own (without colour they would read as one); a call opens
its own line (``→ name {"arg": …``) that grows with each ``ArgsDelta`` and
is closed by its ``CallEnd``; tool results and failures get their own lines
(``← name: …``, shortened to one line); turns are framed by a dim rule.
A reply's reasoning that turns out to have been its answer (``ReasoningRetracted``:
``think_open`` and a model that skipped its thinking) is on screen already, dim:
the answer that repeats it is not written again, only what it adds (its calls).
A hybrid agent's tool-selection request (``TurnStart(turn=0)``, before its
work turns 1, 2, …) is framed as ``selecting tools``, not as a "turn 0", and
the final line counts the work turns after it (``Final.turns`` counts the
selection request too).

It tracks whether the cursor is at the start of a line so that a block (a
call, a result arriving eagerly while the model is still writing) always
starts on a fresh line without doubling blank lines.

Model and tool text is shown, never obeyed: its terminal control characters
(ESC, which starts colour, cursor, clipboard and hyperlink sequences; BEL;
C1 controls; a carriage return that would overwrite the line) are written as
Unicode control pictures (``␛``) or dropped (CR), so a tool result fetched from
a web page cannot clear the screen, retitle the window or set the clipboard.
Tabs and newlines stay.

A running tool's progress (``ToolProgress``) is a status line: on a terminal
(``live``) it is drawn on a line of its own and redrawn in place (a carriage
return and an erase to the line's end), cut to the terminal's width so it never
wraps, and erased before anything else is written, so the session reads as it
would without it; the call's result then takes its place. Where the output is
not a terminal (a pipe, a file, ``TERM=dumb``), where nothing can be redrawn,
each report is a plain line of its own, unless it says what the last one said.
Text the model is still writing when a report comes ends its line first, as
for a result.

Errors (a run that raised, ``error``; a stream that broke, ``StreamError``)
go to ``err`` when one is given (``sys.stderr`` in ``streamtools chat``), so
that output redirected to a file holds the session and not its failures,
and a script reads those where errors are read; ``out`` is first ended at a
line's end, so that on a terminal, where both show, the error still starts a
line of its own. Without ``err`` they are written to ``out`` like the rest.

Degrading: colours are ANSI SGR codes, used only when the stream is a TTY
and ``NO_COLOR`` is unset or empty (or when forced with ``color=True``); the arrows
fall back to ASCII when the stream's encoding cannot write them. Nothing
else differs, so piped output stays readable and testable.
"""

from __future__ import annotations

import os
import shutil
from typing import TextIO, assert_never

from streamtools.events import (
    ArgsDelta,
    CallEnd,
    CallError,
    CallStart,
    Event,
    Final,
    Finish,
    ReasoningDelta,
    ReasoningRetracted,
    Retry,
    StreamError,
    TextDelta,
    ToolFailed,
    ToolProgress,
    ToolResult,
    TurnEnd,
    TurnStart,
    Usage,
)

__all__ = ["ConsoleRenderer"]

_RESET = "\x1b[0m"
_STYLES = {
    "dim": "\x1b[2m",
    "call": "\x1b[36m",
    "ok": "\x1b[32m",
    "bad": "\x1b[31m",
    "warn": "\x1b[33m",
    "bold": "\x1b[1m",
}
_RESULT_MAX = 160
_ERASE = "\r\x1b[K"  # back to the line's start, and erase it
# C0 controls but tab and newline as control pictures (U+2400 + code), DEL as its
# picture, C1 controls as U+FFFD, CR dropped (see the module docstring)
_VISIBLE: dict[int, int | None] = {c: 0x2400 + c for c in range(0x20) if c not in (0x09, 0x0A)}
_VISIBLE.update({0x0D: None, 0x7F: 0x2421, **{c: 0xFFFD for c in range(0x80, 0xA0)}})


class ConsoleRenderer:
    """Writes events to ``out`` as a live, human-readable session."""

    def __init__(
        self,
        out: TextIO,
        *,
        color: bool | None = None,
        err: TextIO | None = None,
        live: bool | None = None,
    ) -> None:
        self.out = out
        # a status line redrawn in place (a terminal), else plain lines
        self.live = _redrawable(out) if live is None else live
        self._status = False  # a status line is drawn, the cursor at its end
        self._said: str | None = None  # the last plain progress line
        self.err = err
        self.color = _colored(out) if color is None else color
        self.err_color = err is not None and (_colored(err) if color is None else color)
        # Text the stream cannot encode (a model's emoji on an ASCII terminal) is
        # replaced rather than allowed to crash the session.
        self._encoding = _plain_encoding(out)
        fancy = self._encoding is None
        glyphs = ("→", "←", "─", "✗", "↻", "›") if fancy else ("->", "<-", "-", "x", "~", ">")
        self.call_arrow, self.result_arrow, self.rule, self.cross, self.again, self.prompt = glyphs
        self.working = "…" if fancy else "..."
        self.at_line_start = True
        self.after_block = False
        self.selecting = False  # this answer began with a hybrid agent's tool selection
        self._turn: int | None = None  # the last TurnStart's
        # Reasoning was the last thing written: the answer after it starts a line,
        # else without colour the two read as one run of text.
        self._reasoned = False
        # A reply's reasoning that was its answer (``ReasoningRetracted``): already
        # on screen, so the answer's text and calls that repeat it are not written.
        self._shown = ""

    def style(self, name: str, text: str) -> str:
        return f"{_STYLES[name]}{text}{_RESET}" if self.color and text else text

    def write(self, text: str) -> None:
        if text:
            self._erase_status()
            if self._encoding is not None:
                text = text.encode(self._encoding, "replace").decode(self._encoding)
            self.out.write(text)
            # a styled piece ends with its reset code, after the newline it may end with
            self.at_line_start = text.removesuffix(_RESET).endswith("\n")

    def line(self, text: str) -> None:
        """Write ``text`` as a line of its own."""
        self.newline()
        self.write(text + "\n")
        self.after_block = True

    def error(self, message: str) -> None:
        """A failure outside the events (a run that raised) on a line of its own
        (on ``err`` if given): its message can quote a server's body or the
        model's text, so it is shown as the events' text is, never obeyed."""
        self._failure("error: " + _visible(message))

    def _failure(self, text: str) -> None:
        if self.err is None:
            self.line(self.style("bad", text))
            return
        self.newline()
        self.out.flush()  # what came before it, before it, where both are one terminal
        self.after_block = True
        encoding = _plain_encoding(self.err)
        if encoding is not None:
            text = text.encode(encoding, "replace").decode(encoding)
        styled = f"{_STYLES['bad']}{text}{_RESET}" if self.err_color and text else text
        self.err.write(styled + "\n")
        self.err.flush()

    def newline(self) -> None:
        self._erase_status()
        if not self.at_line_start:
            self.write("\n")

    def render(self, event: Event) -> None:
        match event:
            case TextDelta(text=text):
                text = _visible(self._unshown(text))
                if self.after_block:
                    # The model's own line breaks between calls would double the
                    # ones a block already ends with.
                    text = text.lstrip("\n")
                    self.after_block = not text
                if self._reasoned and text:
                    self.newline()
                    self._reasoned = False
                self.write(text)
            case ReasoningDelta(text=text):
                self.write(self.style("dim", _visible(text)))
                self._reasoned = True
            case ReasoningRetracted(text=text):
                # the answer continues the text shown, on its line
                self._shown, self._reasoned = text, False
            case CallStart(name=name):
                self.newline()
                self.write(self.style("call", f"  {self.call_arrow} {_visible(name)} "))
            case ArgsDelta(delta=delta):
                self.write(self.style("call", _visible(delta)))
            case CallEnd(raw=raw):
                self._unshown(raw)
                self.write("\n")
                self.after_block = True
            case CallError(name=name, reason=reason, message=message, raw=raw):
                self._unshown(raw)
                name = _visible(name or "call")
                text = f"  {self.cross} {name} ({reason}): {_one_line(message)}"
                self.line(self.style("bad", text))
            case ToolResult(name=name, content=content):
                head = f"  {self.result_arrow} {_visible(name)}: "
                self.line(self.style("ok", head) + _one_line(content))
            case ToolFailed(name=name, kind=kind, message=message):
                name = _visible(name)
                text = f"  {self.result_arrow} {name} failed ({kind}): {_one_line(message)}"
                self.line(self.style("bad", text))
            case Retry(reason=reason):
                self.line(self.style("warn", f"  {self.again} asking the model again ({reason})"))
            case TurnStart(turn=turn):
                self._shown = ""
                if turn <= 1:  # an answer starts: with a selection (0), or at turn 1
                    self.selecting = turn == 0 or self._turn == 0
                self._turn = turn
                step = "selecting tools" if turn == 0 else f"turn {turn}"
                self.line(self.style("dim", f"{self.rule * 3} {step} {self.rule * 3}"))
            case TurnEnd():
                self.newline()
            case StreamError(kind=kind, message=message):
                self._failure(f"  stream error ({kind}): {_visible(message)}")
            case Final(turns=turns, truncated=truncated):
                cut = ", cut off at max_tokens" if truncated else ""
                line = f"{self.rule * 3} final answer {self._after(turns)}{cut}"
                self.line(self.style("dim", line))
                self.selecting, self._turn = False, None
            case ToolProgress():
                self._progress(event)
            case Finish() | Usage():
                pass
            case _:
                assert_never(event)
        self.out.flush()

    def _unshown(self, text: str) -> str:
        """What of ``text`` is not on screen already: after ``ReasoningRetracted``,
        the answer repeats the reasoning shown, whose text is not written twice."""
        shown = self._shown
        if not shown:
            return text
        if shown.startswith(text):
            self._shown = shown[len(text):]
            return ""
        self._shown = ""
        # the end of the reasoning shown, and the text the parser held back then;
        # else the answer went another way than the reasoning shown: written whole
        return text[len(shown):] if text.startswith(shown) else text
    def _progress(self, event: ToolProgress) -> None:
        done = f"{event.progress:g}"
        if event.total is not None:
            done += f"/{event.total:g}"
            if event.total > 0:
                done += f" ({min(event.progress / event.total, 1):.0%})"
        said = f" {event.message}" if event.message else ""
        text = f"  {self.working} " + _one_line(f"{event.name}: {done}{said}")
        if not self.live:
            if text != self._said:
                self.line(self.style("dim", text))
            self._said = text
            return
        self.newline()
        width = max(shutil.get_terminal_size().columns - 1, 10)
        if len(text) > width:
            text = text[: width - 1] + "…"
        if self._encoding is not None:
            text = text.encode(self._encoding, "replace").decode(self._encoding)
        self.out.write(self.style("dim", text))
        self._status, self.at_line_start = True, False

    def _erase_status(self) -> None:
        if self._status:
            self._status = False
            self.out.write(_ERASE)
            self.at_line_start = True

    def _after(self, turns: int) -> str:
        """The end of the final line: ``after 2 turns``; after a tool selection,
        which ``turns`` counts too, ``after tool selection and 1 turn`` (or ``at
        tool selection`` when the selection's reply was the answer)."""
        if self.selecting:
            turns -= 1
            if turns < 1:
                return "at tool selection"
        word = "turn" if turns == 1 else "turns"
        counted = f"{turns} {word}"
        return f"after tool selection and {counted}" if self.selecting else f"after {counted}"


def _colored(stream: TextIO) -> bool:
    # no-color.org: set and not empty; NO_COLOR= (empty) leaves colour on
    return stream.isatty() and not os.environ.get("NO_COLOR")


def _redrawable(stream: TextIO) -> bool:
    """Whether a line can be redrawn in place on ``stream``: a terminal that is not dumb."""
    return stream.isatty() and os.environ.get("TERM") != "dumb"


def _plain_encoding(stream: TextIO) -> str | None:
    """The stream's encoding when it is not a UTF one (text is then replaced
    where it cannot be encoded); None for UTF."""
    encoding = getattr(stream, "encoding", None) or "ascii"
    return None if encoding.lower().replace("-", "").startswith("utf") else encoding


def _visible(text: str) -> str:
    return text.translate(_VISIBLE)


def _one_line(text: str) -> str:
    flat = " ".join(_visible(text).split())
    return flat if len(flat) <= _RESULT_MAX else flat[: _RESULT_MAX - 1] + "…"
