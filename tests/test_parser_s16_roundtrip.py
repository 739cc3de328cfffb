"""A past call written back in ``am_xml`` (the history the model reads) must
parse back to the arguments it had, under the tool's schema: scalar types,
unions of them, nullable ones, and no type at all."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from hypothesis import assume, given
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
     '"x"', "5 apples", "<b>", "a]]>b"]
)
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
    ("untyped", {}, st.none() | TEXT),
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


def _json_container(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        return isinstance(msgspec.json.decode(value.strip()), list | dict)
    except msgspec.DecodeError:
        return False


@pytest.mark.parametrize(
    ("schema", "values"), [s[1:] for s in SCHEMAS], ids=[s[0] for s in SCHEMAS]
)
def test_a_past_call_reads_back_as_it_was(schema: dict[str, Any], values: Any) -> None:
    @SETTINGS
    @given(values)
    def prop(value: Any) -> None:
        if schema not in (STR, union(STR, NULL)):
            # an array or object's JSON text is that array or object where the
            # schema does not say "string" (the renderer writes one so): a string
            # holding one has no other spelling there
            assume(not _json_container(value))
        got = read_back(schema, value)
        assert got == value and type(got) is type(value)

    prop()


@pytest.mark.parametrize("value", ["5", "-1.5", "1e3", "true", "false", "null", "0"])
def test_a_string_that_reads_as_json_is_a_string_again_under_a_union(value: str) -> None:
    assert read_back(union(INT, STR), value) == value
    assert read_back(union(BOOL, NUM, STR), value) == value
