"""AnthropicMessages: request bodies, SSE event facts, errors (MockTransport + FakeServer)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from provider_support import COUNTED, HI, collect, mock

from streamtools.errors import ProviderError
from streamtools.events import CallEnd, CallError
from streamtools.model import (
    CallChunk,
    ChatMessage,
    FinishChunk,
    ModelRequest,
    NativeCall,
    ReasoningChunk,
    ReasoningOrigin,
    TextChunk,
    Thinking,
    ToolSpec,
    UsageChunk,
    UseTool,
)
from streamtools.native import NativeCalls
from streamtools.prompts import project
from streamtools.providers import AnthropicMessages
from streamtools.providers.bodies import reasoning_server
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import FakeCall, Reply
from streamtools.testing.fake_wire import prompt_tokens
from streamtools.transcript import ToolCall, Transcript

pytestmark = pytest.mark.anyio


def ev(data: dict[str, Any]) -> str:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n"


START = ev({"type": "message_start", "message": {"usage": {"input_tokens": 7, "output_tokens": 1}}})
STOP = ev({"type": "message_stop"})


def block(index: int, content: dict[str, Any]) -> str:
    return ev({"type": "content_block_start", "index": index, "content_block": content})


def delta(index: int, d: dict[str, Any]) -> str:
    return ev({"type": "content_block_delta", "index": index, "delta": d})


def message_delta(reason: str, seq: str | None = None) -> str:
    return ev(
        {
            "type": "message_delta",
            "delta": {"stop_reason": reason, "stop_sequence": seq},
            "usage": {"output_tokens": 9},
        }
    )


async def test_full_reply_over_http(anyio_backend: str) -> None:
    reply = Reply(
        reasoning="Let me think.",
        text="Sure, adding now.",
        calls=(FakeCall(name="add", arguments={"a": 1, "b": 2}),),
    )
    async with FakeServer([reply], wire="anthropic") as server:
        provider = AnthropicMessages("claude", base_url=server.base_url, api_key="k")
        chunks = await collect(provider)
        headers = server.received[0].headers
        assert server.received[0].path == "/v1/messages"
    assert headers["x-api-key"] == "k" and headers["anthropic-version"] == "2023-06-01"
    assert "".join(c.text for c in chunks if isinstance(c, ReasoningChunk)) == "Let me think."
    assert "".join(c.text for c in chunks if isinstance(c, TextChunk)) == "Sure, adding now."
    native = NativeCalls(["add"])
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    end = (events + native.end())[-1]
    assert isinstance(end, CallEnd) and end.arguments == {"a": 1, "b": 2}
    assert end.id == "toolu_fake_0"
    assert chunks[-1] == FinishChunk(reason="tool_calls")
    usage = [c for c in chunks if isinstance(c, UsageChunk)]
    assert len(usage) == 1 and usage[0].input_tokens and usage[0].output_tokens


async def test_stop_sequence_is_named_and_not_returned(anyio_backend: str) -> None:
    request = ModelRequest(messages=HI.messages, stop=("</am:tool_call>",))
    async with FakeServer(["<am:tool_call name='x'></am:tool_call>after"], wire="anthropic") as s:
        chunks = await collect(AnthropicMessages("c", base_url=s.base_url), request)
        assert s.requests[0]["stop_sequences"] == ["</am:tool_call>"]
    assert "".join(c.text for c in chunks if isinstance(c, TextChunk)) == "<am:tool_call name='x'>"
    assert chunks[-1] == FinishChunk(reason="stop", stop_sequence="</am:tool_call>")


async def test_a_whitespace_stop_is_cut_here_not_sent(anyio_backend: str) -> None:
    """The API refuses a stop sequence that is only whitespace (400, "each stop
    sequence must contain non-whitespace"), so ``stop=["\\n\\n"]`` failed every
    request; it is cut client-side as a server would, the others are sent."""
    request = ModelRequest(messages=HI.messages, stop=("\n\n", "END", ""))
    async with FakeServer(["First line.\n\nSecond END third"], wire="anthropic") as server:
        chunks = await collect(AnthropicMessages("c", base_url=server.base_url), request)
        assert server.requests[0]["stop_sequences"] == ["END"]
    assert "".join(c.text for c in chunks if isinstance(c, TextChunk)) == "First line."
    assert chunks[-1] == FinishChunk(reason="stop", stop_sequence="\n\n")
    only = ModelRequest(messages=HI.messages, stop=("\n",))
    assert "stop_sequences" not in AnthropicMessages("c").request_body(only)


@pytest.mark.parametrize(
    ("stop_reason", "reason"),
    [("refusal", "content_filter"), ("model_context_window_exceeded", "length")],
)
async def test_refusal_and_a_full_window_keep_their_meaning(
    anyio_backend: str, stop_reason: str, reason: str
) -> None:
    reply = Reply(text="I can't help with that.", finish=stop_reason)
    async with FakeServer([reply], wire="anthropic") as s:
        chunks = await collect(AnthropicMessages("c", base_url=s.base_url))
    assert chunks[-1] == FinishChunk(reason=reason)


async def test_mid_stream_error_event(anyio_backend: str) -> None:
    async with FakeServer([Reply(text="a b c d e", error_after=4)], wire="anthropic") as s:
        chunks = await collect(AnthropicMessages("c", base_url=s.base_url))
    assert chunks[-1] == FinishChunk(reason="error", message="overloaded_error: Overloaded")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            '{"error": {"type": "overloaded_error", "message": "Overloaded"}}',
            "overloaded_error: Overloaded",
        ),
        ("upstream connect error", "error: upstream connect error"),
        ('{"error": "rate limited"}', 'error: {"error": "rate limited"}'),
        ("", "error: no details"),
    ],
)
async def test_a_gateway_s_error_event_keeps_its_words(
    anyio_backend: str, data: str, message: str
) -> None:
    """An ``event: error`` whose data is not the API's JSON (no ``type``, plain
    text, nothing) ended as "malformed JSON: missing field `type`" (or was skipped)."""
    text = delta(0, {"type": "text_delta", "text": "Hel"})
    body = START + text + f"event: error\ndata: {data}\n\n"
    chunks = await collect(AnthropicMessages("c", client=mock(body)))
    assert chunks == [TextChunk(text="Hel"), FinishChunk(reason="error", message=message)]


async def test_overloaded_529_is_retried(anyio_backend: str) -> None:
    async with FakeServer([Reply(status=529, retry_after=0), "ok"], wire="anthropic") as s:
        chunks = await collect(AnthropicMessages("c", base_url=s.base_url))
        assert len(s.requests) == 2
    assert chunks[0] == TextChunk(text="ok")


async def test_rate_limit_without_retries_carries_retry_after(anyio_backend: str) -> None:
    async with FakeServer([Reply(status=429, retry_after=2)], wire="anthropic") as s:
        with pytest.raises(ProviderError) as info:
            await collect(AnthropicMessages("c", base_url=s.base_url, max_retries=0))
    assert info.value.status == 429 and info.value.retry_after == 2.0


async def test_api_error_body_reaches_the_user(anyio_backend: str) -> None:
    body = (
        '{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too big"}}'
    )
    with pytest.raises(ProviderError) as info:
        await collect(AnthropicMessages("c", client=mock(body, status=400)))
    assert info.value.status == 400 and info.value.body == body
    assert "max_tokens: too big" in str(info.value)


async def test_pings_thinking_signatures_unknown_events(anyio_backend: str) -> None:
    body = (
        ev({"type": "ping"})
        + START
        + ev({"type": "ping"})
        + block(0, {"type": "thinking", "thinking": ""})
        + delta(0, {"type": "thinking_delta", "thinking": "hmm"})
        + delta(0, {"type": "signature_delta", "signature": "sig"})
        + ev({"type": "content_block_stop", "index": 0})
        + ev({"type": "brand_new_event", "whatever": [1]})
        + block(1, {"type": "redacted_thinking", "data": "xx"})
        + block(2, {"type": "text", "text": ""})
        + delta(2, {"type": "text_delta", "text": "Hi"})
        + ev({"type": "ping"})
        + message_delta("end_turn")
        + STOP
    )
    chunks = await collect(AnthropicMessages("c", client=mock(body)))
    server = reasoning_server(AnthropicMessages.default_base_url, "c")
    assert chunks == [
        ReasoningChunk(text="hmm", origin=ReasoningOrigin(field="thinking", server=server)),
        ReasoningChunk(text="", signature="sig"),  # ends the block: it goes back signed
        ReasoningChunk(text="", redacted="xx"),
        TextChunk(text="Hi"),
        UsageChunk(input_tokens=7, output_tokens=9),
        FinishChunk(reason="stop"),
    ]


async def test_server_tools_run_by_the_api_are_not_our_calls(anyio_backend: str) -> None:
    """A server tool (web search, code execution) streams its input as
    ``input_json_delta`` of a ``server_tool_use`` block; the API runs it, so it is
    no call of ours (it was a nameless call the agent answered with an error)."""
    body = (
        START
        + block(0, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search"})
        + delta(0, {"type": "input_json_delta", "partial_json": '{"query": "x"}'})
        + ev({"type": "content_block_stop", "index": 0})
        + block(1, {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []})
        + ev({"type": "content_block_stop", "index": 1})
        + block(2, {"type": "text", "text": ""})
        + delta(2, {"type": "citations_delta", "citation": {"type": "web_search_result_location"}})
        + delta(2, {"type": "text_delta", "text": "Found it."})
        + ev({"type": "content_block_stop", "index": 2})
        + message_delta("end_turn")
        + STOP
    )
    chunks = await collect(AnthropicMessages("c", client=mock(body)))
    assert chunks == [
        TextChunk(text="Found it."),
        UsageChunk(input_tokens=7, output_tokens=9),
        FinishChunk(reason="stop"),
    ]


async def test_tool_use_deltas_and_max_tokens(anyio_backend: str) -> None:
    body = (
        START
        + block(0, {"type": "tool_use", "id": "toolu_1", "name": "get", "input": {}})
        + delta(0, {"type": "input_json_delta", "partial_json": ""})
        + delta(0, {"type": "input_json_delta", "partial_json": '{"k": '})
        + delta(0, {"type": "input_json_delta", "partial_json": "1}"})
        + ev({"type": "content_block_stop", "index": 0})
        + block(1, {"type": "text", "text": ""})
        + ev({"type": "content_block_stop", "index": 1})  # not a call: no done
        + block(2, {"type": "tool_use", "id": "toolu_2", "name": "get", "input": {}})
        + message_delta("max_tokens")
        + STOP
    )
    chunks = await collect(AnthropicMessages("c", client=mock(body)))
    assert chunks[:5] == [
        CallChunk(index=0, id="toolu_1", name="get"),
        CallChunk(index=0, arguments='{"k": '),
        CallChunk(index=0, arguments="1}"),
        CallChunk(index=0, done=True),  # content_block_stop: the call is complete
        CallChunk(index=2, id="toolu_2", name="get"),  # cut by max_tokens: never done
    ]
    assert chunks[-1] == FinishChunk(reason="length")


@pytest.mark.parametrize(
    ("stop_reason", "expect"), [("max_tokens", "unterminated"), ("tool_use", "invalid_json")]
)
async def test_an_input_cut_by_max_tokens_is_unterminated(
    anyio_backend: str, stop_reason: str, expect: str
) -> None:
    """The API closes a tool_use block (content_block_stop) before message_delta
    says max_tokens: a cut input is ``unterminated`` (make the call again), not
    ``invalid_json`` (told its JSON was wrong). A whole input still completes at
    its block's stop, and a broken one with any other stop reason is invalid."""
    body = (
        START
        + block(0, {"type": "tool_use", "id": "toolu_1", "name": "get", "input": {}})
        + delta(0, {"type": "input_json_delta", "partial_json": '{"k": 1}'})
        + ev({"type": "content_block_stop", "index": 0})
        + block(1, {"type": "tool_use", "id": "toolu_2", "name": "get", "input": {}})
        + delta(1, {"type": "input_json_delta", "partial_json": '{"k": "cut'})
        + ev({"type": "content_block_stop", "index": 1})
        + message_delta(stop_reason)
        + STOP
    )
    chunks = await collect(AnthropicMessages("c", client=mock(body)))
    native = NativeCalls(["get"])
    per_chunk = [native.feed(c) for c in chunks if isinstance(c, CallChunk)]
    assert isinstance(per_chunk[2][-1], CallEnd)  # whole at its stop: runs at once
    finish = chunks[-1]
    assert isinstance(finish, FinishChunk)
    ended = [e for es in per_chunk for e in es] + native.end(finish.reason)
    errors = [e for e in ended if isinstance(e, CallError)]
    assert [(e.id, e.reason) for e in errors] == [("toolu_2", expect)]


