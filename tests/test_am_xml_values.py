"""``am_xml`` parameter values that are not plainly one type: a string the schema
lets be null, and a value with no schema at all, read at every chunking."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from parser_cases import chunkings, run_checked

from streamtools.events import ArgsDelta, CallEnd
from streamtools.prompts import get_renderer
from streamtools.transcript import ToolCall

# the ways a schema says "a string, or null"
_NULLABLE: dict[str, dict[str, Any]] = {
    "any_of": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    "type_list": {"type": ["string", "null"]},
    "openapi": {"type": "string", "nullable": True},
    "ref": {"anyOf": [{"$ref": "#/$defs/Tag"}, {"type": "null"}]},
}


class _Catalog:
    """One tool, ``t``, with parameter ``tag`` of the given schema (and a plain
    string ``q``)."""

    def __init__(self, tag: dict[str, Any]) -> None:
        self.parameters = {
            "type": "object",
            "properties": {"q": {"type": "string"}, "tag": tag},
            "$defs": {"Tag": {"type": "string"}},
        }

    def __contains__(self, name: object) -> bool:
        return name == "t"

    def __iter__(self) -> Iterator[str]:
        return iter(["t"])

    def schema(self, name: str) -> dict[str, Any] | None:
        return self.parameters if name == "t" else None

    def check_arguments(self, name: str, arguments: dict[str, Any]) -> str | None:
        return None


def _arguments(body: str, catalog: Any) -> list[dict[str, Any]]:
    """The arguments of ``<am:tool_call name="t">BODY</am:tool_call>``, the same
    at every chunking (the invariants checked on the way)."""
    text = f'<am:tool_call name="t">{body}</am:tool_call>'
    seen = []
    for _, chunks in chunkings(text):
        events = run_checked("am_xml", chunks, catalog)
        seen.append([e.arguments for e in events if isinstance(e, CallEnd)])
    assert all(s == seen[0] for s in seen), seen
    return seen[0]


@pytest.mark.parametrize("schema", list(_NULLABLE))
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("null", None),
        ("\nnull\n", None),
        ("  null \r\n", None),
        ("<![CDATA[null]]>", "null"),  # CDATA: the text, as the renderer writes it
        ("\n<![CDATA[null]]>\n", "null"),
        ("nullable", "nullable"),
        ("nul", "nul"),
        ("null x", "null x"),
        ("Null", "Null"),
        ("", ""),
        ("\n", ""),
        ("\nnews\n", "news"),
        ("n&amp;m", "n&m"),
        ("<![CDATA[a<b]]>", "a<b"),
        ("null" + " " * 20, "null" + " " * 20),  # past the probe: text
    ],
)
def test_a_nullable_string_reads_null_as_null_and_anything_else_as_text(
    schema: str, value: str, expected: str | None
) -> None:
    body = f"<q>x</q><tag>{value}</tag>"
    assert _arguments(body, _Catalog(_NULLABLE[schema])) == [{"q": "x", "tag": expected}]


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        # the options narrow the type: a string, never null (it was null)
        ({"type": ["string", "null"], "anyOf": [{"type": "string"}]}, "null"),
        ({"type": "string", "anyOf": [{"type": "null"}]}, "null"),
        # options that only constrain take the type around them
        ({"type": ["string", "null"], "anyOf": [{"minLength": 1}]}, None),
        ({"type": "string", "nullable": True, "oneOf": [{"maxLength": 9}]}, None),
    ],
)
def test_null_is_read_through_any_of_as_the_type_is(schema: dict[str, Any], expected: Any) -> None:
    assert _arguments("<tag>null</tag>", _Catalog(schema)) == [{"tag": expected}]


def test_a_plain_string_parameter_still_reads_null_as_text() -> None:
    assert _arguments("<tag>null</tag>", _Catalog({"type": "string"})) == [{"tag": "null"}]


def test_a_nullable_string_streams_once_it_cannot_be_null() -> None:
    """Nothing of the value is sent while it may still be null (deltas are
    append-only); a start that rules it out streams at once, and so does what
    follows."""
    from streamtools.parser import Parser

    parser = Parser("am_xml", _Catalog(_NULLABLE["any_of"]))
    got = parser.feed('<am:tool_call name="t"><tag>\nnu')
    assert "".join(e.delta for e in got if isinstance(e, ArgsDelta)) == '{"tag": '
    got = parser.feed("ts")
    assert "".join(e.delta for e in got if isinstance(e, ArgsDelta)) == '"nuts'
    got = parser.feed(" and bolts")
    assert "".join(e.delta for e in got if isinstance(e, ArgsDelta)) == " and bolts"


@pytest.mark.parametrize("value", [None, "null", "x", "", "\nnull\n", "\r\n", "\r\nb", "\r\n\r\n"])
def test_a_nullable_string_round_trips_through_the_renderer(value: str | None) -> None:
    """A native call from history (``tag=None``, as OpenAI strict mode sends every
    optional parameter), written back for the model, reads back as it was."""
    call = ToolCall(id="c", name="t", arguments={"q": "x", "tag": value})
    written = get_renderer("am_xml").render_call(call)
    got = _arguments(written.split(">", 1)[1].rsplit("<", 1)[0], _Catalog(_NULLABLE["any_of"]))
    assert got == [{"q": "x", "tag": value}]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("<![CDATA[5]]>", "5"),
        ("<![CDATA[true]]>", "true"),
        ("<![CDATA[null]]>", "null"),
        ("\n<![CDATA[-2]]>\n", "-2"),
        ("\n<![CDATA[\n5]]>\n", "\n5"),
        (" <![CDATA[1.5]]>", " 1.5"),
        ("1<![CDATA[2]]>", "12"),  # a section anywhere in the value
        ('<![CDATA["q"]]>', '"q"'),
        ("<![CDATA[tr]]>ue", "true"),
        # an array or object stays JSON: a "<" in one of its strings needs the section
        ("<![CDATA[[1]]]>", [1]),
        ('<![CDATA[{"a": "<b>"}]]>', {"a": "<b>"}),
        ("\n[<![CDATA[1]]>]\n", [1]),
        ("<![CDATA[[1, ]]>", "[1, "),  # (no JSON: text, as bare)
        # bare, a number or true/false is the text too (it was the number or
        # boolean: a string parameter got an int, "1.10" became 1.1); null, an
        # array or an object is JSON
        ("5", "5"),
        ("true", "true"),
        ("\n1.10\n", "1.10"),
        ("1e3", "1e3"),
        ("-0", "-0"),
        ("12345678901234567890123", "12345678901234567890123"),
        ("\n[1, 2]\n", [1, 2]),
        ('{"a": 1}', {"a": 1}),
        ("null", None),
        (" null\n", None),
        ("nul", "nul"),
        ("word", "word"),
    ],
)
def test_without_a_schema_only_null_an_array_or_an_object_is_json(
    body: str, expected: Any
) -> None:
    assert _arguments(f"<a>{body}</a>", ["t"]) == [{"a": expected}]


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        # no type: the text (it was 5, as with no schema at all)
        ({}, "5"),
        ({"description": "a zip code"}, "5"),
        ({"type": [[]]}, "5"),
        ({"enum": ["5", "6"]}, "5"),
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, "5"),
        # several types, a number among them: JSON decides, as before
        ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, 5),
        ({"type": ["integer", "string"]}, 5),
        ({"enum": [5, "x"]}, 5),
        ({"oneOf": [{"$ref": "#/$defs/Tag"}, {"const": 5}]}, 5),
        # one type: the schema decides
        ({"type": "integer"}, 5),
        ({"type": "string"}, "5"),
    ],
)
def test_a_schema_without_one_type_reads_a_number_only_if_it_names_one(
    schema: dict[str, Any], expected: Any
) -> None:
    assert _arguments("<tag>5</tag>", _Catalog(schema)) == [{"tag": expected}]


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        # Python's literals where the schema says boolean or null: it was the string
        # "True", which the check refused (Expected `bool`, got `str`)
        ({"type": "boolean"}, "True", True),
        ({"type": "boolean"}, "\nFALSE\n", False),
        ({"anyOf": [{"type": "number"}, {"type": "null"}]}, "None", None),
        ({"type": "boolean"}, "true", True),
        # where the schema says text, the text
        ({"type": "string"}, "True", "True"),
        ({"anyOf": [{"type": "boolean"}, {"type": "string"}]}, "True", "True"),
        ({}, "None", "None"),
        # not a literal: a string, for the check to refuse
        ({"type": "boolean"}, "yes", "yes"),
        ({"type": "boolean"}, "Truly", "Truly"),
    ],
)
def test_a_python_literal_for_a_typed_value_is_the_json_one(
    schema: dict[str, Any], value: str, expected: Any
) -> None:
    got = _arguments(f"<tag>{value}</tag>", _Catalog(schema))
    assert got == [{"tag": expected}] and type(got[0]["tag"]) is type(expected)


def test_a_typed_value_in_cdata_is_still_read_as_its_type() -> None:
    assert _arguments("<q>1</q><tag><![CDATA[5]]></tag>", _Catalog({"type": "integer"})) == [
        {"q": "1", "tag": 5}
    ]



@pytest.mark.parametrize(
    "value", [{"</am:tool>": None}, ["a&b", 1], {"x": "<|im_end|>"}, "null", "5", "true", "1.10"]
)
def test_without_a_schema_a_value_round_trips_through_the_renderer(value: Any) -> None:
    """What the renderer puts in CDATA (an object holding ``<``, the string
    ``null``) reads back as it was, with no schema to say its type."""
    call = ToolCall(id="c", name="t", arguments={"a": value})
    written = get_renderer("am_xml").render_call(call)
    assert _arguments(written.split(">", 1)[1].rsplit("<", 1)[0], ["t"]) == [{"a": value}]


@settings(max_examples=300, deadline=None)
@given(
    st.none()
    | st.lists(st.sampled_from(["n", "u", "l", "null", " ", "\n", "\r", "<", "&", "]]>", "é"]))
    .map("".join),
    st.lists(st.integers(1, 7), min_size=1, max_size=40),
)
def test_a_nullable_string_round_trips_at_any_cut(value: str | None, sizes: list[int]) -> None:
    """Whatever a ``str | None`` holds (null, text that begins like it, layout
    newlines, markup), written back for the model and read at any cuts."""
    call = ToolCall(id="c", name="t", arguments={"tag": value})
    text = get_renderer("am_xml").render_call(call)
    chunks, i = [], 0
    for size in sizes * (len(text) // len(sizes) + 1):
        if i >= len(text):
            break
        chunks.append(text[i : i + size])
        i += size
    events = run_checked("am_xml", chunks, _Catalog(_NULLABLE["type_list"]))
    assert [e.arguments for e in events if isinstance(e, CallEnd)] == [{"tag": value}]
