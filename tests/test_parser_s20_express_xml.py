"""The ``am_xml`` express reader (``streamtools.parser.express_xml``) against the
general machine.

As for the JSON family (``test_parser_s19_express``): for any reply and any cuts, a
parser with the express reader gives, feed for feed, the events, ``held`` and
``max_held`` a parser without it gives. Replies here are canonical calls (every
kind of value a schema gives: strings, numbers, arrays, nullable and listed
strings, several types, undeclared; layout newlines, quotes, whitespace between
elements), mutated calls (a character inserted, deleted or replaced at or next
to every structural point), values the reader hands over (CDATA, entities, a
stray ``<``, CR), prose with markup, and random cuts.
"""

from __future__ import annotations

import random
from typing import Any, Literal

from hypothesis import given, settings
from hypothesis import strategies as st
from test_parser_s19_express import EXAMPLES, _cuts, _express

from streamtools.events import ParserEvent
from streamtools.parser import Parser
from streamtools.parser.catalog import ToolCatalog
from streamtools.parser.express_xml import XLANE, XON
from streamtools.tools import ToolRegistry


def search(
    query: str,
    limit: int = 10,
    tags: list[str] | None = None,
    note: str | None = None,
    unit: Literal["c", "f"] = "c",
    mixed: int | str = 0,
    opts: dict[str, int] | None = None,
) -> str:
    """Search."""
    return query


def get_weather(city: str) -> str:
    """Weather."""
    return city


REGISTRY = ToolRegistry([search, get_weather])
TOOLS: tuple[list[str] | ToolCatalog | None, ...] = (
    None, ["search", "get_weather"], ["other"], REGISTRY,
)


def _run(
    tools: list[str] | ToolCatalog | None, pieces: list[str], on: bool, finish: str | None
) -> list[Any]:
    with _express(on):
        p = Parser("am_xml", tools, think_open=len(pieces) % 4 == 1)
    trace: list[Any] = []
    for piece in pieces:
        events: list[ParserEvent] = p.feed(piece)
        trace.append((piece, events, p.held, p.max_held))
    trace.append(("<end>", p.end(finish), p.held, p.max_held))
    return trace


PARAMS = ["query", "limit", "tags", "note", "unit", "mixed", "opts", "city", "other", "q_2"]
TRICKY = [
    "plain words here", "42", "-3.5", "[1, 2]", '["a", "b"]', '{"k": 1}', "null", "nul", "n",
    "numbers 42", "", " ", "\n", "\nx = 1\n", "a\nb", "\n\n", 'q"uote', "a\\b", "c", " f ",
    "true", "True", "你好 👋 é", "\t tab", "[1,\n 2]", "[1, 2", "{}", "<", "a < b", "a &amp; b",
    "&#91;1]", "<![CDATA[x<y]]>", "a\r\nb", "\r\n", "x]]>", "</am:tool_call>", "<b>x</b>",
    "\x01", "\u2028", "1e3", "01", " [1] ", "null ", "nu ll", "a\r", "\ud83d\ude00x",
]
VALUES = st.sampled_from(TRICKY) | st.text(alphabet="ab <>/&\n\r\"\\[]{}1n", max_size=10)
SPACE = st.sampled_from(["", "", "", "\n", " ", "\n  ", "\r\n", "\t"])
MUTANT = st.sampled_from(list('<>/"= \n&![]{}aqn1-:') + ["\t", "é", "👋", "\r", "\x01"])
PROSE = st.lists(
    st.sampled_from(list("ab .,\n`<>/\"=:") + [
        "<am:tool_call", '<am:tool_call name="search">', "</am:tool_call>", "<am:request_tools>",
        "<tool_call>", "<think>", "</think>", "<query>", "am:", "&amp;",
    ]),
    max_size=12,
).map("".join)


