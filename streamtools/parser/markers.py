"""What the parser's text and reasoning modes scan for, built once per marker set.

Theory of operation
-------------------
``MarkerScan`` holds one mode's tables: one compiled pattern of every marker
(factored by common prefixes, finding the longest marker where several
start), a character class of their first characters, every
proper prefix (what may be held back at the end of a buffer) and the prefixes
that hold no whole marker (a buffer that is one of them can only be held). The
tables are immutable, so parsers with the same markers share one
(``marker_scan``, cached): a parser is made per model turn, and building the
tables was most of what ``Parser()`` cost.

``stop_strings`` checks and normalises the caller's stop strings; ``syntax_of``
resolves a dialect name.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from typing import Any

from streamtools.errors import UnknownDialectError, UsageError
from streamtools.parser.calls import DialectSyntax

__all__ = ["MarkerScan", "marker_scan", "stop_strings", "syntax_of"]


class MarkerScan:
    """One mode's scanning tables: full-match alternation, start chars, prefixes.
    Immutable, so parsers with the same markers share one (``marker_scan``)."""

    __slots__ = (
        "by_length", "holding", "longest", "markers", "partial", "prefixes", "rx", "start_rx",
    )

    def __init__(self, markers: Iterable[str]) -> None:
        ordered = sorted(set(markers), key=len, reverse=True)
        self.markers = frozenset(ordered)
        self.rx = re.compile(_trie(ordered))
        starts = sorted({m[0] for m in ordered})
        self.start_rx = re.compile("[" + "".join(re.escape(c) for c in starts) + "]")
        self.prefixes = frozenset(m[:k] for m in ordered for k in range(1, len(m)))
        # prefixes holding no whole marker (one marker may begin another): a buffer
        # that is one of these can only be held, whatever else is true
        self.partial = frozenset(p for p in self.prefixes if self.rx.search(p) is None)
        self.longest = len(ordered[0])
        self.by_length = tuple(reversed(ordered))  # shortest first
        # markers with another inside them, ending before they do (``STOP`` holds
        # ``ST``): only where one of these matched can another end first
        self.holding = frozenset(t for t in ordered if any(u in t[:-1] for u in ordered))

    def first_to_end(self, s: str, i: int, e: int) -> tuple[int, str]:
        """Of the markers in ``s[i:e]`` (``rx`` found ``s[i:e]``: the leftmost,
        longest there), the one that ends first, and where it starts; on a tie,
        the one that starts first. Text arriving a character at a time meets
        them in that order, so a whole delta must decide the same way: the stop
        string ``ST`` stops a reply before ``STOP`` could, and ``<th`` before
        ``<think>`` could open reasoning. Only a match in ``holding`` can have
        another end first inside it (the text of the span is the match)."""
        best, tok = i, s[i:e]
        for j in range(i, e):
            for t in self.by_length:
                if j + len(t) >= e:
                    break  # no earlier end at j (the rest are longer)
                if s.startswith(t, j):
                    best, tok, e = j, t, j + len(t)
                    break
        return best, tok


def _trie(markers: Sequence[str]) -> str:
    """One pattern for the markers, factored by their common prefixes
    (``a(?:b|c)`` for ``ab|ac``): at each character one branch at most can
    match, so ``re`` does not try every marker at every candidate position (a
    dialect with several markers that share a start, ``json_action``'s fences).
    It matches what the longest-first alternation matches: the longest marker
    there (an optional tail is greedy). Very long markers (a caller's stop
    string) get the plain alternation, the pattern's nesting being that deep."""
    if max(map(len, markers)) > 200:
        return "|".join(re.escape(m) for m in markers)
    root: dict[str, Any] = {}
    for m in markers:
        node = root
        for c in m:
            node = node.setdefault(c, {})
        node[""] = {}

    def pattern(node: dict[str, Any]) -> str:
        branches = [re.escape(c) + pattern(child) for c, child in sorted(node.items()) if c]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return pattern(root)


@functools.lru_cache(maxsize=64)
def marker_scan(markers: tuple[str, ...]) -> MarkerScan:
    return MarkerScan(markers)


def syntax_of(dialect: str | DialectSyntax) -> DialectSyntax:
    if isinstance(dialect, DialectSyntax):
        return dialect
    from streamtools.parser.dialects import DIALECTS

    try:
        return DIALECTS[dialect]
    except KeyError:
        raise UnknownDialectError.of(dialect, DIALECTS) from None


def stop_strings(stop: str | Sequence[str] | None) -> frozenset[str]:
    # a str is one stop string, not a sequence of one-character ones (the provider
    # APIs take ``stop="..."`` the same way)
    stops = (stop,) if isinstance(stop, str) else tuple(stop or ())
    for s in stops:
        if not isinstance(s, str) or not s:
            raise UsageError(f"stop strings must be non-empty str, got {s!r} in stop={stop!r}")
    return frozenset(stops)
