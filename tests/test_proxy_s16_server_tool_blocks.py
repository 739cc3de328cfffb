"""Anthropic server tools' blocks in an assistant message (a conversation
replayed from Anthropic's API, where a web search or code execution ran) reach
the model as notes it reads, through the official ``anthropic`` SDK, Uvicorn on
127.0.0.1 and ``FakeServer``. They were a 400 on every later request."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from test_proxy import _anthropic, proxy

PAGE = {"type": "text", "media_type": "text/plain", "data": "Page A says hi."}
SEARCHED: Any = [
    {"type": "text", "text": "Let me look."},
    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
     "input": {"query": "paris weather"}},
    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
        {"type": "web_search_result", "url": "https://meteo.example/paris",
         "title": "Paris forecast", "encrypted_content": "ENCRYPTED-PAGE", "page_age": None},
    ]},
    {"type": "text", "text": "It is sunny.", "citations": [
        {"type": "web_search_result_location", "url": "https://meteo.example/paris",
         "title": "Paris forecast", "encrypted_index": "e1", "cited_text": "sunny"},
    ]},
    {"type": "server_tool_use", "id": "srvtoolu_2", "name": "bash_code_execution",
     "input": {"command": "python -c 'print(6*7)'"}},
    {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_2", "content": {
        "type": "bash_code_execution_result", "stdout": "42\n", "stderr": "",
        "return_code": 0, "content": [],
    }},
    {"type": "server_tool_use", "id": "srvtoolu_3", "name": "web_fetch",
     "input": {"url": "https://docs.example/a"}},
    {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_3", "content": {
        "type": "web_fetch_result", "url": "https://docs.example/a",
        "content": {"type": "document", "title": "A", "source": PAGE},
    }},
    {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_4", "content": {
        "type": "tool_search_tool_search_result", "tool_references": [
            {"type": "tool_reference", "tool_name": "hidden_tool"}]}},
]


@pytest.mark.parametrize("stream", [False, True])
def test_server_tool_blocks_are_notes_in_the_assistant_turn(stream: bool) -> None:
    messages: Any = [
        {"role": "user", "content": "Weather in Paris, and 6*7?"},
        {"role": "assistant", "content": SEARCHED},
        {"role": "user", "content": "Thanks. And tomorrow?"},
    ]
    with proxy(["Rain."]) as (url, upstream):
        client = _anthropic(url)
        message: Any
        if stream:
            with client.messages.stream(model="c", max_tokens=64, messages=messages) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(model="c", max_tokens=64, messages=messages)
        sent = upstream.received[0].body["messages"]
    assert message.content[0].type == "text" and message.content[0].text == "Rain."
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    turn = sent[1]["content"]
    order = [
        "Let me look.", "paris weather", "Paris forecast https://meteo.example/paris",
        "It is sunny.", "print(6*7)", "stdout: 42", "return_code: 0", "Page A says hi.",
    ]
    at = [turn.index(text) for text in order]
    assert at == sorted(at)  # each in its place in the turn
    assert "[server_tool_use:" in turn and "[web_search_tool_result:" in turn
    # what the model cannot read or use is left out
    assert "ENCRYPTED-PAGE" not in turn and "hidden_tool" not in turn


def test_other_unknown_blocks_are_still_a_400() -> None:
    messages: Any = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "hologram", "id": "h"}]},
        {"role": "user", "content": "again"},
    ]
    with proxy(["never sent"]) as (url, upstream):
        with pytest.raises(anthropic.BadRequestError, match="block of type 'hologram'"):
            _anthropic(url).messages.create(model="c", max_tokens=64, messages=messages)
        assert upstream.received == []
