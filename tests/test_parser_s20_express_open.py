"""The express reader's open without the scan (``Express._x_at``).

``_feed`` takes the express marker where a buffer's text begins with it (``<tool``
held, ``_call>{"`` arriving) or where it is the first marker-start character of a
plain-text delta (``prose {"tool"``), testing the character before it as ``_scan``
does. It must decide as the scan would (a backtick before the marker is prose, a
command marker not at a line's start is text) and must really skip the scan.
"""

from __future__ import annotations

from typing import Any

import pytest

from streamtools.events import ParserEvent, TextDelta
from streamtools.parser import Parser, express
from streamtools.parser.textmode import TextModes

CALL = '{"query": "maps", "limit": 84}'
FORMS = {
    "hermes": f'<tool_call>{{"name": "search", "arguments": {CALL}}}</tool_call>',
    "json_action": f'```json action\n{{"tool": "search", "parameters": {CALL}}}\n```',
    "command": f"\n@tool search {CALL}\n",
    "inline_json": f'{{"tool": "search", "arguments": {CALL}}}',
}


def _trace(dialect: str, pieces: list[str], on: bool) -> list[Any]:
    was = express.ENABLED
    express.ENABLED = on
    try:
        p = Parser(dialect, ["search"])
    finally:
        express.ENABLED = was
    out: list[Any] = []
    for piece in pieces:
        events: list[ParserEvent] = p.feed(piece)
        out.append((events, p.held, p.max_held))
    out.append((p.end(), p.held, p.max_held))
    return out


@pytest.mark.parametrize("dialect", sorted(FORMS))
def test_open_decides_as_the_scan_at_every_cut(dialect: str) -> None:
    form = FORMS[dialect]
    texts = [
        "see " + form + " ok",
        "see `" + form + "` ok",  # quoted: prose
        "a" + form.lstrip("\n") + " b",  # command: not at a line's start
        "x\n" + form.lstrip("\n") + form,  # two calls, the second right after the first
    ]
    for text in texts:
        for size in range(1, 9):
            for offset in range(size):
                cuts = [0, *range(offset or size, len(text), size), len(text)]
                pieces = [text[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]
                assert _trace(dialect, pieces, True) == _trace(dialect, pieces, False), pieces


@pytest.mark.parametrize("dialect", sorted(FORMS))
def test_open_skips_the_scan(dialect: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A canonical call whose marker completes a held start, or follows prose in
    one delta, opens without ``_scan``."""
    scans = [0]
    scan = TextModes._scan

    def counted(self: TextModes, *args: Any) -> int:
        scans[0] += 1
        return scan(self, *args)

    monkeypatch.setattr(TextModes, "_scan", counted)
    form = FORMS[dialect].lstrip("\n")
    lead = "prose\n"
    for pieces in ([lead + form[:3], form[3:]], [lead + form]):
        p = Parser(dialect, ["search"])
        # (text first: at a reply's start ``<think>`` may open reasoning, and the
        # scan reads the first delta, ``TextModes._quiet``)
        assert p.feed("Sure. ") == [TextDelta(text="Sure. ")]
        scans[0] = 0
        events = [e for piece in pieces for e in p.feed(piece)]
        assert [type(e).__name__ for e in events][-1] in ("CallEnd", "TextDelta")
        assert any(type(e).__name__ == "CallEnd" for e in events), (dialect, events)
        assert scans[0] == 0, (dialect, pieces)
