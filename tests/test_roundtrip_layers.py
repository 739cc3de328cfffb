"""Render side against parse side, at any chunking: a call written the way the
prompt teaches reads back as that call, whatever its name (of those the dialect
offers) and values hold, and a reply read, written back and read again keeps
its calls and its words."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamtools.events import CallEnd, CallError, CallStart, ParserEvent, ReasoningDelta, TextDelta
from streamtools.parser import Parser
from streamtools.prompts import RENDERERS, get_renderer
from streamtools.prompts.renderer import spoken
from streamtools.prompts.special_tokens import defuse_text
from streamtools.tools import ToolRegistry, tool
from streamtools.transcript import ToolCall

DIALECTS = list(RENDERERS)

_MARKUP = [
    *["</am:tool_call>", '<am:tool_call name="t">', "]]>", "<![CDATA[", "<tool_call>", "`"],
    *["</tool_call>", "```", "```json action\n", "\n@tool t {}", "@tool", "<think>", "</think>"],
    *['{"tool": "t", "arguments": {}}', "&amp;", "&", "<", "\\", '"', "\n", "\r\n", "\r", " "],
    *["\t", "é", "😀", "中文", "{", "}", "<|im_end|>", "<turn|>", "<|", "|>", "\u2028", "\x85"],
    *["\x00", "\ufeff", "</q>", "<q>", '<parameter name="q">', "</parameter>", "\n```\n"],
    *["\u2029", "\x0b", "\x0c", "\x1c", "\x85@tool t {}", "<am:request_tools>t</am:request_tools>"],
]
_awkward = st.lists(st.sampled_from(_MARKUP) | st.text(max_size=3), max_size=6).map("".join)
_keys = _awkward.filter(bool) | st.sampled_from(
    ["city", "x.y", "$top", "1st", "parameter", "am:tool_call", "a:b", "name", "tool", "arguments"]
)
_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _awkward
)
_value = st.recursive(
    _leaf,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(_awkward, c, max_size=3),
    max_leaves=8,
)
# names an API or a hand-made ToolSpec may carry; a dialect that cannot write one refuses it
_names = st.sampled_from(
    ["t", "kom.memory.v1.search_memory", "a-b_c", "ns/tool:v1", "0", "true", "-", "é名"]
    + ["a]]>b", "x<y", "a&b", "a'b", "a`b", "a b", 'a"b', "a{b", "@tool", "<tool_call>"]
)
_KINDS = {type(None): "null", bool: "boolean", int: "integer", float: "number", str: "string"}


class _Catalog:
    """One tool and its schema, as a parser catalog (no registry name rules)."""

    def __init__(self, name: str, schema: dict[str, Any] | None) -> None:
        self._name, self._schema = name, schema

    def __contains__(self, name: object) -> bool:
        return name == self._name

    def __iter__(self) -> Iterator[str]:
        return iter([self._name])

    def schema(self, name: str) -> dict[str, Any] | None:
        return self._schema if name == self._name else None

    def check_arguments(self, name: str, arguments: dict[str, Any]) -> str | None:
        return None


def _cut(text: str, rng: random.Random, most: int) -> list[str]:
    pieces, at = [], 0
    while at < len(text):
        size = rng.randint(1, most)
        pieces.append(text[at : at + size])
        at += size
    return pieces


def _read(dialect: str, catalog: Any, pieces: list[str]) -> list[ParserEvent]:
    parser = Parser(dialect, catalog)
    events = [e for piece in pieces for e in parser.feed(piece)]
    return events + parser.end("stop")


def _outcome(events: list[ParserEvent]) -> tuple[list[Any], str]:
    calls = [
        (e.name, e.arguments) if isinstance(e, CallEnd) else ("error", e.reason)
        for e in events
        if isinstance(e, CallEnd | CallError)
    ]
    return calls, "".join(e.text for e in events if isinstance(e, TextDelta))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dialect=st.sampled_from(DIALECTS),
    name=_names,
    arguments=st.dictionaries(_keys, _value, max_size=4),
    text=st.sampled_from([("", ""), ("Sure.", ""), ("See `x`", " Done."), ("a < b\n", "\nok")]),
    seed=st.integers(0, 10**6),
)
def test_a_call_as_taught_reads_back_at_any_chunking(
    dialect: str, name: str, arguments: dict[str, Any], text: tuple[str, str], seed: int
) -> None:
    """A past call written back between the reply's words (``render_reply``)
    reads back as the same name and arguments and the same words, whole, in
    random cuts and one character at a time, for every name the dialect offers."""
    r = get_renderer(dialect)
    if r.name_problem(name) is not None:
        return
    properties = {
        k: {"type": _KINDS.get(type(v), "array" if isinstance(v, list) else "object")}
        for k, v in arguments.items()
    }
    catalog = _Catalog(name, {"type": "object", "properties": properties})
    before, after = text
    call = ToolCall(id="c", name=name, arguments=arguments, offset=len(before))
    written = r.render_reply(before + after, [call])
    whole = _outcome(_read(dialect, catalog, [written]))
    assert whole[0] == [(name, msgspec.json.decode(msgspec.json.encode(arguments)))], written
    rng = random.Random(seed)
    assert _outcome(_read(dialect, catalog, _cut(written, rng, 7))) == whole, written
    assert _outcome(_read(dialect, catalog, list(written))) == whole, written


_TEXT = [
    *["Hi", " ", "\n", "`", "``", "```python\nx\n```", "<", "<b>", "&", "{", "}", '{"a": 1}'],
    *['"tool"', "@", "@tool", "tool", "</think>", "<am:", "<tool_", "]]>", "<|im_end|>", "<turn|>"],
    *["é", "😀", "json", "\n\n", "Tool Result (t):", '{"tool": "zz"}', "\t", "x |> f", "<|", "|>"],
]
_SCHEMAS = {
    "t": {"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}}
}
_small = st.lists(
    st.sampled_from([*"ab <>&\"'\\`{}\n]@|", "]]>", "</q>", "```", "<|im_end|>"]), max_size=8
).map("".join)
_call = st.builds(
    lambda name, q, n: (name, {k: v for k, v in {"q": q, "n": n}.items() if v is not None}),
    st.sampled_from(["t", "a.b"]),
    st.none() | _small,
    st.none() | st.integers(-5, 10**20),
)


class _TwoTools(_Catalog):
    def __contains__(self, name: object) -> bool:
        return name in ("t", "a.b")

    def __iter__(self) -> Iterator[str]:
        return iter(["t", "a.b"])

    def schema(self, name: str) -> dict[str, Any] | None:
        return _SCHEMAS.get(name)


def _reply(dialect: str, source: str, rng: random.Random) -> tuple[str, list[Any]]:
    """The visible text and the calls (as the agent records them) of ``source``."""
    text, starts = "", {}
    calls: list[Any] = []
    for e in _read(dialect, _TwoTools("", None), _cut(source, rng, 6)):
        if isinstance(e, TextDelta):
            text += e.text
        elif isinstance(e, CallStart):
            starts[e.id] = len(text)
        elif isinstance(e, CallEnd):
            at = starts.get(e.id, len(text))
            call = ToolCall(id=e.id, name=e.name, arguments=e.arguments, raw=e.raw, offset=at)
            calls.append(call)
        elif isinstance(e, CallError):
            calls.append(("error", e.reason))
    return text, calls


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dialect=st.sampled_from(DIALECTS),
    items=st.lists(st.sampled_from(_TEXT) | _call, max_size=6),
    seed=st.integers(0, 99),
    keep_raw=st.booleans(),
)
def test_a_reply_read_written_back_and_read_again_keeps_its_calls_and_words(
    dialect: str, items: list[Any], seed: int, keep_raw: bool
) -> None:
    """Model output (words that stay words, calls in the taught form), read as
    the agent reads it, written back into history with the calls' raw text or
    without it (native history), and read again: the same calls, the same
    words (up to the line breaks that set a canonical call apart)."""
    r = get_renderer(dialect)
    source = ""
    for item in items:
        if isinstance(item, str):
            source += item
        else:
            call = r.format_call(*item)
            source += f"\n{call}\n" if r.calls_start_lines else call
    rng = random.Random(seed)
    text, calls = _reply(dialect, source, rng)
    if not calls or any(isinstance(c, tuple) for c in calls):
        return  # a call the words around it broke: nothing to write back
    if r.one_call_per_reply and len(calls) > 1:
        return
    if not keep_raw:
        calls = [msgspec.structs.replace(c, raw=None) for c in calls]
    written = r.render_reply(text, calls)
    text_again, calls_again = _reply(dialect, written, rng)
    assert [c if isinstance(c, tuple) else (c.name, c.arguments) for c in calls_again] == [
        (c.name, c.arguments) for c in calls
    ], (source, written)
    if dialect != "json_object":  # there the words become the thought
        squeezed = "".join(text_again.split())
        assert squeezed in (
            "".join(spoken(text).split()),
            "".join(defuse_text(text).split()),
            # the words around calls are pieces apart: ``<am:`` and ``|>`` on either
            # side of one are not the token ``<am:|>`` that ends a reply
            "".join(_spoken_pieces(text, calls).split()),
        )


def _spoken_pieces(text: str, calls: list[ToolCall]) -> str:
    """The words of a reply between its calls, each piece as written back: the
    last ``spoken`` (a token ending the reply left out), the others defused."""
    cuts = [0, *(c.offset or 0 for c in calls), len(text)]
    pieces = [text[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]
    return "".join(map(defuse_text, pieces[:-1])) + spoken(pieces[-1])


# --- disagreements found, in the parser's half (streamtools/parser is another's area) ---


@tool
def search(query: str, tag: str | None = None) -> str:
    """Search."""
    return query


def test_am_xml_a_null_for_a_nullable_string_reads_back_as_null() -> None:
    """``search(query="x", tag=None)`` (a native call, as OpenAI strict mode sends
    every optional parameter; hybrid or proxy history in ``am_xml``) is written
    back ``<tag>null</tag>``, which reads back as the string ``"null"``: a model
    copying its history sends ``tag="null"`` to the tool, silently."""
    call = ToolCall(id="c", name="search", arguments={"query": "x", "tag": None})
    written = get_renderer("am_xml").render_call(call)
    ends = [e for e in _read("am_xml", ToolRegistry([search]), [written]) if isinstance(e, CallEnd)]
    assert [e.arguments for e in ends] == [{"query": "x", "tag": None}]


@pytest.mark.parametrize("most", [1, 100])
def test_json_action_think_right_after_a_closing_fence_is_reasoning(most: int) -> None:
    """``…}\\n```<think>r</think>`` gives TextDelta ``<think>r</think>``;
    ``…}\\n``` <think>r</think>`` gives ReasoningDelta ``r``, as hermes and
    am_xml give for ``</tool_call><think>``. DESIGN §2.9: reasoning is never shown."""
    source = '```json action\n{"tool": "t", "parameters": {}}\n```<think>r</think>'
    events = _read("json_action", ["t"], _cut(source, random.Random(0), most))
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["r"]
    assert not [e for e in events if isinstance(e, TextDelta)]
