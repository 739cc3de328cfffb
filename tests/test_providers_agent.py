"""End to end: an Agent over real HTTP against FakeServer, all three wires, prompt and native."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from provider_support import provider_for

from streamtools.errors import ProviderError
from streamtools.events import CallEnd, CallError, Event, Final, Retry, ToolResult
from streamtools.model import Chunk, TextChunk, Thinking
from streamtools.runtime import Agent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import FakeCall, Reply, Wire
from streamtools.tools import tool
from streamtools.transcript import AssistantMessage

pytestmark = pytest.mark.anyio

WIRES: list[Wire] = ["openai", "anthropic", "ollama"]


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


async def run(agent: Agent, prompt: str) -> list[Event]:
    async with agent.stream(prompt) as events:
        return [e async for e in events]


CALL_TEXT = 'Let me multiply. <am:tool_call name="multiply"><a>6</a><b>7</b></am:tool_call>'


@pytest.mark.parametrize("wire", WIRES)
async def test_prompt_mode_with_the_stop_trick(anyio_backend: str, wire: Wire) -> None:
    async with FakeServer([CALL_TEXT + " ignored", "6 times 7 is 42."], wire=wire) as server:
        agent = Agent(provider_for(server), [multiply], dialect="am_xml", stop_at_call=True)
        events = await run(agent, "What is 6*7?")
        second = server.requests[1]
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [(r.name, r.content) for r in results] == [("multiply", "42")]
    assert events[-1] == Final(text="6 times 7 is 42.", turns=2)
    assert "42" in str(second["messages"])  # the result went back to the model
    assert "ignored" not in str(second["messages"])  # the server cut at the stop marker


@pytest.mark.parametrize("wire", WIRES)
async def test_prompt_mode_client_side_stop(anyio_backend: str, wire: Wire) -> None:
    replies = [CALL_TEXT + " and more text after the call", "42."]
    async with FakeServer(replies, wire=wire, reject_stop=True) as server:
        agent = Agent(
            provider_for(server, supports_stop=False),
            [multiply],
            dialect="am_xml",
            stop_at_call=True,
        )
        events = await run(agent, "What is 6*7?")
        assert all("stop" not in str(body.get("options", body.keys())) for body in server.requests)
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["42"]
    assert events[-1] == Final(text="42.", turns=2)


@pytest.mark.parametrize("wire", WIRES)
async def test_native_mode(anyio_backend: str, wire: Wire) -> None:
    calls = (
        FakeCall(name="multiply", arguments={"a": 6, "b": 7}),
        FakeCall(name="multiply", arguments={"a": 2, "b": 3}),
    )
    async with FakeServer([Reply(text="Two products.", calls=calls), "42 and 6."], wire=wire) as s:
        agent = Agent(provider_for(s), [multiply], native=True)
        events = await run(agent, "6*7 and 2*3?")
        first, second = s.requests
    ends = [e for e in events if isinstance(e, CallEnd)]
    assert [e.arguments for e in ends] == [{"a": 6, "b": 7}, {"a": 2, "b": 3}]
    assert sorted(e.content for e in events if isinstance(e, ToolResult)) == ["42", "6"]
    assert events[-1] == Final(text="42 and 6.", turns=2)
    assert "multiply" in str(first["tools"])
    assert "42" in str(second["messages"]) and "tool" in str(second["messages"])


@pytest.mark.parametrize("wire", WIRES)
async def test_native_calls_run_while_the_next_is_still_streaming(
    anyio_backend: str, wire: Wire
) -> None:
    """Eager dispatch: the server stalls inside the second call's arguments until
    the first call's tool has started; without eager dispatch the tool would only
    start after the stall ran out and the reply was complete."""
    seen: list[tuple[int, bool]] = []  # (n, whether the reply was stalled mid-call then)
    calls = (
        FakeCall(name="probe", arguments={"n": 1, "tag": "early"}),
        FakeCall(name="probe", arguments={"n": 2, "tag": "x ZZZZ y"}),  # ZZZZ: one piece
    )
    reply = Reply(calls=calls, stall_before="ZZZZ", stall=10.0)
    async with FakeServer([reply, "both ran"], wire=wire) as server:

        @tool
        async def probe(n: int, tag: str) -> str:
            """Record when this call ran."""
            stalled = await anyio.to_thread.run_sync(server.wait_stalled, 0.0 if n > 1 else 5.0)
            seen.append((n, stalled))
            server.resume()
            return tag

        events = await run(Agent(provider_for(server), [probe], native=True), "go")
    assert seen == [(1, True), (2, False)]
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["early", "x ZZZZ y"]
    assert events[-1] == Final(text="both ran", turns=2)


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_native_call_cut_mid_stream_does_not_run(anyio_backend: str, wire: Wire) -> None:
    """The connection drops after the call's name: the call is ``unterminated`` and
    its tool never runs with the arguments it happened to have (none: ``{}``)."""
    ran: list[str] = []

    @tool
    def wipe(path: str = "/") -> str:
        """Wipe a directory (everything by default)."""
        ran.append(path)
        return "wiped"

    # three events, then half of the first argument piece: the call is named, no more
    cut = Reply(calls=(FakeCall(name="wipe", arguments={"path": "/tmp"}),), cut_after=3)
    async with FakeServer([cut, "I did not wipe anything."], wire=wire) as server:
        events = await run(Agent(provider_for(server, max_retries=0), [wipe], native=True), "go")
        second = server.requests[1]
    assert ran == []
    errors = [e for e in events if isinstance(e, CallError)]
    assert [(e.name, e.reason) for e in errors] == [("wipe", "unterminated")]
    retry = next(e for e in events if isinstance(e, Retry))
    # native repairs ask for a function call, not for the dialect's text format
    assert "tool-calling interface" in retry.message and "am:tool_call" not in retry.message
    assert "tool-calling interface" in str(second["messages"])
    assert events[-1] == Final(text="I did not wipe anything.", turns=2)


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_a_failed_native_call_is_not_sent_back_as_text(
    anyio_backend: str, wire: Wire
) -> None:
    """A native call whose arguments are not JSON never was text: the reply sent
    back holds the model's text and its good call, not the broken arguments (which
    would show the model writing calls as text, right before it is told not to)."""
    calls = (
        FakeCall(name="multiply", arguments={"a": 6, "b": 7}),
        FakeCall(name="multiply", arguments='{"a": 1, "b":'),
    )
    async with FakeServer([Reply(text="Let me.", calls=calls), "42."], wire=wire) as server:
        result = await Agent(provider_for(server), [multiply], native=True).run("go")
        second = server.requests[1]
    assert result.text == "42."
    reply = second["messages"][1]
    assert reply["role"] == "assistant"
    if wire == "openai":
        assert reply["content"] == "Let me."
        assert [c["function"]["arguments"] for c in reply["tool_calls"]] == ['{"a":6,"b":7}']
    else:
        assert reply["content"][0] == {"type": "text", "text": "Let me."}
        assert [b["input"] for b in reply["content"][1:]] == [{"a": 6, "b": 7}]
    # the feedback still quotes what was sent, so the model can fix it
    assert '{"a": 1, "b":' in str(second["messages"][2:])
    assert "tool-calling interface" in str(second["messages"][2:])


async def test_signed_thinking_goes_back_with_the_native_calls(anyio_backend: str) -> None:
    """Anthropic with extended thinking: the API refuses a request whose assistant
    message has tool_use blocks but not the thinking block (with its signature)
    that came before them. The reply's thinking goes back first, unchanged."""
    calls = (FakeCall(name="multiply", arguments={"a": 6, "b": 7}),)
    first = Reply(reasoning="Six times seven: use the tool.", text="Multiplying.", calls=calls)
    async with FakeServer([first, "42."], wire="anthropic") as server:
        agent = Agent(provider_for(server), [multiply], native=True)
        result = await agent.run("What is 6*7?")
        second = server.requests[1]
    assert result.text == "42."
    reply = second["messages"][1]
    assert reply["role"] == "assistant"
    assert reply["content"] == [
        {
            "type": "thinking",
            "thinking": "Six times seven: use the tool.",
            "signature": "fake-signature",  # as FakeServer signs its thinking blocks
        },
        {"type": "text", "text": "Multiplying."},
        {"type": "tool_use", "id": "toolu_fake_0", "name": "multiply", "input": {"a": 6, "b": 7}},
    ]
    kept = result.transcript.messages[1]
    assert isinstance(kept, AssistantMessage)
    signed = Thinking(text="Six times seven: use the tool.", signature="fake-signature")
    assert kept.thinking == (signed,)


