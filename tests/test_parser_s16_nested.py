"""``am_xml``: an object or array parameter written as nested XML elements is
read as that object or array, guided by the tool's schema (``xml_nested``);
anything ambiguous stays what it was: a string the schema check refuses, the
raw text kept in the ``CallError``."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from parser_cases import every_chunking, run_checked, summary

from streamtools import tool
from streamtools.events import CallError
from streamtools.tools import ToolRegistry


class Address(msgspec.Struct):
    city: str
    zip: str
    floor: int = 0
    lines: list[str] = []


@tool
def ship(
    address: Address,
    tags: list[str] | None = None,
    parcels: list[Address] | None = None,
    counts: list[int] | None = None,
    meta: dict[str, Any] | None = None,
    where: Address | None = None,
) -> str:
    """Ship a parcel."""
    return "ok"


REGISTRY = ToolRegistry([ship])


def _call(body: str) -> str:
    return f'<am:tool_call name="ship">{body}</am:tool_call>'


PARIS = "<address><city>Paris</city><zip>75001</zip></address>"

READ = [
    ("object", PARIS, {"address": {"city": "Paris", "zip": "75001"}}),
    # laid out the way models lay XML out; a string property keeps its text
    ("layout", "\n<address>\n  <city>Paris</city>\n  <zip>\n75001\n</zip>\n  <floor> 3 </floor>\n"
     "</address>\n",
     {"address": {"city": "Paris", "zip": "75001", "floor": 3}}),
    ("array-of-items", PARIS + "<tags><item>a</item><item> b </item></tags>",
     {"address": {"city": "Paris", "zip": "75001"}, "tags": ["a", " b "]}),
    ("array-any-name", PARIS + "<tags>\n<tag>a</tag>\n<tag>b</tag>\n</tags>",
     {"address": {"city": "Paris", "zip": "75001"}, "tags": ["a", "b"]}),
    ("array-of-numbers", PARIS + "<counts><item>1</item><item>2</item></counts>",
     {"address": {"city": "Paris", "zip": "75001"}, "counts": [1, 2]}),
    ("array-of-objects", PARIS + "<parcels><item><city>A</city><zip>1</zip></item>"
     "<item><city>B</city><zip>2</zip><lines><line>x</line></lines></item></parcels>",
     {"address": {"city": "Paris", "zip": "75001"},
      "parcels": [{"city": "A", "zip": "1"}, {"city": "B", "zip": "2", "lines": ["x"]}]}),
    ("array-in-object-as-json", "<address><city>P</city><zip>1</zip><lines>[\"a\"]</lines>"
     "</address>", {"address": {"city": "P", "zip": "1", "lines": ["a"]}}),
    ("optional-object", PARIS + "<where><city>Oslo</city><zip>0150</zip></where>",
     {"address": {"city": "Paris", "zip": "75001"}, "where": {"city": "Oslo", "zip": "0150"}}),
    ("entities-and-cdata", "<address><city>A &amp; B &lt;C&gt;</city>"
     "<zip><![CDATA[7<5]]></zip></address>", {"address": {"city": "A & B <C>", "zip": "7<5"}}),
    ("self-closing-leaf", "<address><city>P</city><zip/></address>",
     {"address": {"city": "P", "zip": ""}}),
    ("free-form-object", PARIS + "<meta><n>5</n><s>x</s><l>[1]</l></meta>",
     {"address": {"city": "Paris", "zip": "75001"}, "meta": {"n": "5", "s": "x", "l": [1]}}),
    ("qwen-form", "<tool_call>\n<function=ship>\n<parameter=address>\n<city>Paris</city>"
     "<zip>75001</zip>\n</parameter>\n</function>\n</tool_call>",
     {"address": {"city": "Paris", "zip": "75001"}}),
]


@pytest.mark.parametrize(("body", "want"), [c[1:] for c in READ], ids=[c[0] for c in READ])
def test_nested_elements_are_read_as_the_schema_says(body: str, want: dict[str, Any]) -> None:
    text = body if body.startswith("<tool_call>") else _call(body)
    every_chunking("am_xml", text, REGISTRY, [("call", "ship", want), ("finish", "stop", None)])


UNREAD = [
    ("property-twice", "<address><city>A</city><city>B</city><zip>1</zip></address>"),
    ("items-under-two-names", PARIS + "<tags><item>a</item><tag>b</tag></tags>"),
    ("text-beside-elements", "<address>in <city>P</city><zip>1</zip></address>"),
    ("text-after-elements", "<address><city>P</city><zip>1</zip> thanks</address>"),
    ("attribute", '<address><city lang="fr">P</city><zip>1</zip></address>'),
    ("unclosed-child", "<address><city>P<zip>1</zip></address>"),
    ("misclosed-child", "<address><city>P</town><zip>1</zip></address>"),
]


@pytest.mark.parametrize("body", [c[1] for c in UNREAD], ids=[c[0] for c in UNREAD])
def test_ambiguous_elements_stay_an_error_with_the_raw_text(body: str) -> None:
    text = _call(body)
    events = run_checked("am_xml", [text], REGISTRY)
    (error,) = [e for e in events if isinstance(e, CallError)]
    assert error.reason == "invalid_arguments" and error.raw == text
    assert "got `str`" in error.message


def test_a_scalar_of_the_wrong_type_is_named_by_its_path() -> None:
    text = _call("<address><city>P</city><zip>1</zip><floor>third</floor></address>")
    (error,) = [e for e in run_checked("am_xml", [text], REGISTRY) if isinstance(e, CallError)]
    assert error.raw == text and "$.address.floor" in error.message


def test_a_string_parameter_keeps_its_markup() -> None:
    """Only object and array parameters are read as elements: a string one
    holding markup is that text, as it always was."""
    text = '<am:tool_call name="note"><body><b>bold</b> text</body></am:tool_call>'
    registry = ToolRegistry([_note])
    events = run_checked("am_xml", [text], registry)
    assert summary(events)[0] == ("call", "note", {"body": "<b>bold</b> text"})


@tool(name="note")
def _note(body: str) -> str:
    """Take a note."""
    return body
