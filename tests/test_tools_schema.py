"""``streamtools.schema``: JSON Schema <-> msgspec type, paths and explanations."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamtools.schema
from streamtools.schema import (
    MAX_DEPTH,
    arguments_from,
    at_path,
    explain,
    resolve,
    schema_of,
    type_from_schema,
)
from streamtools.tools import ToolRegistry


def _check(schema: dict[str, Any], value: Any, *, lenient: bool = False) -> str | None:
    """None when ``value`` validates against ``type_from_schema(schema)``, else msgspec's error."""
    try:
        msgspec.convert(value, type_from_schema(schema), strict=not lenient)
    except msgspec.ValidationError as exc:
        return str(exc)
    return None


class Point(msgspec.Struct):
    x: int
    y: int = 0


def test_schema_of_puts_the_object_at_the_root() -> None:
    args = msgspec.defstruct("f.arguments", [("p", Point), ("n", int, 1)], kw_only=True)
    root = schema_of(args)
    assert "$ref" not in root and "title" not in root
    assert root["properties"]["p"] == {"$ref": "#/$defs/Point"}
    assert root["$defs"]["Point"]["required"] == ["x"]
    assert root["required"] == ["p"]
    assert schema_of(Point) == {
        "type": "object",
        "title": "Point",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
        "required": ["x"],
    }
    with pytest.raises(TypeError):  # a class msgspec cannot describe
        schema_of(msgspec.defstruct("f.arguments", [("p", complex)]))


CASES: list[tuple[dict[str, Any], Any, str | None]] = [
    ({"type": "integer", "minimum": 0}, 3, None),
    ({"type": "integer", "minimum": 0}, -1, "Expected `int` >= 0"),
    ({"type": "number", "exclusiveMaximum": 1}, 1.0, "Expected `float` < 1"),
    ({"type": "string", "maxLength": 2}, "abc", "Expected `str` of length <= 2"),
    ({"type": "array", "items": {"type": "string"}, "minItems": 1}, [], "length >= 1"),
    ({"type": "array", "items": {"type": "string"}}, ["a", 1], "Expected `str`, got `int`"),
    ({"enum": ["a", "b"]}, "c", "Invalid enum value 'c'"),
    ({"enum": [1, 2]}, 2, None),
    ({"enum": [1, "a", None]}, {"any": "thing"}, None),  # mixed enum: not expressible, Any
    ({"const": "x"}, "y", "Invalid enum value 'y'"),
    ({"type": ["string", "null"]}, None, None),
    ({"type": ["string", "null"]}, 1, "Expected `str | null`, got `int`"),
    ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, "s", None),
    # two object members are ambiguous to msgspec: the union validates as Any
    ({"oneOf": [{"type": "object", "properties": {"a": {}}}, {"type": "object"}]}, 5, None),
    ({"type": "boolean"}, "true", "Expected `bool`, got `str`"),
    ({"type": "null"}, None, None),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, {"k": "v"}, "`$[...]`"),
    ({"type": "object"}, {"k": [1, {}]}, None),
    ({"$ref": "https://example.com/remote.json"}, object(), None),  # never fetched: Any
    ({"$ref": "#/$defs/missing"}, 1, None),
    ({"type": "something-new"}, 1, None),
]


@pytest.mark.parametrize(("schema", "value", "error"), CASES)
def test_type_from_schema(schema: dict[str, Any], value: Any, error: str | None) -> None:
    found = _check(schema, value)
    if error is None:
        assert found is None
    else:
        assert found is not None and error in found


def test_objects_required_renamed_and_closed() -> None:
    schema = {
        "type": "object",
        "properties": {"my key": {"type": "integer"}, "opt": {"type": "string"}},
        "required": ["my key"],
        "additionalProperties": False,
    }
    typ = type_from_schema(schema)
    value = msgspec.convert({"my key": "4"}, typ, strict=False)
    assert arguments_from(value, {"my key": "4"}) == {"my key": 4}  # absent stays absent
    assert _check(schema, {}) == "Object missing required field `my key`"
    assert _check(schema, {"my key": 1, "x": 1}) == "Object contains unknown field `x`"
    open_schema = {**schema, "additionalProperties": True}
    value = msgspec.convert({"my key": 1, "x": [2]}, type_from_schema(open_schema))
    assert arguments_from(value, {"my key": 1, "x": [2]}) == {"my key": 1, "x": [2]}
    # keys msgspec cannot use as names still validate, as a free-form object
    odd = {"type": "object", "properties": {'a"b': {"type": "integer"}}}
    assert _check(odd, {'a"b': "not checked"}) is None