async def test_interleaved_thinking_goes_back_in_its_places(anyio_backend: str) -> None:
    """Interleaved thinking (thinking, tool_use, thinking, tool_use): each thinking
    block goes back where it was; all moved to the front, the API refuses the
    request ("thinking blocks in the latest assistant message cannot be modified")."""

    def ev(data: dict[str, Any]) -> str:
        return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n"

    def delta(index: int, d: dict[str, Any]) -> str:
        return ev({"type": "content_block_delta", "index": index, "delta": d})

    def thinking(index: int, text: str) -> str:
        block = {"type": "thinking", "thinking": ""}
        deltas = [
            {"type": "thinking_delta", "thinking": text},
            {"type": "signature_delta", "signature": f"sig{index}"},
        ]
        return (
            ev({"type": "content_block_start", "index": index, "content_block": block})
            + "".join(delta(index, d) for d in deltas)
            + ev({"type": "content_block_stop", "index": index})
        )

    def use(index: int, a: int) -> str:
        block = {"type": "tool_use", "id": f"toolu_{index}", "name": "multiply", "input": {}}
        args = {"type": "input_json_delta", "partial_json": json.dumps({"a": a, "b": 7})}
        return (
            ev({"type": "content_block_start", "index": index, "content_block": block})
            + delta(index, args)
            + ev({"type": "content_block_stop", "index": index})
        )

    raw = (
        ev({"type": "message_start", "message": {"usage": {"input_tokens": 5}}})
        + thinking(0, "First six.")
        + use(1, 6)
        + thinking(2, "Now two.")
        + use(3, 2)
        + ev({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}})
        + ev({"type": "message_stop"})
    )
    first = Reply(raw=raw.encode(), content_type="text/event-stream")
    async with FakeServer([first, "42 and 14."], wire="anthropic") as server:
        result = await Agent(provider_for(server), [multiply], native=True).run("go")
        second = server.requests[1]
    assert result.text == "42 and 14."
    sent = second["messages"][1]["content"]
    assert [(b["type"], b.get("signature") or b.get("id")) for b in sent] == [
        ("thinking", "sig0"),
        ("tool_use", "toolu_1"),
        ("thinking", "sig2"),
        ("tool_use", "toolu_3"),
    ]


