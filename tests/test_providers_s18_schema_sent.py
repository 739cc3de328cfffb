"""Native mode: what each server receives of a tool's JSON Schema, over real HTTP.

Gemini's OpenAI-compatible endpoint refused msgspec's ``$defs`` (400: every
request failed); Ollama dropped a property's ``$ref`` without a word (the
model never saw a Struct's fields); OpenAI and Anthropic refuse a root that
is a union. Each server now gets what it takes (``providers.toolschema``),
and the arguments a model sends are still checked against the tool's own
schema.
"""

from __future__ import annotations

import copy
import enum
from typing import Any

import msgspec
import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from provider_support import collect

from streamtools.events import Final, ToolFailed, ToolResult
from streamtools.model import ChatMessage, ModelRequest, ToolSpec
from streamtools.providers import AnthropicMessages, OllamaChat, OpenAIChat
from streamtools.providers.toolschema import GEMINI, OLLAMA, sent_schema
from streamtools.runtime import Agent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import FakeCall, Reply
from streamtools.tools import tool

pytestmark = pytest.mark.anyio


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(msgspec.Struct):
    """Where to put it."""

    x: int
    y: int
    color: Color = Color.RED


@tool
def place(at: Point, label: str | None = None) -> str:
    """Place a label."""
    return f"{label or '-'} at {at.x},{at.y} in {at.color.value}"


def _keys(node: Any) -> set[str]:
    """Every key of every object in ``node``, nested."""
    if isinstance(node, dict):
        return set(node).union(*(_keys(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_keys(v) for v in node))
    return set()


def _parameters(body: dict[str, Any]) -> dict[str, Any]:
    params: dict[str, Any] = body["tools"][0]["function"]["parameters"]
    return params


async def test_gemini_gets_its_subset_and_the_call_is_checked_in_full(anyio_backend: str) -> None:
    own = copy.deepcopy(place.spec().parameters)
    assert "$defs" in own
    green = {"at": {"x": 1, "y": 2, "color": "green"}}
    replies: list[str | Reply] = [
        # green is no Color: the call is checked against the tool's own schema
        Reply(calls=(FakeCall(name="place", arguments=green),)),
        Reply(calls=(FakeCall(name="place", arguments={"at": {"x": 1, "y": 2}, "label": "A"}),)),
        "Placed.",
    ]
    async with FakeServer(replies) as server:
        model = OpenAIChat("gemini-2.5-flash", base_url=server.base_url)
        async with Agent(model, [place], native=True).stream("place A") as stream:
            events = [e async for e in stream]
    sent = _parameters(server.requests[0])
    assert not _keys(sent) & {"$defs", "$ref", "additionalProperties", "title", "default"}
    assert sent == sent_schema(own, GEMINI)
    assert sent["properties"]["at"]["properties"]["color"]["enum"] == ["blue", "red"]
    assert place.spec().parameters == own  # what calls are checked against
    failed = [e for e in events if isinstance(e, ToolFailed)]
    assert len(failed) == 1 and "color" in failed[0].message
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["A at 1,2 in red"]
    assert events[-1] == Final(text="Placed.", turns=3)


async def test_ollama_gets_the_struct_fields_inline(anyio_backend: str) -> None:
    request = ModelRequest(
        messages=(ChatMessage(role="user", content="place A"),), tools=(place.spec(),)
    )
    async with FakeServer(["ok"], wire="ollama") as server:
        await collect(OllamaChat("qwen3", base_url=server.url), request)
    sent = _parameters(server.requests[0])
    assert "$ref" not in _keys(sent) and "$defs" not in sent
    at = sent["properties"]["at"]
    # Ollama's structs keep a property's description, not its required or default
    assert at["description"] == "Where to put it. Required: x, y."
    assert set(at["properties"]) == {"x", "y", "color"}
    assert at["properties"]["color"]["enum"] == ["blue", "red"]
    assert at["properties"]["color"]["description"] == 'Default: "red".'
    assert sent == sent_schema(place.spec().parameters, OLLAMA)


_UNION = ToolSpec(
    name="update",
    description="Update an issue.",
    parameters={  # an MCP server's: a root union ("at least one of")
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"id": {"type": "string"}, "title": {"type": "string"}},
        "required": ["id"],
        "anyOf": [{"required": ["title"]}, {"required": ["state"]}],
    },
)


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_a_root_union_goes_as_one_object(anyio_backend: str, wire: str) -> None:
    request = ModelRequest(messages=(ChatMessage(role="user", content="hi"),), tools=(_UNION,))
    async with FakeServer(["ok"], wire=wire) as server:  # type: ignore[arg-type]
        if wire == "openai":
            await collect(OpenAIChat("gpt-5", base_url=server.base_url), request)
        else:
            await collect(AnthropicMessages("claude", base_url=server.base_url), request)
    body = server.requests[0]
    tool = body["tools"][0]
    sent = tool["function"]["parameters"] if wire == "openai" else tool["input_schema"]
    assert sent == {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"id": {"type": "string"}, "title": {"type": "string"}},
        "required": ["id"],
    }
    assert "anyOf" in _UNION.parameters


async def test_anthropic_gets_draft_2020_12(anyio_backend: str) -> None:
    old = {  # an MCP server's draft-4 schema: a tuple, a boolean exclusive bound
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {
            "at": {"type": "array", "items": [{"type": "number"}, {"type": "number"}]},
            "zoom": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
        },
    }
    spec = ToolSpec(name="view", description="View a place.", parameters=old)
    request = ModelRequest(messages=(ChatMessage(role="user", content="hi"),), tools=(spec,))
    async with FakeServer(["ok"], wire="anthropic") as server:
        await collect(AnthropicMessages("claude", base_url=server.base_url), request)
    sent = server.requests[0]["tools"][0]["input_schema"]
    Draft202012Validator.check_schema(sent)  # what Anthropic checks it against
    assert sent["properties"] == {
        "at": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]},
        "zoom": {"type": "number", "exclusiveMinimum": 0},
    }


@tool
def total(values: list) -> int:  # type: ignore[type-arg]
    """Add up numbers."""
    return sum(values)


async def test_openai_gets_items_for_a_bare_list(anyio_backend: str) -> None:
    # OpenAI: "Invalid schema for function 'total': In context=('properties',
    # 'values'), array schema missing items." for msgspec's {"type": "array"}
    request = ModelRequest(
        messages=(ChatMessage(role="user", content="add"),), tools=(total.spec(),)
    )
    async with FakeServer(["ok"]) as server:
        await collect(OpenAIChat("gpt-5", base_url=server.base_url), request)
    sent = _parameters(server.requests[0])
    assert sent["properties"]["values"] == {"type": "array", "items": {}}
    assert total.spec().parameters["properties"]["values"] == {"type": "array"}