def test_local_refs_and_depth_limit() -> None:
    schema = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
        "$defs": {"Item": {"type": "object", "properties": {"id": {"type": "integer"}}}},
    }
    assert _check(schema, {"items": [{"id": 1}]}) is None
    assert _check(schema, {"items": [{"id": "x"}]}) == (
        "Expected `int`, got `str` - at `$.items[0].id`"
    )
    loop: dict[str, Any] = {"$ref": "#/$defs/Node", "$defs": {"Node": {"$ref": "#/$defs/Node"}}}
    assert type_from_schema(loop) is Any  # a reference cycle ends at the depth limit
    deep: dict[str, Any] = {"type": "integer"}
    for _ in range(30):
        deep = {"type": "array", "items": deep}
    value: Any = "below the depth limit: Any"
    for _ in range(MAX_DEPTH):
        value = [value]
    assert _check(deep, value) == "Expected `array`, got `str` - at `$" + "[0]" * MAX_DEPTH + "`"
    assert _check(deep, [value]) is None


def test_arguments_from_keeps_undeclared_keys() -> None:
    assert arguments_from({"a": 1}, {"a": "1", "b": 2}) == {"a": 1, "b": 2}
    assert arguments_from(None, {"a": 1}) == {"a": 1}


def test_resolve_and_at_path() -> None:
    root: dict[str, Any] = {
        "type": "object",
        "properties": {
            "loc": {"$ref": "#/$defs/Loc", "description": "Where."},
            "tags": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        "$defs": {
            "Loc": {"type": "object", "properties": {"city": {"type": "string"}}},
            "Alias": {"$ref": "#/$defs/Loc"},
        },
    }
    assert resolve(root, root["properties"]["loc"]) == {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "description": "Where.",
    }
    assert resolve(root, {"$ref": "#/$defs/Alias"})["properties"] == {"city": {"type": "string"}}
    assert resolve(root, {"$ref": "#/nowhere", "title": "T"}) == {"title": "T"}
    assert resolve(root, None) == {}
    assert at_path(root, "$") is root
    assert at_path(root, "$.loc.city") == {"type": "string"}
    assert at_path(root, "$.tags[...]") == {"type": "string"}
    assert at_path(root, "$.loc.zip") is None
    assert at_path(root, "$.loc[0]") is None


def test_explain() -> None:
    root = {
        "type": "object",
        "properties": {
            "days": {"type": "integer", "minimum": 1},
            "loc": {"$ref": "#/$defs/Loc"},
            "blob": {"type": "string", "description": "x" * 700},
        },
        "$defs": {"Loc": {"type": "object", "properties": {"city": {"type": "string"}}}},
    }
    assert explain(root, "Expected `int` >= 1 - at `$.days`") == (
        "$.days",
        '`$.days` must match this schema: {"type": "integer", "minimum": 1}',
    )
    assert explain(root, "Object missing required field `city` - at `$.loc`") == (
        "$.loc.city",
        '`$.loc.city` must match this schema: {"type": "string"}',
    )
    assert explain(root, "Object contains unknown field `dayz`") == (
        "$",
        "Allowed parameters at `$`: days, loc, blob.",
    )
    assert explain(root, "Object contains unknown field `x` - at `$.loc`")[1] == (
        "Allowed parameters at `$.loc`: city."
    )
    path, hint = explain(root, "Expected `str`, got `int` - at `$.blob`")
    assert path == "$.blob" and hint.endswith(" …") and len(hint) < 700
    assert explain(root, "Expected `str` - at `$.nowhere`") == ("$.nowhere", "")


SIMPLE = st.sampled_from(
    [
        ({"type": "integer"}, st.integers()),
        ({"type": "string"}, st.text(max_size=20)),
        ({"type": "number"}, st.floats(allow_nan=False, allow_infinity=False)),
        ({"type": "boolean"}, st.booleans()),
        ({"enum": ["a", "b"]}, st.sampled_from(["a", "b"])),
    ]
)


@st.composite
def schema_and_value(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """An object schema of simple properties and an object that matches it."""
    names = draw(st.lists(st.text(min_size=1, max_size=8), max_size=5, unique=True))
    props: dict[str, Any] = {}
    value: dict[str, Any] = {}
    for name in names:
        sub, values = draw(SIMPLE)
        if draw(st.booleans()):
            sub = {"type": "array", "items": sub}
            values = st.lists(values, max_size=3)
        props[name] = sub
        if draw(st.booleans()):
            value[name] = draw(values)
    required = [n for n in names if n in value and draw(st.booleans())]
    return {"type": "object", "properties": props, "required": required}, value


@settings(max_examples=150, deadline=None)
@given(schema_and_value())
def test_matching_values_validate_and_come_back_unchanged(
    case: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    schema, value = case
    converted = msgspec.convert(value, type_from_schema(schema))
    assert arguments_from(converted, value) == value


@pytest.mark.parametrize("module", ["schema.py", "schema_nav.py"])
def test_schema_module_is_core(module: str) -> None:
    path = Path(streamtools.schema.__file__).with_name(module)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = {
        name if name == "streamtools.schema_nav" else name.split(".")[0]
        for node in ast.walk(tree)
        for name in (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else []
        )
    }
    stdlib = {"__future__", "collections", "json", "math", "re", "typing"}
    assert imported <= stdlib | {"msgspec", "streamtools.schema_nav"}


def test_explain_writes_out_the_references_in_its_snippet() -> None:
    """The snippet for ``$.items`` was ``{"type": "array", "items": {"$ref":
    "#/$defs/Item"}}``: a reference the model cannot follow, as the snippet
    carries no ``$defs``. The item's own schema is written out in its place;
    a recursive type stops expanding, within the snippet's bound."""
    root = {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
            "tree": {"$ref": "#/$defs/Node"},
        },
        "$defs": {
            "Item": {"type": "object", "properties": {"id": {"type": "integer"}}},
            "Node": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            },
        },
    }
    path, hint = explain(root, "Expected `array`, got `object` - at `$.items`")
    assert path == "$.items" and "$ref" not in hint
    assert hint.endswith(
        '{"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}}}}'
    )
    path, hint = explain(root, "Expected `object`, got `int` - at `$.tree`")
    assert hint.startswith('`$.tree` must match this schema: {"type": "object", "properties": ')
    assert len(hint) < 700


@pytest.mark.parametrize(
    ("bounds", "kept"),
    [
        ({"type": "integer", "minimum": True, "maximum": 9}, {"a": 10}),
        ({"type": "string", "maxLength": -1, "minLength": 2}, {"a": "x"}),
        ({"type": "string", "maxLength": 2**70, "minLength": 2}, {"a": "x"}),
        ({"type": "number", "minimum": float("nan"), "maximum": 9}, {"a": 10}),
        ({"type": "number", "minimum": float("inf"), "maximum": 9}, {"a": 10}),
        ({"type": "integer", "minimum": 2**70, "maximum": 9}, {"a": 10}),
        ({"type": "array", "minItems": True, "maxItems": 1}, {"a": [1, 2]}),
        ({"type": "integer", "minimum": 0, "exclusiveMinimum": 0, "maximum": 9}, {"a": 10}),
    ],
)
def test_a_bound_msgspec_cannot_check_is_left_out_not_raised(
    bounds: dict[str, Any], kept: dict[str, Any]
) -> None:
    """A foreign schema's bound msgspec refuses (``true`` as a minimum, a negative
    or 2**70 length, NaN or infinity, an integer beyond 64 bits, both kinds of
    minimum) made ``add_schema`` raise ``TypeError``/``ValueError`` out of an MCP
    server's tool list or a proxy request, or (the 64-bit integer) made every
    call fail its validation. Such a bound is now left out, as an unknown
    keyword is; the tool's other bounds still hold."""
    from streamtools.tools import ToolRegistry

    registry = ToolRegistry()
    schema = {"type": "object", "properties": {"a": bounds}, "required": ["a"]}
    registry.add_schema("t", "A tool.", schema, fn=lambda **kw: kw)
    ok = {"a": [1] if bounds["type"] == "array" else "xy" if bounds["type"] == "string" else 5}
    assert registry.check_arguments("t", ok) is None
    refused = registry.check_arguments("t", kept)
    assert refused is not None and "$.a" in refused


def test_an_object_closed_with_no_properties_takes_no_key() -> None:
    """``{"properties": {}, "additionalProperties": false}`` (a tool without
    parameters, as OpenAI's strict mode writes every schema) became a free-form
    ``dict``: a made-up argument passed validation and reached the function
    (``<lambda>() got an unexpected keyword argument``) or the client."""
    registry = ToolRegistry()
    closed = {"type": "object", "properties": {}, "additionalProperties": False}
    now = registry.add_schema("now", "The time.", {**closed, "required": []}, fn=lambda: "noon")
    assert registry.check_arguments("now", {"tz": "UTC"}) == (
        "Invalid arguments for tool `now`: Object contains unknown field `tz`. "
        "Allowed parameters at `$`: (none)."
    )
    assert now.validate({}) == {} and now.validate({}, lenient=True) == {}
    registry.add_schema("nested", "Nested.", {"type": "object", "properties": {"o": closed}})
    message = registry.check_arguments("nested", {"o": {"a": 1}})
    assert message is not None and "unknown field `a` - at `$.o`" in message
    assert registry.check_arguments("nested", {"o": {}}) is None
    open_ = registry.add_schema("open", "Open.", {"type": "object", "properties": {}})
    assert open_.validate({"any": 1}) == {"any": 1}  # not closed: any key, as sent


_TYPES = ["string", "integer", "number", "boolean", "array", "object", "null"]
_IS = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}
_TYPE = st.none() | st.sampled_from(_TYPES) | st.lists(st.sampled_from(_TYPES), min_size=1,
                                                        max_size=3, unique=True)


