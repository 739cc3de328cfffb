"""Fuzz, both sides of the proxy.

Requests: whatever JSON body a client sends, the request decoders give a
``ProxyCall`` or a ``RequestError`` (a 4xx in the client's own format), and a
decoded call becomes the upstream prompt in every dialect without an exception
(anything else would be a 500). Bodies are valid requests with parts replaced
by arbitrary JSON or removed, so the fuzz reaches deep into messages, content
parts, tool calls and tool schemas.

Replies: whatever the upstream model writes (prose, markers, whole, cut and
half calls, calls to missing tools, ``<am:request_tools>``), at any chunking,
under every ``tool_choice`` and with parallel calls on or off, the events for
the wire are what an SDK can assemble: calls numbered from 0, each call's
fragments adding up to its arguments, only the client's own tools, and one
``Finish`` (``tool_calls`` exactly when a call was sent) or one ``StreamError``
for a call that broke after it was announced. What the wire encoders write
from those events, the official ``openai`` and ``anthropic`` SDKs' stream
accumulators assemble into exactly the same calls and text."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import anyio
import msgspec
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_parser_properties import FRAGMENTS, model_replies
from test_proxy_wire import _anthropic_stream, _openai_stream, _responses_stream

from streamtools.events import ArgsDelta, CallEnd, CallStart, Event, Finish, StreamError, TextDelta
from streamtools.model import FinishChunk, ModelRequest, TextChunk, ToolChoice, ToolSpec, UseTool
from streamtools.parser import DIALECTS
from streamtools.prompts import get_renderer, project
from streamtools.providers import AnthropicMessages, OllamaChat, OpenAIChat
from streamtools.proxy import anthropic_wire, openai_wire, responses_wire
from streamtools.proxy.freeform import freeform_text
from streamtools.proxy.request import ProxyCall, RequestError
from streamtools.proxy.turn import run_turn
from streamtools.testing import ScriptedModel
from streamtools.testing.scripted import split_text
from streamtools.transcript import ToolCall, Transcript, UserMessage

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
    "top_p": 0.9,
    "seed": 7,
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
    "top_k": 5,
    "stream": True,
}
RESPONSES: dict[str, Any] = {
    "model": "gpt-x",
    "instructions": "Be brief.",
    "input": [
        {"role": "user", "content": "Weather?"},
        {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "Checking.", "annotations": []}
        ]},
        {"type": "function_call", "call_id": "c1", "name": "weather",
         "arguments": '{"city": "Oslo"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "rain"},
        {"type": "custom_tool_call", "call_id": "c2", "name": "patch", "input": "*** Begin"},
        {"type": "custom_tool_call_output", "call_id": "c2", "output": "done"},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"role": "user", "content": [{"type": "input_text", "text": "And tomorrow?"}]},
    ],
    "tools": [{"type": "function", "name": "weather", "description": "Forecast.",
               "parameters": SCHEMA},
              {"type": "custom", "name": "patch", "description": "Patch files.",
               "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"}}],
    "tool_choice": "auto",
    "parallel_tool_calls": True,
    "temperature": 0.2,
    "top_p": 0.9,
    "max_output_tokens": 50,
    "stream": True,
}
WIRES = {
    "openai": (openai_wire, OPENAI),
    "anthropic": (anthropic_wire, ANTHROPIC),
    "responses": (responses_wire, RESPONSES),
}

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
    # and every kind of upstream gets a request body that is JSON
    request = ModelRequest(
        messages=tuple(messages), stop=tuple(call.stop), temperature=call.temperature,
        max_tokens=call.max_tokens, **call.sampling,
    )
    for upstream in (OpenAIChat("m"), AnthropicMessages("m"), OllamaChat("m")):
        sent = json.loads(msgspec.json.encode(upstream.request_body(request)))
        assert sent["model"] == "m"
        if call.sampling.get("top_p") is not None:
            assert (sent.get("options") or sent)["top_p"] == call.sampling["top_p"]


CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOLS = [
    ToolSpec(name="weather", description="Weather.", parameters=CITY),
    ToolSpec(name="kom.memory.v1.search", description="Search.", parameters=CITY),
]
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("weather", {"city": "Paris"}),
    ("kom.memory.v1.search", {"city": 'O"slo </city> }'}),
    ("weather", {}),
    ("weather", {"city": 5}),
    ("nope", {"city": "x"}),
]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    dialect=st.sampled_from(sorted(FRAGMENTS)),
    seed=st.integers(0, 99),
    choice=st.sampled_from(["auto", "none", "required", UseTool("weather")]),
    parallel=st.booleans(),
    repairs=st.integers(0, 2),
    freeform=st.booleans(),
    cut_off=st.booleans(),
)
def test_any_upstream_reply_gives_wire_events_an_sdk_can_assemble(
    data: st.DataObject,
    dialect: str,
    seed: int,
    choice: ToolChoice,
    parallel: bool,
    repairs: int,
    freeform: bool,
    cut_off: bool,
) -> None:
    script: list[Any] = [data.draw(model_replies(dialect, CALLS)) for _ in range(repairs + 1)]
    if cut_off:  # every reply ends at the upstream's token limit, often inside a call
        rng = random.Random(seed)
        renderer = get_renderer(dialect)
        rendered = [renderer.render_call(ToolCall(id="i", name=n, arguments=a)) for n, a in CALLS]
        halves = st.sampled_from(["", *(r[: len(r) // 2] for r in rendered)])
        script = [
            [
                *(TextChunk(text=t) for t in split_text(r + data.draw(halves), rng, (1, 9))),
                FinishChunk(reason="length"),
            ]
            for r in script
        ]
    model = ScriptedModel(script, seed=seed, chunk_sizes=(1, 9))
    transcript = Transcript(messages=[UserMessage(content="hi")])
    call = ProxyCall(
        model="m",
        transcript=transcript,
        tools=list(TOOLS),
        tool_choice=choice,
        parallel=parallel,
        freeform=["weather"] if freeform else [],  # a Responses custom tool
    )
    events: list[Event] = []

    async def emit(event: Event) -> None:
        events.append(event)

    async def turn() -> None:
        with anyio.fail_after(20):
            await run_turn(model, call, emit, dialect=dialect, max_repairs=repairs)

    anyio.run(turn)
    ends = [e for e in events if isinstance(e, Finish | StreamError)]
    assert len(ends) == 1 and ends[0] is events[-1]
    starts = [e for e in events if isinstance(e, CallStart)]
    assert [s.index for s in starts] == list(range(len(starts)))
    allowed = {"weather"} if choice == UseTool("weather") else {t.name for t in TOOLS}
    assert {s.name for s in starts} <= (set() if choice == "none" else allowed)
    assert parallel or len(starts) <= 1
    fragments: dict[int, str] = {}
    open_calls: set[int] = set()
    for event in events:
        if isinstance(event, CallStart):
            open_calls.add(event.index)
        elif isinstance(event, ArgsDelta):
            assert event.index in open_calls
            fragments[event.index] = fragments.get(event.index, "") + event.delta
        elif isinstance(event, CallEnd):
            open_calls.remove(event.index)
            assert json.loads(fragments[event.index]) == event.arguments
    if isinstance(ends[0], Finish):
        # a call cut by the token limit stays open, the last one, and the finish says so
        cut = ends[0].reason == "length" and bool(open_calls)
        assert open_calls == ({starts[-1].index} if cut else set())
        assert cut_off or not cut
        assert (ends[0].reason == "tool_calls") == (bool(starts) and not cut)
        # and the official SDKs, reading what the wire encoders write, assemble
        # exactly these calls and this text
        calls = [(e.name, e.arguments) for e in events if isinstance(e, CallEnd)]
        text = "".join(e.text for e in events if isinstance(e, TextDelta))
        completion = _openai_stream(events, include_usage=True)[1]
        message = completion.choices[0].message
        tool_calls = message.tool_calls or []
        if cut:  # the partial arguments, as streamed
            last = tool_calls.pop()
            assert (last.function.name, last.function.arguments) == (
                starts[-1].name, fragments.get(starts[-1].index, "")
            )
        assert [(c.function.name, json.loads(c.function.arguments)) for c in tool_calls] == calls
        assert (message.content or "") == text
        finished, message = _anthropic_stream(events)
        blocks = message.content
        assert [n for n, _ in finished].count("content_block_stop") == len(blocks)  # all closed
        uses = [(b.name, b.input) for b in blocks if b.type == "tool_use"]
        assert (uses[:-1] if cut else uses) == calls
        assert "".join(b.text for b in blocks if b.type == "text") == text
        parsed, response = _responses_stream(events, call)
        if response is None:  # a token limit: incomplete, as OpenAI says
            assert parsed[-1].type == "response.incomplete" and (cut or not calls)
        else:
            items = [o for o in response.output if o.type not in ("message", "reasoning")]
            got = [
                (o.name, o.input if o.type == "custom_tool_call" else json.loads(o.arguments))
                for o in items
            ]
            want = [
                (name, freeform_text(args) if name in call.freeform else args)
                for name, args in calls
            ]
            assert got == want
            assert response.output_text == text
    else:
        _responses_stream(events, call)  # what was sent before the break is valid too
        assert ends[0].kind == "malformed_call" and open_calls  # announced, then broke
