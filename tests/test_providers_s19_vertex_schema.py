"""Vertex AI's ``Schema`` has ``additionalProperties`` (its v1beta1 proto; an
object with it and no properties is taken, BerriAI/litellm#14251) and refuses a
property with no type ("schema didn't specify the schema type field",
directus/mcp#8). ``GEMINI`` sent a ``dict[str, int]`` as a property with no
type (any value, described "A JSON object."): refused there, and the model
was told nothing of the values. ``VERTEX`` (chosen for Vertex AI's hosts) keeps
``additionalProperties``, so a map is an object of its values' schema; the
Gemini API's own refuses it (freellmapi#97), so ``GEMINI`` stays as it was. A
Vertex endpoint that refuses the keyword after all is asked again without
it, as ``GEMINI`` would send it (FakeServer over HTTP)."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from provider_support import collect

from streamtools import tool
from streamtools.model import ChatMessage, ModelRequest, TextChunk, ToolSpec
from streamtools.providers import OpenAIChat
from streamtools.providers.toolschema import GEMINI, OLLAMA, OPENAI, VERTEX, rule_for, sent_schema
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio
VERTEX_URL = (
    "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1"
    "/endpoints/openapi"
)


class Point(msgspec.Struct):
    x: int


@tool
def tally(
    counts: dict[str, int], meta: dict[str, Any], at: Point, notes: dict[str, str] | None = None
) -> str:
    """Keep a tally."""
    return ""


def test_the_host_chooses_vertex_and_a_model_named_gemini_the_common_subset() -> None:
    assert rule_for(VERTEX_URL, "google/gemini-2.5-flash") is VERTEX
    assert rule_for(VERTEX_URL, "meta/llama-4-maverick-17b-128e-instruct-maas") is VERTEX
    gemini_api = "https://generativelanguage.googleapis.com/v1beta/openai"
    assert rule_for(gemini_api, "gemma-3-27b-it") is GEMINI
    assert rule_for("https://openrouter.ai/api/v1", "google/gemini-3-pro") is GEMINI
    assert rule_for("http://localhost:11434/v1", "qwen3") is OLLAMA
    assert rule_for("https://api.openai.com/v1", "gpt-5") is OPENAI


def test_a_map_is_an_object_of_its_values_on_vertex() -> None:
    sent = sent_schema(tally.spec().parameters, VERTEX)
    assert sent is not None
    props = sent["properties"]
    assert props["counts"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert props["meta"] == {"type": "object", "additionalProperties": True}
    assert props["notes"] == {
        "type": "object", "additionalProperties": {"type": "string"}, "nullable": True
    }
    assert props["at"] == {
        "type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"],
        "additionalProperties": False,
    }
    assert all("type" in node for node in props.values())  # Vertex: every property typed


def test_the_gemini_api_still_gets_no_additional_properties() -> None:
    sent = sent_schema(tally.spec().parameters, GEMINI)
    assert sent is not None
    assert "additionalProperties" not in json.dumps(sent)
    assert sent["properties"]["counts"] == {"description": "A JSON object."}


def _as_read(node: Any) -> Any:
    """A sent schema as the API reads it: ``nullable`` also takes null."""
    if isinstance(node, list):
        return [_as_read(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _as_read(v) for k, v in node.items() if k != "nullable"}
    if "properties" in node:
        out["properties"] = {k: _as_read(v) for k, v in node["properties"].items()}
    return {"anyOf": [out, {"type": "null"}]} if node.get("nullable") is True else out


@pytest.mark.parametrize("instance", [
    {"counts": {}, "meta": {}, "at": {"x": 1}},
    {"counts": {"a": 1, "b": 2}, "meta": {"k": [1, "x"]}, "at": {"x": -3}, "notes": None},
    {"counts": {"a": 0}, "meta": {"n": None}, "at": {"x": 0}, "notes": {"why": "so"}},
])
def test_what_the_tool_takes_vertex_takes(instance: dict[str, Any]) -> None:
    own = tally.spec().parameters
    Draft202012Validator(own).validate(instance)  # a real instance of the tool's schema
    sent = sent_schema(own, VERTEX)
    Draft202012Validator(_as_read(sent)).validate(instance)


def test_vertex_refuses_a_map_of_integers_as_strings() -> None:
    sent = sent_schema(tally.spec().parameters, VERTEX)
    bad = {"counts": {"a": "one"}, "meta": {}, "at": {"x": 1}}
    assert not Draft202012Validator(_as_read(sent)).is_valid(bad)  # the values' schema holds


REQUEST = ModelRequest(
    messages=(ChatMessage(role="user", content="hi"),),
    tools=(ToolSpec(name="tally", description="Tally.", parameters=tally.spec().parameters),),
)
REFUSED = json.dumps({"error": {
    "code": 400,
    "message": 'Invalid JSON payload received. Unknown name "additionalProperties" at '
    "'tools[0].function_declarations[0].parameters.properties[0].value': Cannot find field.",
    "status": "INVALID_ARGUMENT",
}})  # fmt: skip


def _refusing(body: dict[str, Any]) -> str | Reply:
    said = json.dumps(body.get("tools", []))
    return Reply(status=400, body=REFUSED) if "additionalProperties" in said else "ok"


async def test_a_vertex_endpoint_that_refuses_it_is_asked_again_without(
    anyio_backend: str,
) -> None:
    async with FakeServer([_refusing] * 2) as server:
        model = OpenAIChat("google/gemini-2.5-flash", base_url=server.base_url)
        model.tool_schema = VERTEX
        chunks = await collect(model, REQUEST)
    assert [c.text for c in chunks if isinstance(c, TextChunk)] == ["ok"]
    first, second = server.requests
    assert "additionalProperties" in json.dumps(first["tools"])
    sent = second["tools"][0]["function"]["parameters"]
    assert "additionalProperties" not in json.dumps(sent)
    assert sent["properties"]["counts"] == {"description": "A JSON object."}  # GEMINI's form