@pytest.mark.parametrize("stop_reason", ["tool_use", "max_tokens"])
async def test_a_call_without_arguments_completes_in_its_place(
    anyio_backend: str, stop_reason: str
) -> None:
    """An empty input is not whole at its block's stop (the API may have been cut
    off before sending any), but the next block shows it was not: the call
    completes then, before the next call, whatever the stop reason; only the
    last block can be cut, and an empty one under max_tokens never runs."""
    no_args = {"type": "tool_use", "id": "toolu_1", "name": "now", "input": {}}
    body = (
        START
        + block(0, no_args)
        + delta(0, {"type": "input_json_delta", "partial_json": ""})
        + ev({"type": "content_block_stop", "index": 0})
        + block(1, {"type": "tool_use", "id": "toolu_2", "name": "get", "input": {}})
        + delta(1, {"type": "input_json_delta", "partial_json": '{"k": 1}'})
        + ev({"type": "content_block_stop", "index": 1})
        + block(2, {**no_args, "id": "toolu_3"})
        + ev({"type": "content_block_stop", "index": 2})
        + message_delta(stop_reason)
        + STOP
    )
    chunks = await collect(AnthropicMessages("c", client=mock(body)))
    native = NativeCalls(["now", "get"])
    events = [e for c in chunks if isinstance(c, CallChunk) for e in native.feed(c)]
    finish = chunks[-1]
    assert isinstance(finish, FinishChunk)
    events += native.end(finish.reason)
    ended = [e for e in events if isinstance(e, CallEnd | CallError)]
    outcomes = [(e.id, getattr(e, "reason", "ran")) for e in ended]
    last = "ran" if stop_reason == "tool_use" else "unterminated"
    assert outcomes == [("toolu_1", "ran"), ("toolu_2", "ran"), ("toolu_3", last)]


