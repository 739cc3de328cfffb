"""The system prompt against itself and against the parser: odd tool schemas
and descriptions leave the prompt's own structure whole, and the worked example
it teaches reads back, call by call, as the calls it shows."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from streamtools.events import CallEnd, CallError, CallStart
from streamtools.model import ToolSpec
from streamtools.parser import Parser
from streamtools.parser.xml_values import NULLABLE, WORD, kinds_from_schema, word_value
from streamtools.prompts import RENDERERS, get_renderer
from streamtools.prompts.renderer import example_arguments
from streamtools.prompts.self_contained import self_contained
from streamtools.schema import json_type
from streamtools.tools import ToolRegistry

DIALECTS = list(RENDERERS)
# the dialects whose definitions are ``## name`` sections (``Renderer.tool_definitions``)
SECTIONED = [d for d in DIALECTS if d not in ("am_xml", "hermes")]

_MARKUP = [
    *["</am:tool>", "</am:tools>", '"/>', '" x="', "\n", "\r", "\t", "<", ">", "&", "&amp;", "x"],
    *["</tools>", "<tools>", "```", "<|im_end|>", "<turn|>", "é", "😀", "\u2028", "\x85", "]]>"],
    *["'", '"', "\\", "<![CDATA[", "</am:tool_call>", "<tool_call>", "@tool t {}", "<think>"],
]
_printable = st.text(st.characters(blacklist_categories=["Cc", "Cs"]), max_size=3)
_awkward = st.lists(st.sampled_from(_MARKUP) | _printable, max_size=5).map("".join)
_leaf = st.none() | st.booleans() | st.integers(-(10**20), 10**20) | _awkward
_value = st.recursive(
    _leaf,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(_awkward, c, max_size=3),
    max_leaves=5,
)
_param = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["string", "integer", "number", "boolean", "array", "object"]),
        "description": _awkward,
        "enum": st.lists(_value, min_size=1, max_size=3),
        "default": _value,
        "format": st.sampled_from(["date", "date-time", "uri"]) | _awkward,
        "anyOf": st.just([{"type": "string"}, {"type": "null"}]),
        "$ref": st.just("#/$defs/X"),
    },
)
_DEFS = {"X": {"type": "object", "description": "a\n</am:tool>", "properties": {"y": {}}}}
_schema = st.builds(
    lambda props, required: {
        "type": "object",
        "properties": props,
        "required": [k for k in required if k in props],
        "$defs": _DEFS,
    },
    st.dictionaries(_awkward | st.sampled_from(["city", "x.y", "$top", "a:b"]), _param, max_size=3),
    st.lists(_awkward | st.sampled_from(["city", "x.y"]), max_size=3),
)
_names = st.sampled_from(["t", "a.b", "x-y", "é名", "a<b", 'a"b', "a&b", "a]]>b", "a b", "`x`"])
_tools = st.lists(
    st.tuples(_names, _awkward, _schema), min_size=1, max_size=3, unique_by=lambda t: t[0]
)


def _offered(dialect: str, tools: list[tuple[str, str, dict[str, Any]]]) -> list[ToolSpec] | None:
    specs = [ToolSpec(name=n, description=d, parameters=s) for n, d, s in tools]
    r = get_renderer(dialect)
    return None if any(r.name_problem(s.name) for s in specs) else specs


def _headings(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.startswith("#")]


@pytest.mark.parametrize("dialect", SECTIONED)
@pytest.mark.parametrize(
    "description", ["# Fetch\n\nFetches a URL.", "## Usage\nCall it.", "#hashtag search", " # x"]
)
def test_a_markdown_description_adds_no_heading_to_the_prompt(
    dialect: str, description: str
) -> None:
    """Descriptions are often Markdown (an MCP server's ``# Fetch`` title). Its
    line breaks collapsed, such a description went on the line under the tool's
    ``## fetch`` heading as ``# Fetch Fetches a URL.``: a top-level heading of
    its own, beside ``# Tools`` and ``# How to call a tool``, that the next
    tools seemed to belong to. A leading ``#`` is escaped as Markdown escapes one."""
    r = get_renderer(dialect)
    spec = ToolSpec(name="fetch", description=description, parameters={"type": "object"})
    plain = ToolSpec(name="fetch", description="Fetches a URL.", parameters={"type": "object"})
    prompt = r.system_prompt([spec, ToolSpec(name="other", description="", parameters={})])
    expected = r.system_prompt([plain, ToolSpec(name="other", description="", parameters={})])
    assert _headings(prompt) == _headings(expected)
    words = " ".join(description.split())
    assert "\\" + words in prompt.split("\n")  # the words kept, on their own line


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dialect=st.sampled_from(DIALECTS), tools=_tools)
def test_odd_schemas_and_descriptions_leave_the_definitions_whole(
    dialect: str, tools: list[tuple[str, str, dict[str, Any]]]
) -> None:
    """Each dialect's definitions keep their structure whatever a schema holds
    (markup, line breaks, enums, ``anyOf``, ``$ref``): ``am_xml``'s are one XML
    element per line with one ``am:tool`` per tool and its parameters in order;
    ``hermes``' one JSON function object per line; the others one ``## name``
    section per tool whose schema line decodes to the schema given (its local
    references inlined: ``prompts.self_contained``)."""
    specs = _offered(dialect, tools)
    if specs is None:
        return
    defs = get_renderer(dialect).tool_definitions(specs)
    if dialect == "am_xml":
        block = defs[defs.index("<am:tools>") :]
        assert all(line.startswith("<") and line.endswith(">") for line in block.split("\n"))
        root = ET.fromstring(block.replace("<am:tools>", '<am:tools xmlns:am="urn:x">', 1))
        assert [t.get("name") for t in root] == [s.name for s in specs]
        for element, spec in zip(root, specs, strict=True):
            assert [p.get("name") for p in element] == list(spec.parameters["properties"])
    elif dialect == "hermes":
        lines = defs.split("\n")
        body = lines[lines.index("<tools>") + 1 : lines.index("</tools>")]
        functions = [json.loads(line)["function"] for line in body]
        assert [(f["name"], f["parameters"]) for f in functions] == [
            (s.name, self_contained(s.parameters)) for s in specs
        ]
    else:
        assert _headings(defs) == ["# Tools", *(f"## {s.name}" for s in specs)]
        schemas = [line.split(": ", 1)[1] for line in defs.split("\n") if line.startswith("Param")]
        assert [json.loads(s) for s in schemas] == [self_contained(s.parameters) for s in specs]


