"""A server that refuses a keyword of a tool's schema and says which is asked
again without it (``providers.toolschema.schema_refusals_retried``): Gemini
behind a gateway under a model alias (Google's "Unknown name" words), another
API that refuses one keyword. Over real HTTP against FakeServer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_support import collect

from streamtools.errors import ProviderError
from streamtools.model import ChatMessage, ModelRequest, TextChunk, ToolSpec
from streamtools.providers import OpenAIChat
from streamtools.providers.toolschema import GEMINI, OPENAI
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply

pytestmark = pytest.mark.anyio

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "at": {"$ref": "#/$defs/Point"},
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
    },
    "required": ["at"],
    "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "integer"}}}},
}
REQUEST = ModelRequest(
    messages=(ChatMessage(role="user", content="hi"),),
    tools=(ToolSpec(name="place", description="Place.", parameters=SCHEMA),),
)
GOOGLE = json.dumps({
    "error": {
        "code": 400,
        "message": 'Invalid JSON payload received. Unknown name "$defs" at '
        "'tools[0].function_declarations[0].parameters': Cannot find field.",
        "status": "INVALID_ARGUMENT",
    }
})  # fmt: skip


def _said(body: dict[str, Any]) -> str:
    return json.dumps(body.get("tools", []))


def _google(body: dict[str, Any]) -> str | Reply:
    """Gemini's proto: any keyword outside its subset is an unknown name."""
    return Reply(status=400, body=GOOGLE) if '"$defs"' in _said(body) else "ok"


async def test_google_words_switch_to_the_gemini_rule(anyio_backend: str) -> None:
    async with FakeServer([_google] * 3) as server:
        model = OpenAIChat("team-model", base_url=server.base_url)
        assert model.tool_schema == OPENAI
        chunks = await collect(model, REQUEST)
        assert [c.text for c in chunks if isinstance(c, TextChunk)] == ["ok"]
        assert model.tool_schema == GEMINI  # and so for the next request: no refusal
        await collect(model, REQUEST)
    bodies = server.requests
    assert len(bodies) == 3
    assert '"$defs"' in _said(bodies[0])
    for body in bodies[1:]:
        sent = body["tools"][0]["function"]["parameters"]
        assert "$" not in _said(body) and "uniqueItems" not in _said(body)
        assert sent["properties"]["at"]["properties"] == {"x": {"type": "integer"}}


def _no_unique(body: dict[str, Any]) -> str | Reply:
    if "uniqueItems" not in _said(body):
        return "ok"
    said = (
        "invalid JSON schema for tool place, tools[0].function.parameters: "
        "'uniqueItems' is not supported"
    )
    return Reply(status=400, body=json.dumps({"error": {"message": said}}))


async def test_a_keyword_named_is_left_out_once(anyio_backend: str) -> None:
    async with FakeServer([_no_unique] * 3) as server:
        model = OpenAIChat("some-model", base_url=server.base_url)
        await collect(model, REQUEST)
        await collect(model, REQUEST)
    bodies = server.requests
    assert len(bodies) == 3
    second = bodies[1]["tools"][0]["function"]["parameters"]
    tags = {"type": "array", "items": {"type": "string"}}
    assert second == {**SCHEMA, "properties": {**SCHEMA["properties"], "tags": tags}}
    assert bodies[2] == bodies[1]
    assert "uniqueItems" in SCHEMA["properties"]["tags"]  # the tool's own: unchanged


async def test_a_refusal_it_cannot_mend_is_passed_on(anyio_backend: str) -> None:
    said = "invalid JSON schema for tool place: 'type' is not supported here"
    refusal = Reply(status=400, body=json.dumps({"error": {"message": said}}))
    async with FakeServer([refusal]) as server:
        model = OpenAIChat("some-model", base_url=server.base_url)
        with pytest.raises(ProviderError) as caught:
            await collect(model, REQUEST)
    assert caught.value.status == 400
    assert len(server.requests) == 1
    assert model.tool_schema == OPENAI


