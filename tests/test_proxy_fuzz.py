"""Fuzz: whatever JSON body a client sends, the proxy's request decoders give a
``ProxyCall`` or a ``RequestError`` (a 4xx in the client's own format), and a
decoded call becomes the upstream prompt in every dialect without an exception
(anything else would be a 500). Bodies are valid requests with parts replaced
by arbitrary JSON or removed, so the fuzz reaches deep into messages, content
parts, tool calls and tool schemas."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from streamtools.parser import DIALECTS
from streamtools.prompts import project
from streamtools.proxy import anthropic_wire, openai_wire
from streamtools.proxy.request import RequestError

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City name"},
        "days": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]},
        "units": {"enum": ["c", "f"]},
        "where": {"$ref": "#/$defs/Place"},
        "tags": {"type": ["array", "null"], "items": {"type": "string"}},
    },
    "required": ["city"],
    "$defs": {"Place": {"type": "object", "properties": {"lat": {"type": "number"}}}},
}
OPENAI: dict[str, Any] = {
    "model": "m",
    "stream": True,
    "stream_options": {"include_usage": True},
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "rain"}]},
        {"role": "user", "content": "And tomorrow?"},
    ],
    "tools": [
        {
            "type": "function",
            "function": {"name": "weather", "description": "Forecast.", "parameters": SCHEMA},
        }
    ],
    "tool_choice": "auto",
    "parallel_tool_calls": True,
    "stop": ["END"],
    "temperature": 0.2,
    "max_tokens": 50,
}
ANTHROPIC: dict[str, Any] = {
    "model": "claude-x",
    "max_tokens": 100,
    "system": [{"type": "text", "text": "Be brief."}],
    "messages": [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hm", "signature": "s"},
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Oslo"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [{"type": "text", "text": "rain"}],
                    "is_error": False,
                },
                {"type": "text", "text": "And tomorrow?"},
            ],
        },
    ],
    "tools": [{"name": "weather", "description": "Forecast.", "input_schema": SCHEMA}],
    "tool_choice": {"type": "auto"},
    "stop_sequences": ["END"],
    "stream": True,
}
WIRES = {"openai": (openai_wire, OPENAI), "anthropic": (anthropic_wire, ANTHROPIC)}

_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.text(max_size=6),
    st.sampled_from(["user", "assistant", "tool", "text", "function", "tool_use", "object"]),
)
JSON = st.recursive(
    _scalar,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


def _paths(node: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in ``node`` a value sits at (the root is ``()``)."""
    found = [here]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*here, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _paths(value, (*here, i))
    return found


@st.composite
def bodies(draw: st.DrawFn, template: dict[str, Any]) -> Any:
    """``template`` with one to three places replaced by any JSON, or removed."""
    body: Any = copy.deepcopy(template)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(body)))
        if not path:
            body = draw(JSON)
            continue
        parent = body
        for step in path[:-1]:
            parent = parent[step]
        if draw(st.booleans()):
            parent[path[-1]] = draw(JSON)
        else:
            del parent[path[-1]]
    return body


@settings(max_examples=400, deadline=None)
@given(data=st.data(), wire=st.sampled_from(sorted(WIRES)))
@example(data=None, wire="openai")  # the valid body itself decodes and renders
@example(data=None, wire="anthropic")
def test_any_request_body_is_a_call_or_a_request_error(data: Any, wire: str) -> None:
    module, template = WIRES[wire]
    body = template if data is None else data.draw(bodies(template))
    try:
        call = module.decode_request(body)
    except RequestError as exc:
        assert 400 <= exc.status < 500 and exc.message
        return
    if data is None:
        assert call.tools and len(call.transcript.messages) >= 4
    tools = [] if call.tool_choice == "none" else call.tools
    for dialect in DIALECTS:
        messages = project(call.transcript, dialect, tools)
        assert messages and all(isinstance(m.content, str) for m in messages)
        prompt = messages[0].content
        assert all(tool.name in prompt for tool in tools), dialect
