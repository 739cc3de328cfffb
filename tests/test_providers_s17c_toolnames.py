"""Tool names the API refuses, in native mode: sent as names it takes, read back as the real ones.

OpenAI's and Anthropic's APIs refuse (400) a tool name that does not match
``^[a-zA-Z0-9_-]{1,64}$``: a dotted name (``kom.memory.v1.search_memory``, an
MCP server's ``server.tool``) made every native request fail. The servers here
check the names as those APIs do, everywhere a name goes (tools, a named
tool_choice, past calls, tool messages), and answer with a call to the name
they were sent, as a model would.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from streamtools import Agent, HybridAgent, tool
from streamtools.events import CallEnd, Event, ToolResult
from streamtools.model import CallChunk, ChatMessage, ModelRequest, NativeCall, ToolSpec, UseTool
from streamtools.providers import AnthropicMessages, HTTPProvider, OllamaChat, OpenAIChat
from streamtools.testing import FakeServer
from streamtools.testing.fake_whole import whole
from streamtools.testing.fake_wire import (
    CONTENT_TYPES,
    FakeCall,
    Reply,
    Wire,
    encode,
    reply_chunks,
)

pytestmark = pytest.mark.anyio

_API_RULE = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_KIMI_RULE = re.compile(r"[a-zA-Z][a-zA-Z0-9_-]{0,63}")  # Moonshot's: a letter first
REAL = "kom.memory.v1.search_memory"
PROVIDERS: dict[str, type[HTTPProvider]] = {
    "openai": OpenAIChat,
    "anthropic": AnthropicMessages,
    "ollama": OllamaChat,
}


def names_sent(wire: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    """Every tool name in a request body, with the parameter path the API names."""
    out: list[tuple[str, str]] = []
    for i, t in enumerate(body.get("tools") or []):
        if wire == "anthropic":
            out.append((f"tools.{i}.name", t["name"]))
        else:
            out.append((f"tools[{i}].function.name", t["function"]["name"]))
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        name = choice.get("name") or (choice.get("function") or {}).get("name")
        if name is not None:
            out.append(("tool_choice.name", name))
    for i, m in enumerate(body.get("messages") or []):
        for j, c in enumerate(m.get("tool_calls") or []):
            out.append((f"messages[{i}].tool_calls[{j}].function.name", c["function"]["name"]))
        if isinstance(m.get("content"), list):
            for j, block in enumerate(m["content"]):
                if block.get("type") == "tool_use":
                    out.append((f"messages.{i}.content.{j}.tool_use.name", block["name"]))
        for field in ("name", "tool_name"):
            if m.get(field) is not None:
                out.append((f"messages[{i}].{field}", m[field]))
    return out


def refusal(wire: str, body: dict[str, Any]) -> str | None:
    """The API's 400 body for a name it refuses (OpenAI's and Anthropic's shapes), or
    None. Ollama has no rule of its own."""
    if wire == "ollama":
        return None
    for path, name in names_sent(wire, body):
        if not _API_RULE.fullmatch(name):
            if wire == "openai":
                error = {
                    "message": f"Invalid '{path}': string does not match pattern. "
                    "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                    "type": "invalid_request_error",
                    "param": path,
                    "code": "invalid_value",
                }
                return json.dumps({"error": error})
            message = f"{path}: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            return json.dumps(
                {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
            )
    return None


def model_reply(wire: str, body: dict[str, Any]) -> Reply:
    """A call of the first tool, by the name it was sent, until a result came back; then text."""
    messages = body.get("messages") or []
    answered = any(
        m.get("role") == "tool"
        or (
            isinstance(m.get("content"), list)
            and any(b.get("type") == "tool_result" for b in m["content"])
        )
        for m in messages
    )
    if answered:
        return Reply(text="Found it.")
    tools = body["tools"]
    name = tools[0]["name"] if wire == "anthropic" else tools[0]["function"]["name"]
    return Reply(calls=(FakeCall(name=name, arguments={"query": "cats"}),))


def answer(wire: Wire, body: dict[str, Any], whole_answer: bool) -> tuple[int, str, bytes]:
    """Status, content type and body of the API's answer to ``body``."""
    if (refused := refusal(wire, body)) is not None:
        return 400, "application/json", refused.encode()
    chunks = reply_chunks(model_reply(wire, body), wire, body)
    if whole_answer:  # a server that ignores stream: true
        status, text = whole(wire, chunks, body)
        return status, "application/json", text.encode()
    return 200, CONTENT_TYPES[wire], b"".join(encode(wire, chunks, body))


@tool(name=REAL)
def search_memory(query: str) -> str:
    """Search the memory."""
    return f"memory about {query}"