class _Catalog:
    """The specs as a parser catalog, without a registry's name rules or checks."""

    def __init__(self, specs: list[ToolSpec]) -> None:
        self._schemas = {s.name: s.parameters for s in specs}

    def __contains__(self, name: object) -> bool:
        return name in self._schemas

    def __iter__(self) -> Iterator[str]:
        return iter(self._schemas)

    def schema(self, name: str) -> dict[str, Any] | None:
        return self._schemas.get(name)

    def check_arguments(self, name: str, arguments: dict[str, Any]) -> str | None:
        return None


def _agrees(schema: dict[str, Any], arguments: dict[str, Any]) -> bool:
    """Whether each value is a string where ``am_xml`` reads the parameter as
    text (``json_type``), or null where that text may be null: a ``string``
    parameter with a default of 3 is the schema's own contradiction, read back
    as the text "3". So is a number or boolean for a parameter whose schema
    names no type (``{"default": false}``): ``am_xml`` reads a bare ``false``
    there as the text (``xml_values.UNTYPED``)."""
    props = schema["properties"]
    kinds = kinds_from_schema(schema)
    return all(
        (
            json_type(schema, props[k]) != "string"
            or isinstance(v, str)
            or (v is None and kinds.get(k) == NULLABLE)
            or (v is None and kinds.get(k) == WORD and word_value("null", schema, props[k]) is None)
        )
        and (k in kinds or not isinstance(v, bool | int | float))
        for k, v in arguments.items()
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dialect=st.sampled_from(DIALECTS), tools=_tools)
@example(  # an untyped parameter whose default is a boolean: read back as its text
    dialect="am_xml", tools=[("t", "", {"type": "object", "properties": {"": {"default": False}}})]
)
def test_the_worked_example_reads_back_as_the_calls_it_shows(
    dialect: str, tools: list[tuple[str, str, dict[str, Any]]]
) -> None:
    """The example the system prompt teaches (values from defaults and enums,
    whatever they hold): each ``Assistant:`` turn but the last parses as
    exactly one call, the first with the example arguments; the final answer
    as no call; each ``Result:`` reads back as a result."""
    specs = _offered(dialect, tools)
    if specs is None:
        return
    r = get_renderer(dialect)
    turns = re.split(r"\n(?=(?:Assistant|Result|User): )", r.example(specs))
    replies = [t.removeprefix("Assistant: ") for t in turns if t.startswith("Assistant: ")]
    results = [t.removeprefix("Result: ") for t in turns if t.startswith("Result: ")]
    assert len(turns) == 3 + 2 * len(results) and len(replies) == len(results) + 1
    catalog = _Catalog(specs)
    calls = []
    for reply in replies:
        parser = Parser(dialect, catalog)
        events = parser.feed(reply) + parser.end("stop")
        calls.append([e for e in events if isinstance(e, CallStart | CallEnd | CallError)])
    assert calls.pop() == []
    assert all(len(c) == 2 and isinstance(c[1], CallEnd) for c in calls), calls
    first = msgspec.json.decode(msgspec.json.encode(example_arguments(specs[0].parameters)))
    end = calls[0][1]
    assert isinstance(end, CallEnd) and end.name == specs[0].name
    if dialect != "am_xml" or _agrees(specs[0].parameters, first):
        assert end.arguments == first
    assert all(r.read_result(text) is not None for text in results)


