"""Text cut at the first of some stop strings, as a server cuts it (sans-IO).

Where no parser reads the text (a provider whose model refuses ``stop``, the
proxy's answer when no tool is offered, the runtime's native replies and a
hybrid selection turn), the user's stop strings are still honoured by
``StopCutter``: text is released as soon as it cannot begin a stop string,
and the first stop string to *end* decides (then the one starting first), as
for a server that checks its stops after every token, and as the parser
decides, so the cut does not depend on how the text was chunked. It reads
text only: ``<think>`` in it is the text it is.

Core package: standard library only.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["StopCutter"]


class StopCutter:
    """Cut text at the first of ``stops`` (see the module docstring).

    ``feed`` returns the text that can be released; a possible start of a stop
    string is held back (at most the longest stop minus one character).
    ``hit`` is the stop string found, after which nothing more is released;
    ``flush`` gives what is still held when the text ends before a stop.
    """

    def __init__(self, stops: Iterable[str]) -> None:
        self._stops = tuple(s for s in stops if s)
        self._hold = ""
        self.hit: str | None = None

    def feed(self, text: str) -> str:
        if self.hit is not None:
            return ""
        buf = self._hold + text
        cut = None  # (end, start, stop) of the first stop string to end
        for stop in self._stops:
            pos = buf.find(stop)
            if pos >= 0 and (cut is None or (pos + len(stop), pos) < cut[:2]):
                cut = (pos + len(stop), pos, stop)
        if cut is not None:
            self.hit, self._hold = cut[2], ""
            return buf[: cut[1]]
        keep = 0
        for stop in self._stops:
            for n in range(min(len(stop) - 1, len(buf)), keep, -1):
                if stop.startswith(buf[-n:]):
                    keep = n
                    break
        self._hold = buf[len(buf) - keep :]
        return buf[: len(buf) - keep]

    def flush(self) -> str:
        out, self._hold = self._hold, ""
        return out