async def test_a_call_s_extra_content_goes_back_with_it(anyio_backend: str) -> None:
    """Gemini 3 on its OpenAI-compatible endpoint attaches the call's thought
    signature as ``extra_content`` (here on a delta of its own) and refuses the
    next request if the call comes back without it."""
    signature = {"google": {"thought_signature": "c2lnbmVk"}}
    later = {"google": {"thought_signature": "bW9yZQ=="}}
    six = {"name": "multiply", "arguments": '{"a": 6, "b": 7}'}
    two = {"name": "multiply", "arguments": '{"a": 2, "b": 3}'}
    deltas: list[dict[str, Any]] = [  # the first with no index, as Gemini sends it
        {"id": "function-call-1", "type": "function", "extra_content": signature, "function": six},
        {"index": 1, "id": "function-call-2", "type": "function", "function": two},
        {"index": 1, "extra_content": later},
    ]
    data = [{"choices": [{"index": 0, "delta": {"tool_calls": [d]}}]} for d in deltas]
    data.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    raw = "".join(f"data: {json.dumps(d)}\n\n" for d in data) + "data: [DONE]\n\n"
    first = Reply(raw=raw.encode(), content_type="text/event-stream")
    async with FakeServer([first, "42 and 6."]) as server:
        result = await Agent(provider_for(server), [multiply], native=True).run("go")
        second = server.requests[1]
    assert result.text == "42 and 6."
    sent = second["messages"][1]["tool_calls"]
    assert [(c["id"], c.get("extra_content")) for c in sent] == [
        ("function-call-1", signature),
        ("function-call-2", later),
    ]
    assert [m.get("tool_call_id") for m in second["messages"][2:4]] == [
        "function-call-1",
        "function-call-2",
    ]


