"""A tool parameter whose NAME is a schema keyword is a schema like any other
when the JSON dialects inline references (``prompts.self_contained``, e20060f,
e7080c1): a parameter named ``discriminator`` was taken for OpenAPI's
``discriminator`` keyword and not walked, so an Enum or Struct parameter of
that name kept its ``{"$ref": "#/$defs/Color"}`` while ``$defs`` was dropped:
the model was shown a reference to nothing."""

from __future__ import annotations

import enum
import json
from typing import Any

import msgspec

from streamtools.prompts import get_renderer
from streamtools.tools import ToolRegistry, tool


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Shape(msgspec.Struct):
    sides: int


@tool
def paint(discriminator: Color, properties: Shape, other: Color) -> str:
    """Paint something."""
    return ""


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def test_a_parameter_named_like_a_keyword_is_inlined() -> None:
    specs = ToolRegistry([paint]).specs()
    prompt = get_renderer("hermes").system_prompt(specs, few_shot=False)
    line = next(x for x in prompt.splitlines() if x.startswith('{"type": "function"'))
    shown: dict[str, Any] = json.loads(line)["function"]["parameters"]
    assert "$defs" not in shown
    assert _refs(shown) == []  # every reference inlined: none points into dropped $defs
    props = shown["properties"]
    assert sorted(props["discriminator"]["enum"]) == ["blue", "red"]
    assert props["properties"]["properties"]["sides"]["type"] == "integer"
    assert props["other"] == props["discriminator"]