async def test_stream_without_message_stop_or_with_bad_json(anyio_backend: str) -> None:
    cut = await collect(
        AnthropicMessages("c", client=mock(START + delta(0, {"type": "text_delta", "text": "a"})))
    )
    assert isinstance(cut[-1], FinishChunk) and cut[-1].reason == "error"
    bad = await collect(AnthropicMessages("c", client=mock(START + "event: ping\ndata: {nope\n\n")))
    assert isinstance(bad[-1], FinishChunk) and bad[-1].reason == "error"
    assert "malformed JSON" in (bad[-1].message or "")


async def test_request_body(anyio_backend: str) -> None:
    seen: list[httpx.Request] = []
    request = ModelRequest(
        messages=(
            ChatMessage(role="system", content="sys one"),
            ChatMessage(role="system", content="sys two"),
            ChatMessage(role="user", content="add 1 and 2"),
            ChatMessage(role="assistant", content=""),
            ChatMessage(
                role="assistant",
                content="Adding.",
                tool_calls=(
                    NativeCall(id="t1", name="add", arguments={"a": 1}),
                    NativeCall(id="t2", name="add", arguments={"a": 2}),
                ),
            ),
            ChatMessage(role="tool", content="3", tool_call_id="t1"),
            ChatMessage(role="tool", content="4", tool_call_id="t2"),
            ChatMessage(role="user", content="thanks"),
        ),
        stop=("END",),
        tools=(ToolSpec(name="add", description="Add.", parameters={"type": "object"}),),
        tool_choice="required",
        temperature=0.5,
        top_p=0.9,
        top_k=40,
        seed=7,
        presence_penalty=0.5,
        frequency_penalty=0.5,
        extra={"thinking": {"type": "enabled", "budget_tokens": 1024}},
    )
    provider = AnthropicMessages("claude", max_tokens=321, client=mock(STOP, seen=seen))
    await collect(provider, request)
    assert seen[0].url == "https://api.anthropic.com/v1/messages"
    assert json.loads(seen[0].content) == {
        "model": "claude",
        "max_tokens": 321,
        "stream": True,
        "system": "sys one\n\nsys two",
        "messages": [
            {"role": "user", "content": "add 1 and 2"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Adding."},
                    {"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 1}},
                    {"type": "tool_use", "id": "t2", "name": "add", "input": {"a": 2}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "3"},
                    {"type": "tool_result", "tool_use_id": "t2", "content": "4"},
                    {"type": "text", "text": "thanks"},
                ],
            },
        ],
        "stop_sequences": ["END"],
        "tools": [{"name": "add", "description": "Add.", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "any"},
        "temperature": 0.5,
        "top_p": 0.9,
        "top_k": 40,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }


async def test_blank_text_is_left_out_of_the_request(anyio_backend: str) -> None:
    """The Messages API refuses a text block or a message that is only whitespace
    (400: text content blocks must contain non-whitespace text): a reply's
    ``"\n\n"`` before its call, a call's blank text, a blank user line were sent."""
    request = ModelRequest(
        messages=(
            ChatMessage(role="user", content="add 1"),
            ChatMessage(
                role="assistant",
                content="\n\n",
                tool_calls=(NativeCall(id="t1", name="add", arguments={}, arguments_text=" \n"),),
            ),
            ChatMessage(role="tool", content="1", tool_call_id="t1"),
            ChatMessage(role="user", content=" \t"),
            ChatMessage(role="assistant", content="\n"),
            ChatMessage(role="user", content="thanks"),
        ),
    )
    async with FakeServer(["ok"], wire="anthropic") as server:
        await collect(AnthropicMessages("claude", base_url=server.base_url), request)
        sent = server.requests[0]["messages"]
    assert sent == [
        {"role": "user", "content": "add 1"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "add", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "1"},
                {"type": "text", "text": "thanks"},
            ],
        },
    ]