def _node(kind: Any, extra: dict[str, Any]) -> dict[str, Any]:
    return {**extra, "type": kind} if kind is not None else dict(extra)


_OPTION = st.builds(
    _node, _TYPE, st.sampled_from([{}, {"minimum": 1}, {"maximum": -1}, {"required": ["a"]},
                                    {"$ref": "#/$defs/T"}, {"format": "date"}]),
)


@settings(max_examples=300, deadline=None)
@given(_TYPE, st.sampled_from(["anyOf", "oneOf"]), st.lists(_OPTION, max_size=3))
def test_json_type_and_example_values_read_type_beside_any_of_alike(
    kind: Any, key: str, options: list[dict[str, Any]]
) -> None:
    """A schema whose ``type`` and ``anyOf`` disagree (or whose options leave
    the type to it) has one reading: the type ``json_type`` gives is the type of
    the example value the prompts show. They read it apart: ``{"type":
    "string", "anyOf": [{"type": "integer"}]}`` was a string to the parser and
    showed an integer example; ``{"type": "integer", "anyOf": [{"minimum": 1}]}``
    an integer shown as "example n"."""
    from streamtools.prompts.renderer import example_value
    from streamtools.schema import json_type

    root = {"$defs": {"T": {"type": "integer", "minimum": 2}}}
    schema = _node(kind, {key: options} if options else {})
    found = json_type(root, schema)
    if found in _IS:
        assert _IS[found](example_value(schema, "n", root)), (found, schema)


@pytest.mark.parametrize(
    ("schema", "kind", "fits"),
    [
        ({"type": "string", "anyOf": [{"type": "integer"}, {"type": "null"}]}, "string",
         lambda v: v == "example n"),
        ({"type": "integer", "anyOf": [{"minimum": 5}, {"maximum": -5}]}, "integer",
         lambda v: v >= 5),
        ({"type": "object", "properties": {"a": {"type": "boolean"}},
          "oneOf": [{"required": ["a"]}]}, "object", lambda v: v == {"a": True}),
        ({"type": ["integer", "string"], "anyOf": [{"type": "integer", "maximum": -3}]},
         "integer", lambda v: v <= -3),
    ],
)
def test_type_beside_any_of_reads_one_way(
    schema: dict[str, Any], kind: str, fits: Any
) -> None:
    from streamtools.prompts.renderer import example_value
    from streamtools.schema import json_type

    assert json_type(schema, schema) == kind
    example = example_value(schema, "n", schema)
    assert _IS[kind](example) and fits(example), example