@st.composite
def calls(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(["search", "search", "get_weather", "x", "functions.search",
                                 "bad name", ""]))
    names = draw(st.lists(st.sampled_from(PARAMS), max_size=4))
    body = [draw(SPACE)]
    for p in names:
        body.append(f"<{p}>{draw(VALUES)}</{p}>")
        body.append(draw(SPACE))
    call = f'<am:tool_call name="{name}">' + "".join(body) + "</am:tool_call>"
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):  # mutations near structure
        points = [i for i, c in enumerate(call) if c in '<>/"= \n'] or [0]
        at = max(0, min(len(call), draw(st.sampled_from(points)) + draw(st.integers(-1, 1))))
        kind = draw(st.sampled_from(["insert", "delete", "replace"]))
        c = draw(MUTANT)
        if kind == "insert":
            call = call[:at] + c + call[at:]
        elif kind == "delete":
            call = call[:at] + call[at + 1 :]
        else:
            call = call[:at] + c + call[at + 1 :]
    return call


@st.composite
def replies(draw: st.DrawFn) -> tuple[list[str] | ToolCatalog | None, str, int]:
    tools = draw(st.sampled_from(TOOLS))
    parts = [draw(PROSE)]
    for _ in range(draw(st.integers(1, 3))):
        parts.append(draw(calls()))
        parts.append(draw(PROSE))
    if draw(st.integers(0, 9)) == 0:  # a reply cut inside its last call
        text = "".join(parts)
        parts = [text[: draw(st.integers(0, len(text)))]]
    return tools, "".join(parts), draw(st.integers(0, 2**32))


@settings(max_examples=EXAMPLES)
@given(replies(), st.sampled_from(["stop", "length", None]))
def test_express_xml_is_invisible(
    case: tuple[list[str] | ToolCatalog | None, str, int], finish: str | None
) -> None:
    tools, text, seed = case
    pieces = _cuts(text, seed)
    assert _run(tools, pieces, True, finish) == _run(tools, pieces, False, finish)


def _canonical(r: random.Random) -> str:
    return (
        'see <am:tool_call name="search"><query>maps 👋 é "x"</query><limit>84</limit>'
        "</am:tool_call> ok\n"
        '<am:tool_call name="search">\n  <query>\nline one\nline two\n</query>\n'
        '  <tags>["a", "b"]</tags>\n  <note>null</note><opts>{"k": 1}</opts>\n</am:tool_call>'
        '<am:tool_call name="get_weather"></am:tool_call><'
    )


def test_express_xml_canonical_calls_match_at_every_cut() -> None:
    """The bench's call shapes and a laid-out call, at every cut phase of sizes
    1-7, both ways, with each kind of catalog."""
    text = _canonical(random.Random(5))
    for tools in TOOLS:
        for size in range(1, 8):
            for offset in range(size):
                cuts = [0, *range(offset or size, len(text), size), len(text)]
                pieces = [text[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]
                for finish in ("stop", None):
                    got = _run(tools, pieces, True, finish)
                    assert got == _run(tools, pieces, False, finish), (tools, pieces)


def test_express_xml_values_match_at_every_cut() -> None:
    """Each tricky value in a string, an integer and an undeclared parameter, at
    every cut phase of sizes 1-3 (a CR or a newline alone in a delta, a tag cut
    anywhere), both ways."""
    for value in TRICKY:
        for param in ("query", "limit", "other"):
            text = (
                f'x<am:tool_call name="search"><{param}>{value}</{param}>\n'
                "</am:tool_call>y"
            )
            for tools in (None, REGISTRY):
                for size in range(1, 4):
                    for offset in range(size):
                        cuts = [0, *range(offset or size, len(text), size), len(text)]
                        pieces = [text[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]
                        got = _run(tools, pieces, True, "stop")
                        assert got == _run(tools, pieces, False, "stop"), (tools, pieces)


def test_express_xml_takes_the_canonical_call() -> None:
    """The express path really runs on the bench's calls (a switch that did
    nothing would pass the differential tests): no body is built for them, and
    their string values take the lane."""
    for tools in TOOLS[:2]:
        with _express(True):
            p = Parser("am_xml", tools)
        text = (
            '<am:tool_call name="search"><query>the model answers with prose</query>'
            "<limit>42</limit></am:tool_call>"
        )
        states = set()
        for piece in _cuts(text, 5):
            p.feed(piece)
            states.add(p._xs)
            assert p._body is None, piece
        assert states >= {XLANE, XON}, states