def test_signed_thinking_goes_first_in_the_assistant_message() -> None:
    """Thinking blocks go back as they came, before the text and tool_use blocks;
    a redacted one as its data."""
    thinking = (Thinking(text="hmm", signature="sig"), Thinking(redacted="xx"))
    call = NativeCall(id="t1", name="add", arguments={"a": 1})
    request = ModelRequest(
        messages=(
            ChatMessage(role="user", content="add"),
            ChatMessage(role="assistant", content="Adding.", tool_calls=(call,), thinking=thinking),
            ChatMessage(role="tool", content="1", tool_call_id="t1"),
        )
    )
    body = AnthropicMessages("c").request_body(request)
    assert body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "hmm", "signature": "sig"},
        {"type": "redacted_thinking", "data": "xx"},
        {"type": "text", "text": "Adding."},
        {"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 1}},
    ]


def test_interleaved_thinking_goes_back_in_its_places() -> None:
    """Each thinking block goes before the call that followed it (``calls``), one
    after more calls than were sent back (a failed call is not) goes last."""
    thinking = (
        Thinking(text="a", signature="s0"),
        Thinking(text="b", signature="s1", calls=1),
        Thinking(redacted="r", calls=1),
        Thinking(text="c", signature="s3", calls=3),
    )
    calls = tuple(NativeCall(id=f"t{n}", name="add", arguments={}) for n in range(2))
    request = ModelRequest(
        messages=(
            ChatMessage(role="user", content="add"),
            ChatMessage(role="assistant", content="Hm.", tool_calls=calls, thinking=thinking),
        )
    )
    content = AnthropicMessages("c").request_body(request)["messages"][1]["content"]
    assert [b.get("signature") or b.get("data") or b.get("id") or b["text"] for b in content] == [
        "s0", "Hm.", "t0", "s1", "r", "t1", "s3"
    ]  # fmt: skip


