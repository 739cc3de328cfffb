"""Table-driven parser cases (tests/parser_cases.py), each run whole, one
character at a time, at random cuts and with empty deltas in between; every run
is checked for conservation, append-only arguments, hold-back and the fast path."""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator
from typing import Any

import pytest
from parser_cases import (
    CASES,
    Case,
    every_chunking,
    feed_all,
    merge,
    phase_cuts,
    run_checked,
    summary,
)

from streamtools.events import CallEnd, CallError, CallStart, TextDelta
from streamtools.parser import Parser
from streamtools.tools import ToolRegistry, tool


class SchemaCatalog:
    """A small ToolCatalog with schemas, standing in for ToolRegistry."""

    schemas: dict[str, dict[str, Any]] = {
        "search": {"type": "object", "properties": {"q": {"type": "string"}}},
        "calc": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "integer"}},
            "required": ["a"],
        },
    }

    def __contains__(self, name: object) -> bool:
        return name in self.schemas

    def __iter__(self) -> Iterator[str]:
        return iter(self.schemas)

    def schema(self, name: str) -> dict[str, Any] | None:
        return self.schemas.get(name)

    def check_arguments(self, name: str, arguments: dict[str, Any]) -> str | None:
        props = self.schemas[name]["properties"]
        for key in self.schemas[name].get("required", []):
            if key not in arguments:
                return f"missing required parameter {key!r}."
        for key, value in arguments.items():
            want = props.get(key, {}).get("type")
            # JSON Schema: a boolean is not a number (Python's bool is an int)
            if want == "number" and (not isinstance(value, int | float) or isinstance(value, bool)):
                return f"Expected `number`, got `{type(value).__name__}` - at `$.{key}`."
            if want == "string" and not isinstance(value, str):
                return f"Expected `str` - at `$.{key}`."
        return None


def _tools(case: Case) -> Any:
    return SchemaCatalog() if case.extra.get("catalog") else list(case.tools)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_every_chunking(case: Case) -> None:
    every_chunking(
        case.dialect, case.text, _tools(case), case.expect, case.stop, case.finish_reason,
        case.think_open,
    )


SPLIT_TEXTS = {
    "am_xml": 'ab <am:tool_call name="search"><q>x</q></am:tool_call> cd',
    "hermes": 'ab <tool_call>{"name": "search", "arguments": {"q": "x"}}</tool_call> cd',
    "json_action": 'ab ```json action\n{"tool": "search", "parameters": {"q": "x"}}\n``` cd',
    "inline_json": 'ab {"tool": "search", "arguments": {"q": "x"}} cd',
    "command": 'ab\n@tool search {"q": "x"} cd',
    "json_object": '<think>ab</think>{"action": {"tool": "search", "args": {"q": "x"}}}',
}


@pytest.mark.parametrize("dialect", sorted(SPLIT_TEXTS))
def test_marker_split_at_every_position(dialect: str) -> None:
    text = SPLIT_TEXTS[dialect]
    expect = summary(run_checked(dialect, [text], ["search"]))
    assert ("call", "search", {"q": "x"}) in expect
    pairs = dialect in ("am_xml", "hermes")
    for k in range(len(text) + 1):
        for j in range(k, len(text) + 1) if pairs else (k,):
            events = run_checked(dialect, [text[:k], text[k:j], text[j:]], ["search"])
            assert summary(events) == expect, (k, j)


def test_schema_types_am_xml() -> None:
    text = ('<am:tool_call name="calc"><a>7</a><b>x</b></am:tool_call>'
            '<am:tool_call name="search"><q>42</q></am:tool_call>')
    events = run_checked("am_xml", list(text), SchemaCatalog())
    errors = [e for e in events if isinstance(e, CallError)]
    ends = [e for e in events if isinstance(e, CallEnd)]
    assert [e.reason for e in errors] == []  # b is not checked as integer by the stand-in
    assert ends[0].arguments == {"a": 7, "b": "x"}
    assert ends[1].arguments == {"q": "42"}  # schema says string: no number heuristic


class Unit(enum.Enum):
    C = "C"
    F = "F"


@tool
def note(
    text: str | None = None, unit: Unit = Unit.C, count: int | None = None, any_: int | str = 0
) -> str:
    """Write a note."""
    return ""


