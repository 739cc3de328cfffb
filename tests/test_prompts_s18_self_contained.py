"""The JSON dialects' tool definitions showed a nested type's parameter as
``{"$ref": "#/$defs/Address"}``, its fields at the end of the schema under
``$defs``: a small local model has to look them up and carry them back, and
templates and clients that dereference nothing leave it there (other projects
inline them for the model: huggingface/AnyLanguageModel#177,
modelcontextprotocol/typescript-sdk#1563). The definitions now show each
parameter whole where it stands (``prompts.self_contained``), except where
inlining cannot be whole (a recursive type) or would blow the schema up."""

from __future__ import annotations

import enum
import json
import re
from typing import Any

import msgspec
import pytest

from streamtools.model import ToolSpec
from streamtools.prompts import get_renderer
from streamtools.prompts.self_contained import self_contained
from streamtools.tools import ToolRegistry, tool


class Speed(enum.Enum):
    FAST = "fast"
    SLOW = "slow"


class Address(msgspec.Struct):
    street: str
    city: str


@tool
def ship(to: Address, speed: Speed, back: Address | None = None) -> str:
    """Ship a parcel."""
    return ""


JSON_DIALECTS = ["hermes", "inline_json", "json_action", "command", "json_object"]


def _shown_parameters(dialect: str, specs: list[ToolSpec]) -> dict[str, Any]:
    """The parameters schema the system prompt shows for the one tool."""
    prompt = get_renderer(dialect).system_prompt(specs, few_shot=False)
    if dialect == "hermes":
        line = next(x for x in prompt.splitlines() if x.startswith('{"type": "function"'))
        shown: dict[str, Any] = json.loads(line)["function"]["parameters"]
        return shown
    found = re.search(r"^Parameters \(JSON Schema\): (.*)$", prompt, re.MULTILINE)
    assert found is not None, prompt
    shown = json.loads(found.group(1))
    return shown


@pytest.mark.parametrize("dialect", JSON_DIALECTS)
def test_a_nested_type_is_shown_where_it_stands(dialect: str) -> None:
    specs = ToolRegistry([ship]).specs()
    assert "$defs" in specs[0].parameters  # (what msgspec writes)
    shown = _shown_parameters(dialect, specs)
    assert "$ref" not in json.dumps(shown) and "$defs" not in shown
    props = shown["properties"]
    assert props["to"]["properties"]["street"] == {"type": "string"}
    assert props["to"]["required"] == ["street", "city"]
    assert props["speed"]["enum"] == ["fast", "slow"]
    options = props["back"]["anyOf"]
    assert {"type": "null"} in options
    assert any(o.get("properties", {}).get("city") == {"type": "string"} for o in options)


def _spec(parameters: dict[str, Any]) -> ToolSpec:
    return ToolSpec(name="t", description="T.", parameters=parameters)


def test_keywords_beside_a_reference_stay_and_a_parameter_named_definitions_too() -> None:
    params = {
        "type": "object",
        "properties": {
            "definitions": {"type": "string"},
            "c": {"$ref": "#/$defs/C", "description": "the colour"},
            "d": {"$ref": "#/definitions/D~1E"},
        },
        "$defs": {"C": {"enum": ["red", "blue"], "description": "a colour"}},
        "definitions": {"D/E": {"type": "integer"}},
    }
    shown = _shown_parameters("inline_json", [_spec(params)])
    assert shown == {
        "type": "object",
        "properties": {
            "definitions": {"type": "string"},
            "c": {"enum": ["red", "blue"], "description": "the colour"},
            "d": {"type": "integer"},
        },
    }


RECURSIVE = {
    "type": "object",
    "properties": {"tree": {"$ref": "#/$defs/Node"}},
    "$defs": {
        "Node": {
            "type": "object",
            "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
        }
    },
}
# a type used twice at each of 20 levels: 2**20 copies inlined
WIDE: dict[str, Any] = {
    "type": "object",
    "properties": {"a": {"$ref": "#/$defs/D0"}},
    "$defs": {
        **{
            f"D{i}": {
                "type": "object",
                "properties": {
                    "x": {"$ref": f"#/$defs/D{i + 1}"}, "y": {"$ref": f"#/$defs/D{i + 1}"}
                },
            }
            for i in range(20)
        },
        "D20": {"type": "string"},
    },
}
ELSEWHERE = {
    "type": "object",
    "properties": {"a": {"$ref": "https://example.com/a.json"}, "b": {"$ref": "#/$defs/B"}},
    "$defs": {"B": {"type": "string"}},
}
NOWHERE = {
    "type": "object",
    "properties": {"a": {"$ref": "#/$defs/Missing"}, "b": {"$ref": "#/$defs/B"}},
    "$defs": {"B": {"type": "string"}},
}


@pytest.mark.parametrize(
    "params",
    [RECURSIVE, WIDE, ELSEWHERE, NOWHERE],
    ids=["recursive", "wide", "elsewhere", "nowhere"],
)
@pytest.mark.parametrize("dialect", ["hermes", "inline_json"])
def test_a_schema_that_cannot_be_inlined_whole_is_shown_as_it_is(
    dialect: str, params: dict[str, Any]
) -> None:
    assert self_contained(params) is params
    assert _shown_parameters(dialect, [_spec(params)]) == params


class Cat(msgspec.Struct, tag="cat"):
    name: str


class Dog(msgspec.Struct, tag="dog"):
    breed: str


@tool
def adopt(pet: Cat | Dog) -> str:
    """Adopt."""
    return ""


def test_a_tagged_union_points_nowhere_once_inlined() -> None:
    specs = ToolRegistry([adopt]).specs()
    assert "#/$defs/Cat" in json.dumps(specs[0].parameters["properties"]["pet"])
    pet = _shown_parameters("hermes", specs)["properties"]["pet"]
    assert "$defs" not in json.dumps(pet)
    assert pet["discriminator"] == {"propertyName": "type"}
    assert [o["properties"]["type"] for o in pet["anyOf"]] == [{"enum": ["cat"]}, {"enum": ["dog"]}]
