"""A thinking model's reasoning survives the browser's round trip.

DeepSeek's and Kimi's thinking modes refuse (400) a request whose past
replies with tool calls lack the ``reasoning_content`` they were streamed
with, in every later user turn. The UI endpoint is stateless: each turn the
browser sends the whole conversation back as AI SDK UI messages, and the
agent's history is rebuilt from them (``ui.messages``). Where the reasoning
came from (``ReasoningOrigin``) goes to the browser as the reasoning part's
``providerMetadata`` and comes back with it; without it the second user turn
was refused. A real server on 127.0.0.1 plays DeepSeek
(``reasoning_support.Server``), behind a real ``Agent`` and ``OpenAIChat``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import msgspec
import pytest
from reasoning_support import MODEL, STREAMED, Server, deepseek_check, multiply, sse, two_tool_turns
from test_ui_node import SDKS, run_client
from test_ui_support import serve, sse_data

from streamtools.events import ReasoningDelta, TextDelta, decode_event
from streamtools.model import ReasoningOrigin
from streamtools.providers import OpenAIChat
from streamtools.runtime import Agent
from streamtools.transcript import AssistantMessage
from streamtools.ui import UIMessageStreamEncoder, create_app, parse_chat_request
from streamtools.ui.messages import ChatRequestError

FIRST = "What is (6*7) squared?"
SECOND = "And halved?"


@pytest.fixture
def deepseek() -> Iterator[Server]:
    replies = [*two_tool_turns(), sse([{"reasoning_content": "Half."}, {"content": "882"}], "stop")]
    with Server(replies, deepseek_check(STREAMED)) as server:
        yield server


def agent(server: Server) -> Agent:
    provider = OpenAIChat(MODEL, base_url=server.base_url, max_retries=0)
    return Agent(provider, [multiply], native=True)


def fold(body: bytes) -> dict[str, Any]:
    """The assistant UI message a UI message stream builds, as the AI SDK's
    ``processUIMessageStream`` builds it (ai 5 and 6): a part's
    ``providerMetadata`` is set at its start and replaced by a later chunk's."""
    parts: list[dict[str, Any]] = []
    open_parts: dict[str, dict[str, Any]] = {}
    tools: dict[str, dict[str, Any]] = {}
    for payload in sse_data(body)[:-1]:
        chunk = msgspec.json.decode(payload)
        kind = chunk["type"]
        if kind == "start-step":
            parts.append({"type": "step-start"})
        elif kind in ("text-start", "reasoning-start"):
            part = {"type": kind.split("-")[0], "text": "", "state": "streaming"}
            if "providerMetadata" in chunk:
                part["providerMetadata"] = chunk["providerMetadata"]
            open_parts[chunk["id"]] = part
            parts.append(part)
        elif kind in ("text-delta", "reasoning-delta", "text-end", "reasoning-end"):
            part = open_parts[chunk["id"]]
            part["text"] += chunk.get("delta", "")
            if "providerMetadata" in chunk:
                part["providerMetadata"] = chunk["providerMetadata"]
            if kind.endswith("-end"):
                part["state"] = "done"
        elif kind == "tool-input-start":
            tool = {"type": "dynamic-tool", "toolCallId": chunk["toolCallId"],
                    "toolName": chunk["toolName"], "state": "input-streaming"}  # fmt: skip
            tools[chunk["toolCallId"]] = tool
            parts.append(tool)
        elif kind == "tool-input-available":
            tools[chunk["toolCallId"]].update(state="input-available", input=chunk["input"])
        elif kind == "tool-output-available":
            tools[chunk["toolCallId"]].update(state="output-available", output=chunk["output"])
        elif kind == "error":
            raise AssertionError(chunk["errorText"])
    return {"id": "a1", "role": "assistant", "parts": parts}


def user(text: str) -> dict[str, Any]:
    return {"id": text, "role": "user", "parts": [{"type": "text", "text": text}]}


def test_the_second_user_turn_gives_deepseek_its_reasoning_back(deepseek: Server) -> None:
    with serve(create_app(agent(deepseek))) as server:
        url = server.url + "/api/chat"
        first = httpx.post(url, json={"messages": [user(FIRST)]}, timeout=30)
        answer = fold(first.content)
        history = [user(FIRST), answer, user(SECOND)]
        second = httpx.post(url, json={"messages": history}, timeout=30)
        again = fold(second.content)  # raises at the error chunk of a refused request
    assert deepseek.refused == []
    assert "".join(p["text"] for p in again["parts"] if p["type"] == "text") == "882"
    # the fourth request, rebuilt from the browser's history, carries both replies' reasoning
    sent = [m.get("reasoning_content") for m in deepseek.bodies[3]["messages"]]
    assert sent.count(STREAMED["call_a"]) == sent.count(STREAMED["call_b"]) == 1
    # what the browser kept: each reply's reasoning part says where it came from
    kept = [p.get("providerMetadata") for p in answer["parts"] if p["type"] == "reasoning"]
    assert len(kept) == 3 and all(m and "reasoningOrigin" in m["streamtools"] for m in kept)