def test_am_xml_reads_types_through_any_of_ref_and_enum() -> None:
    """``str | None`` is ``anyOf: [string, null]`` and an enum a ``$ref`` (msgspec
    and pydantic write them so): their values were typed by the number heuristic,
    so ``<text>123</text>`` became 123 and failed validation."""
    text = (
        '<am:tool_call name="note"><text>123</text><unit>F</unit><count>5</count>'
        "<any_>7</any_></am:tool_call>"
    )
    events = run_checked("am_xml", list(text), ToolRegistry([note]))
    assert [e for e in events if isinstance(e, CallError)] == []
    (end,) = [e for e in events if isinstance(e, CallEnd)]
    # int | str says neither: the heuristic still decides
    assert end.arguments == {"text": "123", "unit": "F", "count": 5, "any_": 7}


class _ForeignCatalog:
    """A tool whose schema came from elsewhere (a proxy client, an MCP server)."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self._schema = schema

    def __contains__(self, name: object) -> bool:
        return name == "t"

    def __iter__(self) -> Iterator[str]:
        return iter(["t"])

    def schema(self, name: str) -> dict[str, Any] | None:
        return self._schema

    def check_arguments(self, name: str, arguments: dict[str, Any]) -> str | None:
        return None


@pytest.mark.parametrize(
    "prop",
    [{"type": [[]]}, {"type": [{}, "null"]}, {"oneOf": [{"type": ["string"]}, {"type": [[]]}]}],
)
def test_am_xml_malformed_foreign_schema_types_are_no_type(prop: dict[str, Any]) -> None:
    """A ``type`` list holding a list or an object is no type (the value is the
    text, as with no schema), not a TypeError out of ``feed``."""
    catalog = _ForeignCatalog({"type": "object", "properties": {"a": prop}})
    events = run_checked("am_xml", ['<am:tool_call name="t"><a>5</a></am:tool_call>'], catalog)
    (end,) = [e for e in events if isinstance(e, CallEnd)]
    assert end.arguments == {"a": "5"}


@pytest.mark.parametrize("value", ['"', '"abc', '"a"b', "[1,", "{"])
def test_am_xml_typed_value_that_is_not_json_is_invalid_arguments(value: str) -> None:
    """A number parameter whose text is broken JSON is a wrong argument (the model
    is told the type it should be), never arguments that are not JSON at all."""
    text = f'<am:tool_call name="calc"><a>{value}</a></am:tool_call>'
    events = run_checked("am_xml", list(text), SchemaCatalog())
    error = next(e for e in events if isinstance(e, CallError))
    assert error.reason == "invalid_arguments" and "number" in error.message


def test_invalid_arguments_message_tells_what_to_fix() -> None:
    text = '<am:tool_call name="calc"><a>seven</a></am:tool_call>'
    events = run_checked("am_xml", [text], SchemaCatalog())
    error = next(e for e in events if isinstance(e, CallError))
    assert error.reason == "invalid_arguments"
    assert "$.a" in error.message and "calc" in error.message
    assert error.raw == text


@pytest.mark.parametrize(
    ("dialect", "text"),
    [
        ("hermes", '<tool_call>{"arguments": {}}</tool_call>'),
        ("json_action", '```json action\n{"tool": "w", "parameters": {"a": 1e999}}\n```'),
        ("inline_json", '{"tool": "w", "arguments": {"a": 1e999}}'),
        ("json_object", '{"action": {"args": {}}}'),
        ("command", '@tool w {"a": 1e999}'),
        ("am_xml", "<am:tool_call><a>1</a></am:tool_call>"),
    ],
)
def test_call_error_message_and_example_are_separate_sentences(dialect: str, text: str) -> None:
    # the dialect's example after the message, once glued on: "no tool name.Write …"
    (error,) = [e for e in run_checked(dialect, [text], None) if isinstance(e, CallError)]
    assert re.search(r"\.(Write|Reply)", error.message) is None, error.message
    assert re.search(r"\. (Write|Reply)", error.message) is not None, error.message


def test_text_outside_parameters_message_tells_what_to_fix() -> None:
    def error(text: str) -> CallError:
        events = feed_all(Parser("am_xml", ["calc"]), [text])
        errors = [e for e in events if isinstance(e, CallError)]
        assert len(errors) == 1 and errors[0].raw == text and errors[0].reason == "malformed"
        return errors[0]

    msg = error('<am:tool_call name="calc"><a>1</a>garbage<b>2</b></am:tool_call>').message
    assert "'garbage'" in msg and "<![CDATA[" in msg and "'</a>'" in msg
    msg = error('<am:tool_call name="calc"><a>{"s": "</a>"}</a></am:tool_call>').message
    assert """'"}'""" in msg and "after </a>" in msg and "<![CDATA[" in msg
    msg = error('<am:tool_call name="calc"><a>x</a></a></am:tool_call>').message
    assert "'</a>'" in msg


def test_unknown_tool_message_lists_allowed_names() -> None:
    events = run_checked("hermes", ['<tool_call>{"name": "rm", "arguments": {}}</tool_call>'],
                         ["search", "calc"])
    error = next(e for e in events if isinstance(e, CallError))
    assert "'rm'" in error.message and "search, calc" in error.message


def test_string_parameter_streams_as_it_grows() -> None:
    from streamtools.events import ArgsDelta
    from streamtools.parser import Parser

    p = Parser("am_xml", SchemaCatalog())  # calc: a number
    assert p.feed('<am:tool_call name="calc"><q>hel') != []
    got = p.feed('lo "w')
    assert got == [ArgsDelta(index=0, id="call_0", delta='lo \\"w')]
    typed = p.feed('</q><a>12')
    assert [e.delta for e in typed if isinstance(e, ArgsDelta)] == ['"', ', "a": ']
    assert p.feed("3</a>") == [ArgsDelta(index=0, id="call_0", delta="123")]


def test_json_args_hold_incomplete_tokens() -> None:
    from streamtools.events import ArgsDelta
    from streamtools.parser import Parser

    p = Parser("hermes")
    out = p.feed('<tool_call>{"name": "f", "arguments": {"a": 12')
    assert [e.delta for e in out if isinstance(e, ArgsDelta)] == ['{"a": ']
    assert p.feed('3, "b": "x\\') == [ArgsDelta(index=0, id="call_0", delta='123, "b": "x')]
    assert p.feed("u00e") == []
    assert p.feed('9", "c": tr') == [ArgsDelta(index=0, id="call_0", delta='\\u00e9", "c": ')]
    assert p.feed("ue}") == [ArgsDelta(index=0, id="call_0", delta="true}")]


def test_several_calls_and_text_in_one_delta() -> None:
    from streamtools.parser import Parser

    text = 'a<tool_call>{"name": "x"}</tool_call>b<tool_call>{"name": "y"}</tool_call>c'
    events = Parser("hermes").feed(text)
    assert [type(e).__name__ for e in events] == [
        "TextDelta", "CallStart", "ArgsDelta", "CallEnd", "TextDelta", "CallStart",
        "ArgsDelta", "CallEnd", "TextDelta",
    ]


def test_call_end_from_the_feed_that_closes() -> None:
    from streamtools.parser import Parser

    p = Parser("hermes")
    assert not any(isinstance(e, CallEnd) for e in p.feed('<tool_call>{"name": "x"}</tool_cal'))
    assert isinstance(p.feed("l>")[-1], CallEnd)


# a call per JSON dialect, and the index of the quote that closes its tool name
_NAMED = [
    ("hermes", '<tool_call>{"name": "search", "arguments": {"q": 1}}</tool_call>'),
    ("hermes", '<tool_call> { "name" :"search" , "arguments":{"q": 1}}</tool_call>'),
    ("hermes", '<tool_call>{"function": {"name": "search", "arguments": {}}}</tool_call>'),
    ("json_action", '```json action\n{"tool": "search", "parameters": {"q": 1}}\n```'),
    ("inline_json", 'see {"tool": "search", "arguments": {"q": 1}} then'),
    ("json_object", '{"thought": "t", "action": {"tool": "search", "args": {"q": 1}}}'),
]


@pytest.mark.parametrize(("dialect", "text"), _NAMED)
@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13])
def test_call_start_from_the_feed_that_names_the_tool(dialect: str, text: str, size: int) -> None:
    """Invariant 5, whatever the split: the envelope head may be held whole while
    it arrives, but never past the quote that ends the tool name."""
    name_end = text.index('"search"') + len('"search"') - 1
    for spans in phase_cuts(text, size):
        p = Parser(dialect, ["search"])
        events = []
        for a, b in spans:
            out = p.feed(text[a:b])
            started = [e for e in out if isinstance(e, CallStart)]
            assert bool(started) == (a <= name_end < b), (text[a:b], a, b)
            events += out
        events += p.end()
        assert [e.arguments for e in events if isinstance(e, CallEnd)] in ([{"q": 1}], [{}])


# calls whose arguments, envelope and closing marker end in the shapes models write
_CLOSED = [
    ("hermes", '<tool_call>{"name": "search", "arguments": {"q": "a", "n": 60}}</tool_call> x'),
    ("hermes", '<tool_call>{"name": "search", "arguments": {"n": 6} }\n</tool_call>'),
    ("hermes", '<tool_call>{"name": "search", "arguments": {"n": [1]}, "id": 2}</tool_call>'),
    ("hermes", '<tool_call>{"name": "search", "arguments": {"n": 1, }}</tool_call>'),
    ("json_action", '```json action\n{"tool": "search", "parameters": {"n": true}}\n```\nok'),
    ("json_action", '```json action\n{"tool": "search", "parameters": {}}```'),
    # arguments that end inside a string (the common shape), with a brace in it
    ("hermes", '<tool_call>{"name": "search", "arguments": {"q": "in Paris"}}</tool_call>'),
    (
        "hermes",
        '<tool_call>{"name": "search", "arguments": {"q": "a}b", "r": "é\\"x"} }</tool_call>',
    ),
    ("json_action", '```json action\n{"tool": "search", "parameters": {"q": "x]"}}\n```'),
    ("hermes", '<tool_call>{"name": "search", "arguments": {"q": "a", "k"}}</tool_call>'),
]


@pytest.mark.parametrize(("dialect", "text"), _CLOSED)
@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13])
def test_call_end_from_the_feed_that_closes_whatever_the_split(
    dialect: str, text: str, size: int
) -> None:
    """Invariant 5 at the other end: the arguments' and the envelope's closing
    braces may be taken and the marker's start held, but the call ends (CallEnd,
    or CallError for a broken object) in the feed that completes the marker, with
    the same events as one character at a time."""
    close = "</tool_call>" if dialect == "hermes" else "```"
    marker_end = text.rindex(close) + len(close) - 1
    whole = merge(feed_all(Parser(dialect, ["search"]), list(text)))
    for spans in phase_cuts(text, size):
        p = Parser(dialect, ["search"])
        events = []
        for a, b in spans:
            out = p.feed(text[a:b])
            ended = [e for e in out if isinstance(e, (CallEnd, CallError))]
            assert bool(ended) == (a <= marker_end < b), (text[a:b], a, b)
            events += out
        events += p.end()
        assert merge(events) == whole


# am_xml calls whose parameters open in the shapes the fast path takes, and in
# those it leaves to the machine
_AM_PARAMS = [
    '<am:tool_call name="search"><query>files calls</query><limit>60</limit></am:tool_call> ok',
    '<am:tool_call name="search">\n  <query>\nmulti\nline\n</query>\n</am:tool_call>',
    '<am:tool_call name="search"><q>a &amp; b</q><n/><parameter name="x">1</parameter>'
    "</am:tool_call>",
    '<am:tool_call name="search"><q><![CDATA[<b>]]></q>stray<r>x</r></am:tool_call>',
    '<am:tool_call name="search"><q>a</q><am:tool_call name="search"><q>b</q></am:tool_call>',
]


@pytest.mark.parametrize("text", _AM_PARAMS)
@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13])
def test_am_xml_parameters_open_alike_whatever_the_split(text: str, size: int) -> None:
    """However the deltas cut a parameter's opening tag, the events (merged) are
    those of one character at a time, raw text included."""
    whole = merge(feed_all(Parser("am_xml", ["search"]), list(text)))
    for spans in phase_cuts(text, size):
        events = feed_all(Parser("am_xml", ["search"]), [text[a:b] for a, b in spans])
        assert merge(events) == whole, spans

@pytest.mark.parametrize("held", [1, 100, 500, 512, 513])
def test_am_xml_child_tag_too_long_is_stray_text_whatever_the_split(held: int) -> None:
    """A child tag longer than the limit is stray text (a malformed call), also
    when its start was held and the rest, ``>`` and plain content, came in one
    delta (once read as a parameter named by its 600 characters)."""
    head = '<am:tool_call name="search"><' + "a" * 600
    chunks = [head[: 29 + held], head[29 + held :] + ">x", "</am:tool_call>"]
    events = run_checked("am_xml", chunks, ["search"])
    assert [(type(e).__name__, getattr(e, "reason", None)) for e in events[1:]] == [
        ("CallError", "malformed"), ("Finish", "stop")
    ]
    assert merge(events) == merge(run_checked("am_xml", ["".join(chunks)], ["search"]))


def test_one_megabyte_argument() -> None:
    from streamtools.parser import Parser

    big = "x\\n" * 520_000
    for dialect, text in [
        ("hermes", f'<tool_call>{{"name": "w", "arguments": {{"data": "{big}"}}}}</tool_call>'),
        ("am_xml", f'<am:tool_call name="w"><data>{big}</data></am:tool_call>'),
    ]:
        p = Parser(dialect)
        events = []
        for k in range(0, len(text), 4096):
            events += p.feed(text[k : k + 4096])
        events += p.end()
        end = next(e for e in events if isinstance(e, CallEnd))
        assert len(end.arguments["data"]) >= 1_000_000 and end.raw == text


_DEEP = "[" * 5000 + "]" * 5000
_DEEP_CALLS = {
    "hermes": f'<tool_call>{{"name": "w", "arguments": {{"v": {_DEEP}}}}}</tool_call>',
    "json_action": f'```json action\n{{"tool": "w", "parameters": {{"v": {_DEEP}}}}}\n```',
    "inline_json": f'{{"tool": "w", "arguments": {{"v": {_DEEP}}}}}',
    "json_object": f'{{"action": {{"tool": "w", "args": {{"v": {_DEEP}}}}}}}',
    "command": f'@tool w {{"v": {_DEEP}}}\n',
}


@pytest.mark.parametrize("dialect", sorted(_DEEP_CALLS))
@pytest.mark.parametrize("size", [3, 100_000])
def test_arguments_nested_past_the_decoders_depth_are_invalid_json(dialect: str, size: int) -> None:
    # msgspec raises RecursionError past ~1000 levels: a CallError the model can act
    # on, with the raw text, never an exception out of feed
    text = _DEEP_CALLS[dialect]
    events = run_checked(dialect, [text[k : k + size] for k in range(0, len(text), size)], ["w"])
    (error,) = [e for e in events if isinstance(e, (CallEnd, CallError))]
    assert isinstance(error, CallError) and error.reason == "invalid_json"
    assert "nested too deeply" in error.message and _DEEP in error.raw


def test_am_xml_value_nested_past_the_decoders_depth_is_text() -> None:
    # a parameter's value that will not decode is passed on as a string, as any
    # value that is not JSON is (the tool's schema then says what is wrong)
    text = f'<am:tool_call name="w"><v>{_DEEP}</v></am:tool_call>'
    events = run_checked("am_xml", [text[k : k + 3] for k in range(0, len(text), 3)], ["w"])
    (end,) = [e for e in events if isinstance(e, (CallEnd, CallError))]
    assert isinstance(end, CallEnd) and end.arguments == {"v": _DEEP}


# a lone UTF-16 surrogate half as a character of the text (not an escape): what a
# stream decoded by a lenient JSON reader (the standard library's) can hold
_LONE = "\ud83d"
_LONE_JSON_CALLS = {
    "hermes": f'<tool_call>{{"name": "w", "arguments": {{"v": "a{_LONE}b"}}}}</tool_call>',
    "hermes-name": f'<tool_call>{{"name": "w{_LONE}", "arguments": {{}}}}</tool_call>',
    "json_action": f'```json action\n{{"tool": "w", "parameters": {{"v": "{_LONE}"}}}}\n```',
    "inline_json": f'{{"tool": "w", "arguments": {{"{_LONE}": 1}}}}',
    "json_object": f'{{"action": {{"tool": "w", "args": {{"v": "{_LONE}"}}}}}}',
    "json_object-final": f'{{"final": "a{_LONE}"}}',
    "command": f'@tool w {{"v": "{_LONE}"}}\n',
}


@pytest.mark.parametrize("case", sorted(_LONE_JSON_CALLS))
@pytest.mark.parametrize("size", [1, 4, 1_000])
def test_a_lone_surrogate_in_a_json_string_is_invalid_json(case: str, size: int) -> None:
    """Not text UTF-8 can carry, so not JSON: a CallError with the raw text, as a
    raw control character is, never an exception out of ``feed`` (it was a
    UnicodeEncodeError) nor a call whose arguments cannot be encoded."""
    text = _LONE_JSON_CALLS[case]
    dialect = case.split("-")[0]
    events = run_checked(dialect, [text[k : k + size] for k in range(0, len(text), size)], ["w"])
    (error,) = [e for e in events if isinstance(e, (CallEnd, CallError))]
    assert isinstance(error, CallError) and error.reason == "invalid_json", error
    assert "surrogate" in error.message
    # the dialects that end a broken call at the offending character give the rest
    # back as text (run_checked checks every character lands somewhere)
    assert (_LONE in error.raw) == (dialect not in ("inline_json", "command"))


_LONE_AM_XML = [
    (f'<am:tool_call name="w"><v>a{_LONE}b</v></am:tool_call>', {"v": "a\ufffdb"}),
    (f'<am:tool_call name="w"><v>\n{_LONE}\n</v></am:tool_call>', {"v": "\ufffd"}),
    (f'<am:tool_call name="w"><n>12{_LONE}</n></am:tool_call>', {"n": "12\ufffd"}),
    (f'<am:tool_call name="w"><l>["{_LONE}"]</l></am:tool_call>', {"l": ["\ufffd"]}),
    (f'<am:tool_call name="w"><v><![CDATA[{_LONE}]]></v></am:tool_call>', {"v": "\ufffd"}),
    (f'<am:tool_call name="w"><parameter name="{_LONE}">x</parameter></am:tool_call>',
     {"\ufffd": "x"}),
]


@pytest.mark.parametrize(("text", "arguments"), _LONE_AM_XML)
@pytest.mark.parametrize("size", [1, 4, 1_000])
def test_a_lone_surrogate_in_an_am_xml_value_is_a_replacement_character(
    text: str, arguments: dict[str, Any], size: int
) -> None:
    """An ``am_xml`` value is the element's text, made JSON by the parser: a lone
    half is U+FFFD there (as in the transcript), the raw text keeps it; it was a
    UnicodeEncodeError out of ``feed``."""
    events = run_checked("am_xml", [text[k : k + size] for k in range(0, len(text), size)], ["w"])
    (end,) = [e for e in events if isinstance(e, (CallEnd, CallError))]
    assert isinstance(end, CallEnd) and end.arguments == arguments and end.raw == text


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (f'<am:tool_call name="w">{{"v": "{_LONE}"}}</am:tool_call>', "invalid_json"),
        (f"<am:request_tools>a{_LONE}, b</am:request_tools>", None),
    ],
)
def test_a_lone_surrogate_in_am_xml_json_text_or_a_tool_request(
    text: str, reason: str | None
) -> None:
    events = run_checked("am_xml", list(text), ["w"])
    (end,) = [e for e in events if isinstance(e, (CallEnd, CallError))]
    if reason is None:
        assert isinstance(end, CallEnd) and end.arguments == {"tools": ["a\ufffd", "b"]}
    else:
        assert isinstance(end, CallError) and end.reason == reason and "surrogate" in end.message


def test_fast_path_releases_whole_delta() -> None:
    from streamtools.parser import Parser

    p = Parser("am_xml", stop=["STOP"])
    assert p.feed("plain words, no markers") == [TextDelta(text="plain words, no markers")]
    assert p.feed("a <am:to") == [TextDelta(text="a ")]
    assert p.held == len("<am:to")


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7])
def test_escapes_inside_strings_at_every_cut(size: int) -> None:
    # whole escapes take the call fast path, cut ones wait for the rest: either way
    # text decodes exactly and arguments stay the model's raw JSON text
    value = r"a\u4f60\ud83d\udc4b\n\"q\\ \u00e9"
    decoded = "a你👋\n\"q\\ é"
    reply = '{"thought": "' + value + '", "final": {"content": "' + value + '"}}'
    call = '<tool_call>{"name": "search", "arguments": {"q": "' + value + '"}}</tool_call>'
    for dialect, text in (("json_object", reply), ("hermes", call)):
        chunks = [text[i : i + size] for i in range(0, len(text), size)]
        events = run_checked(dialect, chunks, ["search"])
        if dialect == "json_object":
            assert "".join(e.text for e in events if isinstance(e, TextDelta)) == decoded
        else:
            end = next(e for e in events if isinstance(e, CallEnd))
            assert end.arguments == {"q": decoded}
