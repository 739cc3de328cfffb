"""The tool schema each API takes (``providers.toolschema``), as properties.

For schemas of ``@tool`` functions (msgspec: ``$defs``/``$ref``, ``anyOf``
with null, ``title``, recursion) and MCP-style schemas drawn at random (any
keyword, root unions, recursive ``$ref``), under every rule: the sent schema
has nothing its API refuses, the tool's own schema is unchanged, and every
instance the tool's schema takes, the sent schema takes too (read as its API
reads it: Gemini's ``nullable`` is OpenAPI's).
"""

from __future__ import annotations

import copy
import enum
from typing import Any, Literal

import msgspec
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft4Validator, Draft202012Validator  # type: ignore[import-untyped]

from streamtools import tool
from streamtools.providers.toolschema import (
    ANTHROPIC,
    GEMINI,
    OLLAMA,
    OPENAI,
    PLAIN,
    SchemaRule,
    refused_keyword,
    rule_for,
    sent_schema,
)

RULES = (PLAIN, ANTHROPIC, OPENAI, OLLAMA, GEMINI)
_GEMINI_KEYS = {
    "type", "format", "description", "nullable", "enum", "items", "properties", "required",
    "anyOf", "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern",
    "minProperties", "maxProperties", "propertyOrdering",
}  # fmt: skip


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(msgspec.Struct):
    """A point on the plane."""

    x: int
    y: float = 0.0
    color: Color = Color.RED


class Node(msgspec.Struct):
    name: str
    children: list[Node] = []


@tool
def sketch(
    at: Point,
    tree: Node,
    label: str | None = None,
    mode: Literal["a", "b"] = "a",
    level: Literal[1, 2, 3] = 1,
    tags: dict[str, int] | None = None,
    pair: tuple[int, str] | None = None,
    either: int | str = 0,
) -> str:
    """Draw a thing."""
    return ""


@tool
def ping() -> str:
    """No parameters."""
    return "pong"


TOOL_SCHEMAS = [sketch.spec().parameters, ping.spec().parameters]


# --- checks -------------------------------------------------------------------


def _subschemas(node: Any) -> list[Any]:
    if not isinstance(node, dict):
        return []
    out: list[Any] = []
    for key, value in node.items():
        if key in ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas"):
            out.extend(value.values() if isinstance(value, dict) else [])
        elif key in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(value, list):
            out.extend(value)
        elif key in ("items", "additionalProperties", "not", "if", "then", "else", "contains"):
            out.append(value)
    return out


def _nodes(node: Any) -> list[dict[str, Any]]:
    found = [node] if isinstance(node, dict) else []
    for sub in _subschemas(node):
        found.extend(_nodes(sub))
    return found


def _check_refused(sent: dict[str, Any] | None, rule: SchemaRule) -> None:
    if sent is None:
        assert rule is GEMINI  # only Gemini takes no parameters for none
        return
    assert sent["type"] == "object"
    for key in ("anyOf", "oneOf", "allOf", "enum", "const", "not", "$ref"):
        assert key not in sent, key  # OpenAI's and Anthropic's root
    if "required" in sent:
        assert isinstance(sent.get("properties"), dict)  # Groq's
    if rule is OPENAI:  # "array schema missing items"
        assert all("items" in n for n in _nodes(sent) if "array" in _types(n))
    if rule in (PLAIN, ANTHROPIC, OPENAI):
        return
    for node in _nodes(sent):
        assert "$ref" not in node
        assert "$defs" not in node
    if rule is OLLAMA:  # a property keeps type, description, enum, anyOf, items, properties
        for node in _nodes(sent)[1:]:
            assert "const" not in node
            if node.get("required") and "properties" in node:
                assert "Required: " in node["description"]
    if rule is not GEMINI:
        return
    assert sent["properties"], "Gemini: an object needs properties"
    for node in _nodes(sent):
        assert set(node) <= _GEMINI_KEYS, set(node) - _GEMINI_KEYS
        assert not isinstance(node.get("type"), list)
        assert node.get("type") != "null"
        if "enum" in node:
            assert all(isinstance(v, str) for v in node["enum"])
            assert node.get("type") == "string"
        if node.get("type") == "object":
            assert node.get("properties")
        if node.get("type") == "array":
            assert node.get("items"), "Gemini: items: missing field"
        for name in node.get("required", ()):
            assert name in node["properties"], "Gemini: property is not defined"