@pytest.mark.parametrize("sdk", list(SDKS))
def test_the_ai_sdk_client_keeps_the_origin_across_user_turns(deepseek: Server, sdk: str) -> None:
    """The AI SDK's own chat client (ai 6 and ai 5) keeps the metadata on the
    reasoning part and sends it back; its strict chunk schema takes it."""
    with serve(create_app(agent(deepseek))) as server:
        result = run_client(server.url + "/api/chat", FIRST, SECOND, sdk=sdk)
    assert (result["status"], result["errors"]) == ("ready", [])
    assert deepseek.refused == []
    last = result["messages"][-1]
    assert "".join(p["text"] for p in last["parts"] if p["type"] == "text") == "882"
    sent = [m.get("reasoning_content") for m in deepseek.bodies[3]["messages"]]
    assert sent.count(STREAMED["call_a"]) == sent.count(STREAMED["call_b"]) == 1


ORIGIN = ReasoningOrigin(field="reasoning_content", server="0123456789abcdef")


def test_the_encoder_puts_the_origin_on_its_reasoning_delta() -> None:
    encoder = UIMessageStreamEncoder()
    chunks = encoder.encode(ReasoningDelta(text="Think", origin=ORIGIN))
    chunks += encoder.encode(ReasoningDelta(text="ing."))
    chunks += encoder.encode(TextDelta(text="42"))
    deltas = [c for c in chunks if c["type"] == "reasoning-delta"]
    meta = {"streamtools": {"reasoningOrigin": {"field": ORIGIN.field, "server": ORIGIN.server}}}
    assert deltas[0]["providerMetadata"] == meta
    assert "providerMetadata" not in deltas[1]  # the SDK keeps the first on the part
    assert all("providerMetadata" not in c for c in chunks if c["type"] != "reasoning-delta")


def reasoning_part(meta: Any) -> bytes:
    message = {"role": "assistant", "parts": [
        {"type": "step-start"},
        {"type": "reasoning", "text": "Think.", "providerMetadata": meta},
        {"type": "text", "text": "42"},
    ]}  # fmt: skip
    return msgspec.json.encode({"messages": [message, user("Next?")]})


def test_the_history_gives_the_reply_its_origin_back() -> None:
    ours = {"field": ORIGIN.field, "server": ORIGIN.server}
    meta = {"streamtools": {"reasoningOrigin": ours}, "anthropic": {"signature": "x"}}
    reply = parse_chat_request(reasoning_part(meta)).messages[0]
    assert reply == AssistantMessage(text="42", reasoning="Think.", reasoning_origin=ORIGIN)


@pytest.mark.parametrize(
    "meta", [None, {}, "x", {"anthropic": {"signature": "x"}}, {"streamtools": {}}]
)
def test_a_reasoning_part_without_our_origin_has_none(meta: Any) -> None:
    reply = parse_chat_request(reasoning_part(meta)).messages[0]
    assert isinstance(reply, AssistantMessage) and reply.reasoning == "Think."
    assert reply.reasoning_origin is None


def test_a_malformed_origin_is_refused() -> None:
    meta = {"streamtools": {"reasoningOrigin": {"field": "reasoning_content"}}}
    with pytest.raises(ChatRequestError, match="reasoning origin"):
        parse_chat_request(reasoning_part(meta))


def test_the_events_stream_says_where_each_replys_reasoning_came_from(deepseek: Server) -> None:
    """``/api/events`` gives the origin on a reply's first reasoning event, for
    its client to send back on the reasoning part as the AI SDK's does."""
    with serve(create_app(agent(deepseek))) as server:
        body = {"messages": [{"role": "user", "content": FIRST}]}
        response = httpx.post(server.url + "/api/events", json=body, timeout=30)
    events = [decode_event(d) for d in sse_data(response.content)]
    origins = [e.origin for e in events if isinstance(e, ReasoningDelta)]
    # three replies: the first of two deltas, and each of the others' one
    assert [o is not None for o in origins] == [True, False, True, True]
    assert len({o for o in origins if o is not None}) == 1
    assert origins[0] is not None and origins[0].field == "reasoning_content"