def test_tool_choice_by_name_and_base_url_with_v1() -> None:
    provider = AnthropicMessages("c", base_url="https://gw.example/anthropic/v1")
    request = ModelRequest(
        messages=HI.messages,
        tools=(ToolSpec(name="t", description="", parameters={}),),
        tool_choice=UseTool("t"),
    )
    assert provider.request_body(request)["tool_choice"] == {"type": "tool", "name": "t"}
    assert provider._url() == "https://gw.example/anthropic/v1/messages"


async def test_prompt_mode_tool_messages_go_as_user_text(anyio_backend: str) -> None:
    transcript = Transcript()
    transcript.user("add 1 and 2")
    call = ToolCall(id="call_0_0", name="add", arguments={"a": 1, "b": 2})
    transcript.assistant("", calls=(call,))
    transcript.result(call, "3")
    messages = tuple(project(transcript, "json_object", []))
    assert [m.role for m in messages][-2:] == ["tool", "user"]  # what project sends
    seen: list[httpx.Request] = []
    await collect(
        AnthropicMessages("c", client=mock(STOP, seen=seen)), ModelRequest(messages=messages)
    )
    sent = json.loads(seen[0].content)["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]  # still alternating
    assert sent[2]["content"] == (
        f'Tool result (add):\n{{"tool": "add", "result": "3"}}\n\n{messages[-1].content}'
    )


async def test_native_results_stay_tool_results_and_strays_become_text(anyio_backend: str) -> None:
    messages = (
        ChatMessage(role="user", content="go"),
        ChatMessage(
            role="assistant",
            content="",
            tool_calls=(NativeCall(id="t1", name="add", arguments={}),),
        ),
        ChatMessage(role="tool", content="3", tool_call_id="t1", name="add"),
        ChatMessage(role="tool", content="again", tool_call_id="t1", name="add"),  # answered
    )
    seen: list[httpx.Request] = []
    await collect(
        AnthropicMessages("c", client=mock(STOP, seen=seen)), ModelRequest(messages=messages)
    )
    assert json.loads(seen[0].content)["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "3"},
        {"type": "text", "text": "Tool result (add):\nagain"},
    ]


# -- count_tokens ---------------------------------------------------------------------


async def test_count_tokens_over_http(anyio_backend: str) -> None:
    async with FakeServer([], wire="anthropic") as s:
        model = AnthropicMessages("claude-x", base_url=s.base_url, api_key="sk-ant")
        tokens = await model.count_tokens(COUNTED)
        (received,) = s.received
    assert received.path == "/v1/messages/count_tokens"
    assert received.headers["x-api-key"] == "sk-ant"
    assert received.headers["accept"] == "application/json"
    # the prompt's fields only: the endpoint refuses the ones that shape the answer
    assert sorted(received.body) == ["messages", "model", "system", "tools"]
    assert received.body["system"] == "Be brief."
    assert tokens == prompt_tokens(received.body) > 0


async def test_count_tokens_errors(anyio_backend: str) -> None:
    body = '{"type":"error","error":{"type":"not_found_error","message":"no such model"}}'
    seen: list[httpx.Request] = []
    with pytest.raises(ProviderError) as info:
        await AnthropicMessages("c", client=mock(body, status=404, seen=seen)).count_tokens(HI)
    assert info.value.status == 404 and "no such model" in str(info.value)
    assert str(seen[0].url) == "https://api.anthropic.com/v1/messages/count_tokens"
    # a 200 that is not the count: named, not a KeyError or a zero
    for answer, ctype in (
        ('{"tokens": 3}', "application/json"),
        ('{"input_tokens": "3"}', "application/json"),
        ("not json", "application/json"),
        ('{"input_tokens": 3}', "text/html"),
    ):
        with pytest.raises(ProviderError) as info:
            await AnthropicMessages("c", client=mock(answer, ctype=ctype)).count_tokens(HI)
        assert "count_tokens" in str(info.value) or "text/html" in str(info.value)


async def test_count_tokens_retries_an_overloaded_api(anyio_backend: str) -> None:
    answers = [
        httpx.Response(529, json={"type": "error", "error": {"type": "overloaded_error"}}),
        httpx.Response(200, json={"input_tokens": 12}),
    ]
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda request: answers.pop(0)))
    model = AnthropicMessages("c", client=client, retry_base=0)
    assert await model.count_tokens(HI) == 12
    assert answers == []
