"""A past call written back in ``am_xml`` (the history the model reads) must
parse back to the arguments it had, under the tool's schema: scalar types,
unions of them, nullable ones, arrays and objects or strings, and no type at
all; a string holding JSON array or object text among them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_parser_properties import SETTINGS

from streamtools.events import CallEnd
from streamtools.parser import Parser
from streamtools.prompts import get_renderer
from streamtools.transcript import ToolCall

INT, NUM, BOOL, STR, NULL = (
    {"type": "integer"}, {"type": "number"}, {"type": "boolean"}, {"type": "string"},
    {"type": "null"},
)


def union(*options: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": list(options)}


# each schema with the values it admits
TEXT = st.text(max_size=12) | st.sampled_from(
    ["5", "-1.5", "1e3", "0123", "true", "false", "null", "True", " 5", "5\n", "[1]", "{}",
     '"x"', "5 apples", "<b>", "a]]>b", "[1, 2]", " [1]", "\n[1]\n", '["a<b"]',
     '{"a": "x]]>y"}', '\r\n{"a": [1]}\t', "[1] ", "[", "{x}", "[1, 2] and more"]
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=3),
    max_leaves=6,
)
# JSON text of arrays and objects as a string would hold it
CONTAINER_TEXT = st.builds(
    lambda v, a, b: a + msgspec.json.encode(v).decode() + b,
    st.lists(JSON, max_size=3) | st.dictionaries(st.text(max_size=4), JSON, max_size=3),
    st.sampled_from(["", " ", "\n", "\r\n "]), st.sampled_from(["", " ", "\n", "\t\n"]),
)
ARRAY, OBJECT = {"type": "array"}, {"type": "object"}
NUMBER = st.integers(-10**9, 10**9) | st.floats(allow_nan=False, allow_infinity=False)
SCHEMAS: list[tuple[str, dict[str, Any], st.SearchStrategy[Any]]] = [
    ("str", STR, TEXT),
    ("int", INT, st.integers(-10**12, 10**12)),
    ("float", NUM, NUMBER),
    ("bool", BOOL, st.booleans()),
    ("int|str", union(INT, STR), st.integers(-10**6, 10**6) | TEXT),
    ("float|str", union(NUM, STR), NUMBER | TEXT),
    ("bool|str", union(BOOL, STR), st.booleans() | TEXT),
    ("str|None", union(STR, NULL), st.none() | TEXT),
    ("int|None", union(INT, NULL), st.none() | st.integers()),
    ("int|str|None", union(INT, STR, NULL), st.none() | st.integers() | TEXT),
    ("type-list", {"type": ["integer", "string"]}, st.integers() | TEXT),
    ("untyped", {}, st.none() | TEXT | CONTAINER_TEXT),
    ("list|str", union(ARRAY, STR), st.lists(JSON, max_size=3) | TEXT | CONTAINER_TEXT),
    ("dict|str", union(OBJECT, STR),
     st.dictionaries(st.text(max_size=4), JSON, max_size=3) | TEXT | CONTAINER_TEXT),
    ("str-containers", STR, CONTAINER_TEXT),
    ("untyped-containers", {}, st.lists(JSON, max_size=3) | CONTAINER_TEXT),
]


class Catalog:
    """One tool ``t`` whose parameter ``x`` has the given schema."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.parameters = {"type": "object", "properties": {"x": schema}}

    def __contains__(self, name: object) -> bool:
        return name == "t"

    def __iter__(self) -> Iterator[str]:
        return iter(["t"])

    def schema(self, name: str) -> dict[str, Any] | None:
        return self.parameters

    def check_arguments(self, name: str, arguments: dict[str, Any]) -> str | None:
        return None


def read_back(schema: dict[str, Any], value: Any) -> Any:
    text = get_renderer("am_xml").render_call(ToolCall(id="1", name="t", arguments={"x": value}))
    parser = Parser("am_xml", Catalog(schema))
    events = parser.feed(text) + parser.end()
    (end,) = [e for e in events if isinstance(e, CallEnd)]
    return end.arguments["x"]


@pytest.mark.parametrize(
    ("schema", "values"), [s[1:] for s in SCHEMAS], ids=[s[0] for s in SCHEMAS]
)
def test_a_past_call_reads_back_as_it_was(schema: dict[str, Any], values: Any) -> None:
    @SETTINGS
    @given(values)
    def prop(value: Any) -> None:
        got = read_back(schema, value)
        assert got == value and type(got) is type(value)

    prop()


@pytest.mark.parametrize("value", ["5", "-1.5", "1e3", "true", "false", "null", "0"])
def test_a_string_that_reads_as_json_is_a_string_again_under_a_union(value: str) -> None:
    assert read_back(union(INT, STR), value) == value
    assert read_back(union(BOOL, NUM, STR), value) == value


@pytest.mark.parametrize("value", ["[1, 2]", '{"a": 1}', " [1]", '["a<b", "]]>"]', "{}"])
def test_a_string_of_json_array_or_object_text_is_a_string_again(value: str) -> None:
    """It was that array or object where the schema allows one: the model was
    shown a call it did not make, and one copied from it sent the array."""
    for schema in ({}, union(ARRAY, STR), union(OBJECT, STR), STR, union(STR, NULL)):
        got = read_back(schema, value)
        assert got == value and type(got) is str
    assert read_back(union(ARRAY, STR), [1, 2]) == [1, 2]
    assert read_back({}, {"a": ["<b>"]}) == {"a": ["<b>"]}