async def test_openrouter_reasoning_details_go_back_over_http(anyio_backend: str) -> None:
    """OpenRouter's ``reasoning_details`` (an Anthropic thinking block streamed in
    fragments, its signature last; an encrypted one) come back joined, in order,
    on the next request's assistant message with the calls, and are kept in the
    transcript: OpenRouter asks for them so the model's reasoning continues."""
    frag = {"type": "reasoning.text", "format": "anthropic-claude-v1", "index": 0}
    encrypted = {"type": "reasoning.encrypted", "data": "b3BhcXVl", "format": "unknown"}
    six = {"name": "multiply", "arguments": '{"a": 6, "b": 7}'}
    deltas: list[dict[str, Any]] = [
        {"reasoning": "Six ", "reasoning_details": [{**frag, "text": "Six "}]},
        {"reasoning": "by seven.", "reasoning_details": [{**frag, "text": "by seven."}]},
        {"reasoning_details": [{**frag, "signature": "sig0"}, encrypted]},
        {"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": six}]},
    ]
    data = [{"choices": [{"index": 0, "delta": d}]} for d in deltas]
    data.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    raw = "".join(f"data: {json.dumps(d)}\n\n" for d in data) + "data: [DONE]\n\n"
    first = Reply(raw=raw.encode(), content_type="text/event-stream")
    async with FakeServer([first, "42."]) as server:
        result = await Agent(provider_for(server), [multiply], native=True).run("go")
        second = server.requests[1]
    assert result.text == "42."
    block = {**frag, "text": "Six by seven.", "signature": "sig0"}
    reply = second["messages"][1]
    assert reply["reasoning_details"] == [block, encrypted]
    assert [c["id"] for c in reply["tool_calls"]] == ["c1"]
    assert "extra_content" not in reply["tool_calls"][0]
    kept = [m for m in result.transcript.messages if isinstance(m, AssistantMessage)][0]
    assert kept.calls[0].extra == {"reasoning_details": [block, encrypted]}


async def test_native_parallel_calls_on_index_zero(anyio_backend: str) -> None:
    calls = (
        FakeCall(name="multiply", arguments={"a": 6, "b": 7}),
        FakeCall(name="multiply", arguments={"a": 1, "b": 1}),
    )
    async with FakeServer([Reply(calls=calls, index_zero=True), "done"]) as server:
        events = await run(Agent(provider_for(server), [multiply], native=True), "go")
    assert sorted(e.content for e in events if isinstance(e, ToolResult)) == ["1", "42"]


@pytest.mark.parametrize("wire", WIRES)
async def test_stream_cut_before_anything_usable_raises(anyio_backend: str, wire: Wire) -> None:
    async with FakeServer([Reply(text="x", cut_after=0)], wire=wire) as server:
        with pytest.raises(ProviderError):
            await run(Agent(provider_for(server), [multiply]), "hi")


@pytest.mark.parametrize("wire", WIRES)
async def test_error_status_reaches_the_agent_caller(anyio_backend: str, wire: Wire) -> None:
    async with FakeServer([Reply(status=401, body='{"error": "bad key"}')], wire=wire) as server:
        with pytest.raises(ProviderError) as info:
            await run(Agent(provider_for(server), [multiply]), "hi")
    assert info.value.status == 401 and "bad key" in str(info.value)


@pytest.mark.parametrize("wire", WIRES)
async def test_server_ignoring_stop_is_cut_by_the_runtime(anyio_backend: str, wire: Wire) -> None:
    """A recorded reply ignores `stop`; the agent leaves the stream at the CallEnd, cleanly."""
    chunks: list[Chunk] = [TextChunk(text=CALL_TEXT)]
    chunks += [TextChunk(text=" and on") for _ in range(300)]
    async with FakeServer([chunks, "42."], wire=wire) as server:
        agent = Agent(provider_for(server), [multiply], dialect="am_xml", stop_at_call=True)
        events = await run(agent, "What is 6*7?")
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["42"]
    assert events[-1] == Final(text="42.", turns=2)