XGRAMMAR = json.dumps({
    "object": "error",
    "message": "The provided JSON schema contains features not supported by xgrammar.",
    "type": "BadRequestError",
    "param": None,
    "code": 400,
})  # fmt: skip


def _vllm(body: dict[str, Any]) -> str | Reply:
    """vLLM with ``--structured-outputs-config.backend xgrammar``, a tool forced."""
    said = _said(body)
    return Reply(status=400, body=XGRAMMAR) if "uniqueItems" in said or "format" in said else "ok"


async def test_xgrammar_refusal_leaves_out_what_it_cannot_enforce(anyio_backend: str) -> None:
    schema = {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "mail": {"type": "string", "format": "idn-email", "description": "To whom."},
        },
        "required": ["tags"],
    }
    tools = (ToolSpec(name="send", description="Send.", parameters=schema),)
    request = ModelRequest(messages=REQUEST.messages, tools=tools, tool_choice="required")
    async with FakeServer([_vllm] * 3) as server:
        model = OpenAIChat("Qwen/Qwen3-8B", base_url=server.base_url)
        await collect(model, request)
        await collect(model, request)
    assert len(server.requests) == 3
    assert server.requests[1]["tools"][0]["function"]["parameters"] == {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}},
            "mail": {"type": "string", "description": "To whom."},
        },
        "required": ["tags"],
    }
    assert server.requests[2] == server.requests[1]


LLAMA = json.dumps({
    "error": {
        "code": 400,
        "message": "Failed to initialize samplers: failed to parse grammar",
        "type": "invalid_request_error",
    }
})  # fmt: skip


def _llama(body: dict[str, Any]) -> str | Reply:
    """llama-server, whose grammar converter fails on a regex class."""
    return Reply(status=400, body=LLAMA) if "\\\\d" in _said(body) else "ok"


async def test_llama_grammar_failure_inlines_and_leaves_patterns_out(anyio_backend: str) -> None:
    schema = {
        "type": "object",
        "properties": {
            "at": {"$ref": "#/$defs/Point"},
            "code": {"type": "string", "pattern": "^\\d{4}$", "description": "A PIN."},
        },
        "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "integer"}}}},
    }
    tools = (ToolSpec(name="enter", description="Enter.", parameters=schema),)
    request = ModelRequest(messages=REQUEST.messages, tools=tools)
    async with FakeServer([_llama] * 2) as server:
        await collect(OpenAIChat("local", base_url=server.base_url), request)
    assert len(server.requests) == 2
    assert server.requests[1]["tools"][0]["function"]["parameters"] == {
        "type": "object",
        "properties": {
            "at": {"type": "object", "properties": {"x": {"type": "integer"}}},
            "code": {"type": "string", "description": "A PIN."},
        },
    }


def _guidance(body: dict[str, Any]) -> str | Reply:
    """vLLM's guidance backend, as its Messages endpoint answers (500)."""
    if "propertyNames" not in _said(body):
        return "ok"
    said = 'Grammar error: Unimplemented keys: ["propertyNames"]'
    return Reply(status=500, body=json.dumps({"error": {"message": said}}))


async def test_unimplemented_keys_named_are_left_out(anyio_backend: str) -> None:
    schema = {
        "type": "object",
        "properties": {"env": {"type": "object", "propertyNames": {"pattern": "^[A-Z_]+$"}}},
    }
    tools = (ToolSpec(name="run", description="Run.", parameters=schema),)
    request = ModelRequest(messages=REQUEST.messages, tools=tools)
    async with FakeServer([_guidance] * 2) as server:
        await collect(OpenAIChat("m", base_url=server.base_url, max_retries=0), request)
    assert len(server.requests) == 2
    sent = server.requests[1]["tools"][0]["function"]["parameters"]
    assert sent == {"type": "object", "properties": {"env": {"type": "object"}}}
