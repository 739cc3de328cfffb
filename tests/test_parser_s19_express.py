"""The express reader (``streamtools.parser.express``) against the general machine.

The express path reads a JSON-family call spelled the canonical way and hands the
call to the general machine (a replay of its raw text, with the same cuts) at
the first thing it does not follow. It must never be seen: for any reply and any
cuts, a parser with it gives, feed for feed, the events, ``held`` and
``max_held`` a parser without it gives. Replies here are canonical calls,
mutated calls (a character inserted, deleted or replaced at or next to every
structural point of the call), prose with markup characters, and random cuts.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from streamtools.events import ParserEvent
from streamtools.parser import Parser, express

DIALECTS = ("hermes", "json_action", "command", "inline_json")
TOOLS: tuple[list[str] | None, ...] = (None, ["search", "get_weather"], ["other"])


@contextmanager
def _express(on: bool) -> Iterator[None]:
    was = express.ENABLED
    express.ENABLED = on
    try:
        yield
    finally:
        express.ENABLED = was


def _run(
    dialect: str, tools: list[str] | None, pieces: list[str], on: bool, finish: str | None
) -> list[Any]:
    with _express(on):
        # (reasoning first, ``think_open``, in one case of four: its path to text)
        p = Parser(dialect, tools, think_open=len(pieces) % 4 == 1)
    trace: list[Any] = []
    for piece in pieces:
        events: list[ParserEvent] = p.feed(piece)
        trace.append((piece, events, p.held, p.max_held))
    trace.append(("<end>", p.end(finish), p.held, p.max_held))
    return trace


def _call(dialect: str, name: str, args: str, r: random.Random) -> str:
    if dialect == "hermes":
        lead = r.choice(["", "\n"])
        mid = r.choice(['", "arguments": ', '", "arguments":'])
        tail = r.choice(["}</tool_call>", "}\n</tool_call>"])
        return f'<tool_call>{lead}{{"name": "{name}{mid}{args}{tail}'
    if dialect == "json_action":
        return f'```json action\n{{"tool": "{name}", "parameters": {args}}}\n```'
    if dialect == "command":
        return f"\n@tool {name} {args}\n"
    key = r.choice(["tool", "name"])
    return f'{{"{key}": "{name}", "arguments": {args}}}'


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(alphabet=st.characters(codec="utf-8"), max_size=12)
    | st.text(alphabet="ab é👋<>{}[]:,`@/", max_size=12)
    | st.sampled_from(["plain words here", "a\\b", 'q"uote', "</tool_call>", "```", "{x}"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
ARGS = st.dictionaries(
    st.sampled_from(["query", "limit", "q", "", "k y"]), VALUES, max_size=4
)
MUTANT = st.sampled_from(list('{}[]":, \n\\<>/`@abt01-.') + ["\t", "é", "👋", "\x01"])
PROSE = st.lists(
    st.sampled_from(list("ab .,\n`<>{}\"@/t_:") + [
        "<tool_call>", "```json action\n", "@tool ", '"function":', '"tool": "', "```", "ac",
        "<think>", "</think>",
    ]),
    max_size=12,
).map("".join)


def _structural(text: str) -> list[int]:
    return [i for i, c in enumerate(text) if c in '{}[]":,<>`@\n '] or [0]


@st.composite
def replies(draw: st.DrawFn) -> tuple[str, list[str] | None, str, int]:
    dialect = draw(st.sampled_from(DIALECTS))
    tools = draw(st.sampled_from(TOOLS))
    r = random.Random(draw(st.integers(0, 2**32)))
    parts = [draw(PROSE)]
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(["search", "search", "get_weather", "x", "bad name",
                                     "functions.search"]))
        args = json.dumps(draw(ARGS), ensure_ascii=draw(st.sampled_from([False, False, True])),
                          separators=draw(st.sampled_from([(", ", ": "), (",", ":")])))
        call = _call(dialect, name, args, r)
        for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):  # mutations near structure
            points = _structural(call)
            at = draw(st.sampled_from(points)) + draw(st.integers(-1, 1))
            at = max(0, min(len(call), at))
            kind = draw(st.sampled_from(["insert", "delete", "replace"]))
            c = draw(MUTANT)
            if kind == "insert":
                call = call[:at] + c + call[at:]
            elif kind == "delete":
                call = call[:at] + call[at + 1 :]
            else:
                call = call[:at] + c + call[at + 1 :]
        parts.append(call)
        parts.append(draw(PROSE))
    return dialect, tools, "".join(parts), draw(st.integers(0, 2**32))


def _cuts(text: str, seed: int) -> list[str]:
    r = random.Random(seed)
    mode = seed % 4
    if mode == 0:
        return list(text)
    out, i = [], 0
    high = (6, 13, 40)[mode - 1]
    while i < len(text):
        k = r.randint(0 if mode == 3 else 1, high)
        out.append(text[i : i + k])
        i += k
    return out


# 300 in the suite (CI's budget); STREAMTOOLS_EXPRESS_EXAMPLES=3000 to run it as the
# express path's acceptance did
EXAMPLES = int(os.environ.get("STREAMTOOLS_EXPRESS_EXAMPLES", "300"))


@settings(max_examples=EXAMPLES)
@given(replies(), st.sampled_from(["stop", "length", None]))
def test_express_is_invisible(
    case: tuple[str, list[str] | None, str, int], finish: str | None
) -> None:
    dialect, tools, text, seed = case
    pieces = _cuts(text, seed)
    assert _run(dialect, tools, pieces, True, finish) == _run(dialect, tools, pieces, False, finish)


def test_express_canonical_calls_match_at_every_cut() -> None:
    """The bench's own call shapes, at every cut phase of sizes 1-7, both ways."""
    for dialect in DIALECTS:
        r = random.Random(5)
        text = "see " + _call(dialect, "search", '{"query": "maps 👋 é", "limit": 84}', r) + " ok"
        text += _call(dialect, "search", '{"a": [1, -2.5, {"b": ""}], "c": {}}', r) + "<"
        for size in range(1, 8):
            for offset in range(size):
                cuts = [0, *range(offset or size, len(text), size), len(text)]
                pieces = [text[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]
                for finish in ("stop", None):
                    got = _run(dialect, None, pieces, True, finish)
                    assert got == _run(dialect, None, pieces, False, finish), (dialect, pieces)


def test_express_matches_on_texts_that_end_in_a_marker() -> None:
    """A marker the rescan of a rejected body finds at ``end()`` is the general
    machine's (the express reader was once opened there and its ``{`` lost)."""
    for dialect, text in [
        ("inline_json", '{"function":{'), ("inline_json", '{"tool": "search", {'),
        ("hermes", "<tool_call>x<tool_call>"), ("json_action", "```json action\n{```json action\n"),
        ("command", "@tool \n@tool "),
    ]:
        for tools in TOOLS:
            for finish in ("stop", None):
                for seed in range(4):
                    pieces = _cuts(text, seed)
                    got = _run(dialect, tools, pieces, True, finish)
                    assert got == _run(dialect, tools, pieces, False, finish), (dialect, pieces)


def test_express_takes_the_canonical_call() -> None:
    """The express path really runs on the bench's calls (a switch that did nothing
    would pass the differential tests): no body is built for them."""
    for dialect in DIALECTS:
        with _express(True):
            p = Parser(dialect)
        text = _call(dialect, "search", '{"query": "maps", "limit": 84}', random.Random(1))
        seen = False
        for piece in _cuts(text, 5):
            p.feed(piece)
            seen = seen or p._xs != 0
            assert p._body is None, (dialect, piece)
        assert seen, dialect