async def run_agent(model: HTTPProvider) -> list[Event]:
    agent = Agent(model, [search_memory], native=True)
    async with agent.stream("What do you know about cats?") as events:
        return [e async for e in events]


def check_run(wire: str, events: list[Event], bodies: list[dict[str, Any]]) -> None:
    ends = [e for e in events if isinstance(e, CallEnd)]
    assert [(e.name, e.arguments) for e in ends] == [(REAL, {"query": "cats"})]
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [(r.name, r.content) for r in results] == [(REAL, "memory about cats")]
    assert len(bodies) == 2
    first, second = names_sent(wire, bodies[0]), names_sent(wire, bodies[1])
    (sent,) = {name for _, name in first}
    if wire == "ollama":
        assert sent == REAL  # no rule: the name goes as it is
    else:
        assert sent != REAL and _API_RULE.fullmatch(sent)
    # the second request: the tool, the past call (and the result's name) all by that name
    assert len(second) >= 2 and {name for _, name in second} == {sent}


@pytest.mark.parametrize("whole_answer", [False, True], ids=["streamed", "whole"])
@pytest.mark.parametrize("wire", ["openai", "anthropic", "ollama"])
async def test_native_agent_with_a_dotted_tool_over_mock_transport(
    anyio_backend: str, wire: Wire, whole_answer: bool
) -> None:
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        bodies.append(body)
        status, ctype, content = answer(wire, body, whole_answer)
        return httpx.Response(status, headers={"content-type": ctype}, content=content)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        model = PROVIDERS[wire]("m", base_url="http://api.test/v1", client=client, max_retries=0)
        events = await run_agent(model)
    check_run(wire, events, bodies)


@pytest.mark.parametrize("whole_answer", [False, True], ids=["streamed", "whole"])
@pytest.mark.parametrize("wire", ["openai", "anthropic", "ollama"])
async def test_native_agent_with_a_dotted_tool_over_a_real_server(
    anyio_backend: str, wire: Wire, whole_answer: bool
) -> None:
    def reply(body: dict[str, Any]) -> Reply:
        status, ctype, content = answer(wire, body, whole_answer)
        if status != 200:
            return Reply(status=status, body=content.decode())
        if whole_answer:
            return Reply(raw=content, content_type=ctype)
        return model_reply(wire, body)

    async with FakeServer([reply, reply], wire=wire) as server:
        model = PROVIDERS[wire]("m", base_url=server.base_url, max_retries=0)
        events = await run_agent(model)
        bodies = server.requests
    check_run(wire, events, bodies)


def _spec(name: str) -> ToolSpec:
    return ToolSpec(name=name, description="", parameters={"type": "object"})


def test_mapped_names_fit_and_never_collide() -> None:
    long_a = "server." + "a" * 70 + ".one"
    long_b = "server." + "a" * 70 + ".two"
    names = [REAL, "kom_memory_v1_search_memory", "a.b", "a/b", long_a, long_b, "plain"]
    request = ModelRequest(
        messages=(ChatMessage(role="user", content="hi"),),
        tools=tuple(_spec(n) for n in names),
        tool_choice=UseTool(long_b),
    )
    body = OpenAIChat("m").request_body(request)
    sent = [t["function"]["name"] for t in body["tools"]]
    assert all(_KIMI_RULE.fullmatch(n) for n in sent), sent
    assert len(set(sent)) == len(sent)
    # names that fit go unchanged; the others stay readable
    assert sent[1] == "kom_memory_v1_search_memory" and sent[-1] == "plain"
    assert sent[0].startswith("kom_memory_v1_search_memory_")
    assert sent[2].startswith("a_b") and sent[3].startswith("a_b")
    assert body["tool_choice"]["function"]["name"] == sent[5]


async def test_the_same_name_maps_the_same_way_in_every_request(anyio_backend: str) -> None:
    tools = (_spec(REAL), _spec("other.tool"))
    first = ModelRequest(messages=(ChatMessage(role="user", content="hi"),), tools=tools)
    call = NativeCall(id="c1", name=REAL, arguments={"query": "x"})
    later = ModelRequest(
        messages=(
            ChatMessage(role="user", content="hi"),
            ChatMessage(role="assistant", content="", tool_calls=(call,)),
            ChatMessage(role="tool", content="ok", tool_call_id="c1", name=REAL),
        ),
        tools=tools,
    )
    for provider in (OpenAIChat("m"), AnthropicMessages("m")):
        a, b = provider.request_body(first), provider.request_body(later)
        assert a["tools"] == b["tools"]
        assert refusal("openai" if isinstance(provider, OpenAIChat) else "anthropic", b) is None