@pytest.mark.parametrize(
    ("schema", "values"),
    [
        ({"enum": [True, False, None]}, [True, False, None]),
        ({"enum": [1, 2.5, "auto"]}, [1, 2.5, "auto"]),
        ({"type": "boolean", "enum": [True]}, [True]),
        ({"const": True}, [True]),
        ({"const": 7}, [7]),
    ],
)
def test_am_xml_shows_each_allowed_value_as_a_value_written_so_reads_back(
    schema: dict[str, Any], values: list[Any]
) -> None:
    """``am_xml`` shows an enum in the parameter's description, and the model
    writes the value it read there into the element. Python's ``str`` showed
    ``True`` and ``None``; written so, a parameter without one type read back
    the string "True", which no enum of ``true`` allows. A ``const`` was not
    shown at all. Each value shown, written as shown, now reads back as itself."""
    params = {"type": "object", "properties": {"p": schema}}
    spec = ToolSpec(name="t", description="", parameters=params)
    definitions = get_renderer("am_xml").tool_definitions([spec])
    [line] = [ln for ln in definitions.split("\n") if ln.startswith('<parameter name="p"')]
    described = ET.fromstring(line).get("description") or ""
    found = re.search(r"\((?:one of|exactly) (.*)\)", described)
    assert found is not None, described
    shown = found.group(1).split(", ")
    assert len(shown) == len(values)
    for text, value in zip(shown, values, strict=True):
        parser = Parser("am_xml", _Catalog([spec]))
        call = f'<am:tool_call name="t">\n<p>{text}</p>\n</am:tool_call>'
        [end] = [e for e in parser.feed(call) + parser.end("stop") if isinstance(e, CallEnd)]
        assert end.arguments == {"p": value}


def _bounded_param(kind: str, low: int | None, high: int | None, strict: bool) -> Any:
    """A parameter schema of ``kind`` bounded to [low, high] (either may be open;
    a number's bounds exclusive when ``strict``, a length's never negative)."""
    schema: dict[str, Any] = {"type": kind}
    if kind in ("string", "array"):
        keys = ("minLength", "maxLength") if kind == "string" else ("minItems", "maxItems")
        low = None if low is None else min(abs(low), high if high is not None else abs(low))
        schema.update({"items": {"type": "string"}} if kind == "array" else {})
    else:
        keys = ("exclusiveMinimum", "exclusiveMaximum") if strict else ("minimum", "maximum")
    for key, bound in zip(keys, (low, high), strict=True):
        if bound is not None:
            schema[key] = bound / 2 if kind == "number" else bound
    return schema


_bounds = st.tuples(
    st.sampled_from(["integer", "number", "string", "array"]),
    st.none() | st.integers(-50, 50),
    st.none() | st.integers(0, 60),
    st.booleans(),
).filter(lambda b: b[1] is None or b[2] is None or b[1] + 2 * b[3] + 1 < b[2])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bounds=st.lists(_bounds, min_size=1, max_size=3))
def test_the_example_call_is_one_its_tool_accepts(bounds: list[Any]) -> None:
    """The worked example shows a call succeeding; its values came from the type
    alone (3, 2.5, "example city", one item), so a parameter bounded as the
    registry checks (``maximum: 2``, ``minimum: 10``, ``maxLength: 2``,
    ``minItems: 2``) showed a call the tool refuses, as if it worked. Each value
    now lies within its bounds."""
    props = {f"p{n}": _bounded_param(*b) for n, b in enumerate(bounds)}
    schema = {"type": "object", "properties": props, "required": list(props)}
    registry = ToolRegistry()
    registry.add_schema("t", "T.", schema)
    assert registry.check_arguments("t", example_arguments(schema)) is None
    spec = registry.specs()[0]
    for dialect in DIALECTS:  # the example shown, the second call varied, too
        r = get_renderer(dialect)
        turns = re.split(r"\n(?=(?:Assistant|Result|User): )", r.example([spec]))
        for reply in [t.removeprefix("Assistant: ") for t in turns if t.startswith("Assistant")]:
            parser = Parser(dialect, registry)
            events = parser.feed(reply) + parser.end("stop")
            assert not [e for e in events if isinstance(e, CallError)], (dialect, reply)


@pytest.mark.parametrize(
    "param",
    [
        {"type": "integer", "minimum": 0, "maximum": 2},
        {"type": "number", "minimum": 10},
        {"type": "number", "exclusiveMaximum": 2.5},
        {"type": "string", "maxLength": 2},
        {"type": "array", "items": {"type": "string"}, "minItems": 2},
    ],
)
def test_a_bounded_parameter_gets_an_example_value_within_its_bounds(param: dict[str, Any]) -> None:
    schema = {"type": "object", "properties": {"p": param}, "required": ["p"]}
    registry = ToolRegistry()
    registry.add_schema("t", "T.", schema)
    assert registry.check_arguments("t", example_arguments(schema)) is None