def _types(node: dict[str, Any]) -> list[Any]:
    kind = node.get("type")
    return kind if isinstance(kind, list) else [kind]


def _as_read(node: Any) -> Any:
    """A sent schema as its API reads it: ``nullable`` (OpenAPI) also takes null."""
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("properties", "$defs", "patternProperties") and isinstance(value, dict):
            out[key] = {k: _as_read(v) for k, v in value.items()}
        elif key in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(value, list):
            out[key] = [_as_read(v) for v in value]
        elif key in ("items", "additionalProperties", "not"):
            out[key] = _as_read(value)
        elif key != "nullable":
            out[key] = value
    if node.get("nullable") is True:
        return {"anyOf": [out, {"type": "null"}]}
    return out


# --- instances ------------------------------------------------------------------

_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.floats(-5, 5, allow_nan=False),
    st.sampled_from(["", "a", "red", "blue", "x@y.z", "2024-01-01T00:00:00Z"]),
)  # fmt: skip
_ANY = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abxy"), inner, max_size=3)
    ),
    max_leaves=6,
)


def _resolve(root: dict[str, Any], ref: str) -> Any:
    node: Any = root
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


def _instances(node: Any, root: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values aimed at ``node`` (checked against it by the caller, not trusted)."""
    if not isinstance(node, dict) or depth > 6:
        return _ANY
    if "$ref" in node:
        return _instances(_resolve(root, node["$ref"]), root, depth + 1)
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    for key in ("anyOf", "oneOf"):
        if key in node:
            return st.one_of([_instances(v, root, depth + 1) for v in node[key]])
    if "allOf" in node and node["allOf"]:
        return _instances(node["allOf"][0], root, depth + 1)
    kind = node.get("type")
    if isinstance(kind, list):
        return st.one_of([_instances({**node, "type": k}, root, depth) for k in kind])
    if kind == "object" or "properties" in node:
        props = node.get("properties", {})
        required = set(node.get("required", ()))
        fields = {
            name: _instances(sub, root, depth + 1)
            for name, sub in props.items()
            if name in required
        }
        optional = {
            name: _instances(sub, root, depth + 1)
            for name, sub in props.items()
            if name not in required
        }
        extra = st.dictionaries(st.sampled_from(["zz", "extra"]), _SCALARS, max_size=1)
        return st.builds(
            lambda a, b, c: {**c, **a, **b},
            st.fixed_dictionaries(fields),
            st.fixed_dictionaries({}, optional=optional),
            extra,
        )
    if kind == "array" or "items" in node or "prefixItems" in node:
        if "prefixItems" in node:
            return st.tuples(*[_instances(v, root, depth + 1) for v in node["prefixItems"]]).map(
                list
            )
        items = node.get("items", {})
        return st.lists(_instances(items, root, depth + 1), max_size=3)
    kinds = {
        "string": st.sampled_from(["", "a", "red", "abcdef", "x@y.z"]),
        "integer": st.integers(-5, 12),
        "number": st.one_of(st.integers(-5, 12), st.floats(-5, 12, allow_nan=False)),
        "boolean": st.booleans(),
        "null": st.none(),
    }
    return kinds.get(kind, _ANY) if isinstance(kind, str) else _ANY


# --- MCP-style schemas ------------------------------------------------------------

_NOTES = st.fixed_dictionaries(
    {},
    optional={
        "title": st.just("T"),
        "description": st.sampled_from(["Said.", "A thing to do"]),
        "$comment": st.just("c"),
        "examples": st.just(["a"]),
    },
)


def _leaf() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.builds(
            lambda extra: {"type": "string", **extra},
            st.fixed_dictionaries(
                {},
                optional={
                    "format": st.sampled_from(["email", "date-time", "uri"]),
                    "minLength": st.integers(0, 2),
                    "maxLength": st.integers(3, 6),
                    "pattern": st.just("^[a-z@.]*$"),
                    "default": st.just("a"),
                },
            ),
        ),
        st.builds(
            lambda extra: {"type": "integer", **extra},
            st.fixed_dictionaries(
                {},
                optional={
                    "minimum": st.integers(-3, 0),
                    "exclusiveMaximum": st.integers(5, 10),
                    "multipleOf": st.just(1),
                    "default": st.just(0),
                },
            ),
        ),
        st.just({"type": "number"}),
        st.just({"type": "boolean"}),
        st.just({"type": "null"}),
        st.just({"type": ["string", "null"]}),
        st.just({"type": ["integer", "string"]}),
        st.sampled_from([{"const": "red"}, {"const": 3}, {"const": None}]),
        st.sampled_from([{"enum": ["a", "b"]}, {"enum": [1, 2]}, {"enum": ["a", None]}]),
        st.just({}),
        st.just({"type": "array"}),  # an MCP server's list of anything
        st.just({"$ref": "#/$defs/Item"}),
        st.just({"$ref": "#/$defs/Tree"}),
    )


def _composite(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    names = st.sampled_from(["a", "b", "c", "d"])
    obj = st.builds(
        lambda props, req, extra: {
            "type": "object",
            "properties": props,
            **({"required": sorted(set(req) & set(props))} if req else {}),
            **extra,
        },
        st.dictionaries(names, inner, max_size=3),
        st.lists(names, max_size=2),
        st.fixed_dictionaries(
            {},
            optional={
                "additionalProperties": st.one_of(st.booleans(), inner),
                "patternProperties": st.just({"^x": {"type": "integer"}}),
                "propertyNames": st.just({"maxLength": 5}),
            },
        ),
    )
    arr = st.builds(
        lambda items, extra: {"type": "array", "items": items, **extra},
        inner,
        st.fixed_dictionaries(
            {}, optional={"minItems": st.integers(0, 1), "uniqueItems": st.booleans()}
        ),
    )
    tup = st.builds(lambda a, b: {"type": "array", "prefixItems": [a, b], "items": b}, inner, inner)
    union = st.builds(
        lambda key, parts: {key: parts},
        st.sampled_from(["anyOf", "oneOf", "allOf"]),
        st.lists(inner, min_size=1, max_size=3),
    )
    noted = st.builds(lambda node, notes: {**node, **notes}, st.one_of(obj, arr, union), _NOTES)
    return st.one_of(obj, arr, tup, union, noted)


_SCHEMA = st.recursive(_leaf(), _composite, max_leaves=8)
_DEFS = {
    "Item": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
    "Tree": {
        "type": "object",
        "description": "A tree.",
        "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}},
    },
}


@st.composite
def mcp_schemas(draw: st.DrawFn) -> dict[str, Any]:
    props = draw(st.dictionaries(st.sampled_from(["p", "q", "r"]), _SCHEMA, max_size=3))
    root: dict[str, Any] = {"type": "object", "properties": props}
    if draw(st.booleans()) and props:
        root["required"] = sorted(draw(st.sets(st.sampled_from(sorted(props)))))
    shape = draw(st.sampled_from(["plain", "anyOf", "oneOf", "allOf", "ref", "bare"]))
    if shape in ("anyOf", "oneOf", "allOf"):
        other = {"type": "object", "properties": {"s": draw(_SCHEMA)}, "required": ["s"]}
        root = {shape: [root, other, {"required": ["p"]}]}
    elif shape == "ref":
        root = {"$ref": "#/$defs/Args", "$defs": {"Args": root}}
    elif shape == "bare":
        root.pop("type")
    if draw(st.booleans()):
        root["additionalProperties"] = False
    root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    root.setdefault("$defs", {}).update(_DEFS)
    return root


# --- the properties ----------------------------------------------------------------


def _holds(schema: dict[str, Any], rule: SchemaRule, data: st.DataObject) -> None:
    before = copy.deepcopy(schema)
    sent = sent_schema(schema, rule)
    assert schema == before, "the tool's own schema was changed"
    _check_refused(sent, rule)
    Draft202012Validator.check_schema(_as_read(sent or {"type": "object"}))
    own = Draft202012Validator(schema)
    read = Draft202012Validator(_as_read(sent or {"type": "object"}))
    for _ in range(4):
        instance = data.draw(_instances(schema, schema))
        if isinstance(instance, dict) and own.is_valid(instance):  # arguments: an object
            assert read.is_valid(instance), (instance, sent)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
@pytest.mark.parametrize("index", range(len(TOOL_SCHEMAS)))
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_tool_schemas_sent(rule: SchemaRule, index: int, data: st.DataObject) -> None:
    _holds(TOOL_SCHEMAS[index], rule, data)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(schema=mcp_schemas(), data=st.data())
def test_mcp_schemas_sent(rule: SchemaRule, schema: dict[str, Any], data: st.DataObject) -> None:
    assume(_valid_schema(schema))
    _holds(schema, rule, data)


def _valid_schema(schema: dict[str, Any]) -> bool:
    try:
        Draft202012Validator.check_schema(schema)
    except Exception:
        return False
    return True


# --- cases ---------------------------------------------------------------------


def test_gemini_keeps_what_it_can_say() -> None:
    sent = sent_schema(sketch.spec().parameters, GEMINI)
    assert sent is not None
    props = sent["properties"]
    assert props["at"]["description"] == "A point on the plane."  # the Struct's docstring
    assert props["at"]["properties"]["color"] == {
        "enum": ["blue", "red"], "type": "string", "description": 'Default: "red".'
    }  # fmt: skip
    assert props["label"] == {"type": "string", "nullable": True}
    assert props["level"] == {"type": "integer", "description": "One of: 1, 2, 3. Default: 1."}
    # the recursion is unfolded twice, then any value, named
    kids = props["tree"]["properties"]["children"]["items"]["properties"]["children"]
    assert kids["items"] == {"description": "Node"}
    assert sent_schema(ping.spec().parameters, GEMINI) is None
    # an MCP server's required name without a property, and a list of anything
    loose = {"properties": {"a": {"type": "array"}}, "required": ["a", "ref"]}
    assert sent_schema(loose, GEMINI) == {
        "type": "object", "properties": {"a": {"description": "A JSON array."}}, "required": ["a"]
    }  # fmt: skip


def test_root_unions_are_one_object() -> None:
    closed = {"additionalProperties": False}
    a = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "k"]}
    b = {"properties": {"b": {"type": "integer", "description": "B."}}, "required": ["b", "k"]}
    schema = {"anyOf": [{**a, **closed}, {**b, **closed}], "properties": {"k": {"type": "string"}}}
    sent = sent_schema(schema, PLAIN)
    assert sent == {
        "type": "object",
        "properties": {
            "k": {"type": "string"}, "a": {"type": "string"},
            "b": {"type": "integer", "description": "B."},
        },
        "required": ["k"],
    }  # fmt: skip
    # a variant open to other names takes any value under them: only the words stay
    sent = sent_schema({"oneOf": [a, b], "properties": {"k": {"type": "string"}}}, PLAIN)
    assert sent is not None
    assert sent["properties"] == {"k": {"type": "string"}, "a": {}, "b": {"description": "B."}}
    assert sent_schema({"required": ["x"]}, PLAIN) == {
        "type": "object", "required": ["x"], "properties": {}
    }  # fmt: skip


def test_a_plain_schema_goes_as_given() -> None:
    schema = sketch.spec().parameters
    assert sent_schema(schema, PLAIN) == schema
    assert sent_schema(schema, OPENAI) == schema  # nothing OpenAI refuses in it


@tool
def tally(values: list, pair: tuple) -> int:  # type: ignore[type-arg]
    """Count."""
    return len(values)


def test_openai_gets_items_for_every_array() -> None:
    own = tally.spec().parameters
    assert own["properties"]["values"] == {"type": "array"}  # what msgspec gives a bare list
    sent = sent_schema(own, OPENAI)
    assert sent is not None
    assert sent["properties"]["values"] == {"type": "array", "items": {}}
    assert sent["properties"]["pair"] == {"type": "array", "items": {}}


def test_rule_for_the_server() -> None:
    gemini = "https://generativelanguage.googleapis.com/v1beta/openai"
    assert rule_for(gemini, "gemini-2.5-flash") is GEMINI
    assert rule_for("https://openrouter.ai/api/v1", "google/gemini-3-pro") is GEMINI
    assert rule_for("http://localhost:11434/v1", "qwen3") is OLLAMA
    assert rule_for("https://api.openai.com/v1", "gpt-5") is OPENAI
    assert rule_for("http://127.0.0.1:8000/v1", "Qwen/Qwen3-8B") is OPENAI


def test_refused_keyword_read() -> None:
    gemini = (
        '{"error": {"code": 400, "message": "Invalid JSON payload received. Unknown name '
        '\\"$defs\\" at \'tools[0].function_declarations[0].parameters\': Cannot find field."}}'
    )
    assert refused_keyword(gemini) == (True, "$defs")
    groq = (
        "invalid JSON schema for tool draw, tools[0].function.parameters: "
        "'uniqueItems' is not supported"
    )
    assert refused_keyword(groq) == (False, "uniqueItems")
    openai = (
        "Invalid schema for function 'draw': In context=('properties', 'tags'), "
        "'uniqueItems' is not permitted."
    )
    assert refused_keyword(openai) == (False, "uniqueItems")
    assert refused_keyword("'stop' is not supported with this model.") is None
    assert refused_keyword("tool schema: this feature is not supported") is None


def test_inlining_is_bounded_in_size() -> None:
    # each definition uses the next twice: unfolded whole, 2**40 copies of the last
    defs = {
        f"D{i}": {
            "type": "object",
            "description": f"Level {i}.",
            "properties": {"l": {"$ref": f"#/$defs/D{i + 1}"}, "r": {"$ref": f"#/$defs/D{i + 1}"}},
        }
        for i in range(40)
    }
    defs["D40"] = {"type": "string"}
    schema = {"type": "object", "properties": {"top": {"$ref": "#/$defs/D0"}}, "$defs": defs}
    for rule in (OLLAMA, GEMINI):
        sent = sent_schema(schema, rule)
        nodes = _nodes(sent)
        assert 100 < len(nodes) < 5000
        cut = [n for n in nodes if set(n) == {"description"} and n["description"].startswith("Lev")]
        assert cut  # the references past the bound: any value, with their words
        valid: dict[str, Any] = {"top": {"l": {"r": {"l": {}}}, "r": {}}}
        assert Draft202012Validator(schema).is_valid(valid)
        assert Draft202012Validator(_as_read(sent)).is_valid(valid)


_KEYS = st.sampled_from([
    "type", "properties", "required", "items", "anyOf", "oneOf", "allOf", "$ref", "$defs",
    "enum", "const", "default", "description", "additionalProperties", "prefixItems", "format",
])  # fmt: skip
_JUNK_LEAF = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=3),
    st.sampled_from(["#/$defs/A", "#", "#/properties", "http://x", "object", "array", "null"]),
)  # fmt: skip
_JUNK = st.recursive(
    _JUNK_LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.one_of(_KEYS, st.text(max_size=2)), inner)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(schema=st.dictionaries(_KEYS, _JUNK, max_size=5), rule=st.sampled_from(RULES))
def test_any_json_object_is_sent_without_raising(schema: dict[str, Any], rule: SchemaRule) -> None:
    # an MCP server's schema is not ours: a malformed one must not end the run here
    sent = sent_schema(schema, rule)
    assert sent is None or sent["type"] == "object"


_DRAFT4 = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "type": "object",
    "properties": {
        "point": {"type": "array", "items": [{"type": "number"}, {"type": "string"}],
                  "additionalItems": {"type": "boolean"}},
        "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": True,
                  "maximum": 1, "exclusiveMaximum": False},
        "name": {"type": "string", "required": True},
    },
}  # fmt: skip


def test_anthropic_gets_draft_2020_12_forms() -> None:
    # Anthropic checks input_schema against 2020-12's metaschema, which refuses these
    assert not Draft202012Validator(Draft202012Validator.META_SCHEMA).is_valid(_DRAFT4)
    sent = sent_schema(_DRAFT4, ANTHROPIC)
    assert sent is not None
    Draft202012Validator.check_schema(sent)
    assert sent["properties"]["point"] == {
        "type": "array",
        "prefixItems": [{"type": "number"}, {"type": "string"}],
        "items": {"type": "boolean"},
    }
    assert sent["properties"]["ratio"] == {
        "type": "number", "exclusiveMinimum": 0, "maximum": 1
    }  # fmt: skip
    own, read = Draft4Validator(_DRAFT4), Draft202012Validator(sent)
    instances: list[Any] = [
        {"point": [1, "a"]}, {"point": [1, "a", True]}, {"point": [1, "a", 3]}, {"point": ["a"]},
        {"ratio": 0}, {"ratio": 0.5}, {"ratio": 1}, {"ratio": 1.5}, {"name": "x"}, {},
    ]  # fmt: skip
    for instance in instances:  # the same verdicts, as each draft reads its own schema
        assert own.is_valid(instance) == read.is_valid(instance), instance
