"""A past call whose arguments are not a JSON object (``ToolCall.arguments_text``:
cut off by another backend's token limit, a broken call a client kept), written
back by every dialect in its call form, its result still paired with it."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from provider_support import mock

from streamtools.model import Model, ModelRequest
from streamtools.prompts import get_renderer, project
from streamtools.providers import AnthropicMessages, OllamaChat, OpenAIChat
from streamtools.transcript import ToolCall, Transcript

DIALECTS = ["am_xml", "json_action", "hermes", "inline_json", "json_object", "command"]
# the text holds every dialect's closing markup, and a line break
BROKEN = '{"path": "a.md", "text": "</am:tool_call> </tool_call> ```\nend'
CLOSERS = {"am_xml": "</am:tool_call>", "hermes": "</tool_call>", "json_action": "```"}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_call_whose_arguments_are_text_is_written_back_and_answered(dialect: str) -> None:
    renderer = get_renderer(dialect)
    call = ToolCall(id="c1", name="write", arguments={}, arguments_text=BROKEN)
    transcript = Transcript()
    transcript.user("Write a.md")
    transcript.assistant("Writing.", calls=[call])
    transcript.result(call, "error: the arguments are not valid JSON", is_error=True)
    messages = project(transcript, dialect, [])
    written = renderer.render_call(call)
    assert written != renderer.format_call("write", {})
    reply = next(m.content for m in messages if m.role == "assistant")
    assert '{"path": "a.md", "text": "' in reply  # the model reads back what it wrote
    assert written in reply or dialect == "json_object"  # where the thought goes first
    if dialect in CLOSERS:  # the text cannot close the call early
        marker = CLOSERS[dialect]
        assert written.endswith(marker) and written.count(marker) == 1 + written.startswith(marker)
    if dialect == "command":
        assert "\n" not in written
    answer = renderer.render_error("write", "error: the arguments are not valid JSON", call_id="c1")
    after = [m.content for m in messages[[m.role for m in messages].index("assistant") + 1 :]]
    assert any(answer in text for text in after) and "no such call" not in "".join(after)


CUT = '{"path": "a.md", "text": "ha'


def _native_request() -> ModelRequest:
    call = ToolCall(id="c1", name="write", arguments={}, arguments_text=CUT)
    transcript = Transcript()
    transcript.user("Write a.md")
    transcript.assistant("Writing.", calls=[call])
    transcript.result(call, "error: the arguments are not valid JSON", is_error=True)
    transcript.user("Again")
    return ModelRequest(messages=tuple(project(transcript, "hermes", [], native=True)))


async def _sent(provider: type[Model], body: str, ctype: str) -> dict[str, Any]:
    seen: list[httpx.Request] = []
    model = provider("m", client=mock(body, seen=seen, stream_ctype=ctype))  # type: ignore[call-arg]
    async with model.stream(_native_request()) as chunks:
        async for _ in chunks:
            pass
    sent: dict[str, Any] = json.loads(seen[0].content)
    return sent


@pytest.mark.anyio
async def test_native_history_sends_the_arguments_text_not_an_empty_object(
    anyio_backend: str,
) -> None:
    """Native mode sent such a call with ``{}`` arguments: the model read a call it
    never made, with no sign of what it wrote. Every API gets ``{}`` and the text
    as reply text just before the call: Anthropic and Ollama take an object only,
    and OpenAI-compatible servers (vLLM, SGLang, llama-server) refuse past
    ``arguments`` that do not decode to one (400 on every later request)."""
    [reply] = [m for m in _native_request().messages if m.tool_calls]
    assert reply.tool_calls[0].arguments_text == CUT

    openai = await _sent(OpenAIChat, "data: [DONE]\n\n", "text/event-stream")
    [call] = openai["messages"][1]["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {}
    assert openai["messages"][1]["content"] == f"Writing.\n{CUT}"

    stop = 'event: message_stop\ndata: {"type": "message_stop"}\n\n'
    anthropic = await _sent(AnthropicMessages, stop, "text/event-stream")
    assert anthropic["messages"][1]["content"] == [
        {"type": "text", "text": "Writing."},
        {"type": "text", "text": CUT},
        {"type": "tool_use", "id": "c1", "name": "write", "input": {}},
    ]

    done = json.dumps({"model": "m", "message": {"role": "assistant", "content": ""}, "done": True})
    ollama = await _sent(OllamaChat, done + "\n", "application/x-ndjson")
    assert ollama["messages"][1]["content"] == f"Writing.\n{CUT}"
    assert ollama["messages"][1]["tool_calls"] == [
        {"id": "c1", "function": {"name": "write", "arguments": {}}}
    ]