def test_a_prompt_dialect_result_keeps_its_real_name_in_the_text() -> None:
    request = ModelRequest(
        messages=(
            ChatMessage(role="user", content="hi"),
            ChatMessage(role="tool", content="42", tool_call_id="x", name=REAL),
        ),
    )
    body = OpenAIChat("m").request_body(request)
    assert f"({REAL})" in body["messages"][-1]["content"]


def test_names_that_fit_leave_the_body_as_it_was() -> None:
    request = ModelRequest(
        messages=(ChatMessage(role="user", content="hi"),),
        tools=(_spec("search_memory"), _spec("get-time")),
        tool_choice=UseTool("get-time"),
    )
    body = OpenAIChat("m").request_body(request)
    assert [t["function"]["name"] for t in body["tools"]] == ["search_memory", "get-time"]
    assert body["tool_choice"]["function"]["name"] == "get-time"


async def test_a_mapped_name_streamed_in_pieces_comes_back_whole_and_real(
    anyio_backend: str,
) -> None:
    """Gemini's OpenAI endpoint streams a long name in pieces: the name is mapped
    back once it is whole."""
    seen: list[dict[str, Any]] = []

    def delta(tc: dict[str, Any]) -> str:
        return "data: " + json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [tc]}}]})

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body)
        if (refused := refusal("openai", body)) is not None:
            return httpx.Response(400, json=json.loads(refused))
        name = body["tools"][0]["function"]["name"]
        half = len(name) // 2
        events = [
            delta({"index": 0, "id": "c1", "function": {"name": name[:half]}}),
            delta({"index": 0, "function": {"name": name[half:]}}),
            delta({"index": 0, "function": {"arguments": '{"query": "cats"}'}}),
            "data: " + json.dumps({"choices": [{"index": 0, "finish_reason": "tool_calls"}]}),
            "data: [DONE]",
        ]
        content = "".join(e + "\n\n" for e in events)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, text=content)

    request = ModelRequest(
        messages=(ChatMessage(role="user", content="hi"),), tools=(_spec(REAL),)
    )
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        model = OpenAIChat("m", base_url="http://api.test/v1", client=client, max_retries=0)
        async with model.stream(request) as chunks:
            names = [c.name async for c in chunks if isinstance(c, CallChunk) and c.name]
    assert names == [REAL]
    assert seen[0]["tools"][0]["function"]["name"] != REAL


async def test_hybrid_agent_with_dotted_tools_passes_the_api_check(anyio_backend: str) -> None:
    """Hybrid mode's native step offers only ``select_tools``; the chosen tools
    then go in the dialect's prompt, where a dotted name is text."""
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        bodies.append(body)
        if (refused := refusal("openai", body)) is not None:
            return httpx.Response(400, json=json.loads(refused))
        if body.get("tools"):
            reply = Reply(calls=(FakeCall(name="select_tools", arguments={"names": [REAL]}),))
        else:
            reply = Reply(text="Nothing to look up.")
        chunks = reply_chunks(reply, "openai", body)
        content = b"".join(encode("openai", chunks, body))
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=content)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        model = OpenAIChat("m", base_url="http://api.test/v1", client=client, max_retries=0)
        result = await HybridAgent(model, [search_memory]).run("cats?")
    assert result.text == "Nothing to look up."
    assert len(bodies) == 2 and REAL in json.dumps(bodies[1]["messages"])


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_bare_named_tool_choice_is_mapped_too(wire: str) -> None:
    """The providers take an untyped caller's bare tool name as ``tool_choice``."""
    request = ModelRequest(
        messages=(ChatMessage(role="user", content="hi"),),
        tools=(_spec(REAL),),
        tool_choice=REAL,  # type: ignore[arg-type]
    )
    body = PROVIDERS[wire]("m").request_body(request)
    assert refusal(wire, body) is None
    sent = names_sent(wire, body)
    assert sent[0][1] == sent[1][1] != REAL


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_names_that_begin_badly_or_are_empty_get_names_that_fit(wire: str) -> None:
    rule = _KIMI_RULE if wire == "openai" else _API_RULE
    names = ["2fa.check", "", "_private", ".", "-"]
    request = ModelRequest(
        messages=(ChatMessage(role="user", content="hi"),), tools=tuple(_spec(n) for n in names)
    )
    sent = [n for _, n in names_sent(wire, PROVIDERS[wire]("m").request_body(request))]
    assert all(rule.fullmatch(n) for n in sent), sent
    assert len(set(sent)) == len(sent)
    if wire == "openai":
        assert sent[0] == "fn_2fa_check" and sent[2] == "fn__private"
    else:
        assert sent[0] == "2fa_check" and sent[2] == "_private"
