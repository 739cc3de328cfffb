"""Anthropic-defined client tools (``bash_20250124``, the text editors, memory,
computer use) through the proxy: declared by type and name, shown to the
model with their documented input, called back as ``tool_use`` blocks. The
official anthropic SDK is the client, ``FakeServer`` the plain-chat upstream."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from test_proxy import USER, _anthropic, proxy

from streamtools.proxy.client_tools import client_tool

BASH: Any = {"type": "bash_20250124", "name": "bash"}
EDITOR: Any = {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}
RUN = '<am:tool_call name="bash"><command>ls -la</command></am:tool_call>'
EDIT = (
    '<am:tool_call name="str_replace_based_edit_tool"><command>str_replace</command>'
    "<path>/src/a.py</path><old_str>x = 1</old_str><new_str>x = 2</new_str></am:tool_call>"
)


@pytest.mark.parametrize("stream", [False, True])
def test_bash_and_the_text_editor_are_served_as_tools(stream: bool) -> None:
    # both were a 400 that called them server tools, though the client runs them
    with proxy([f"Looking. {RUN}{EDIT}"]) as (url, upstream):
        client = _anthropic(url)
        asked: Any = {"model": "m", "max_tokens": 200, "messages": USER, "tools": [BASH, EDITOR]}
        if stream:
            with client.messages.stream(**asked) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(**asked)
        (sent,) = upstream.requests
    assert message.stop_reason == "tool_use"
    calls = [(b.name, b.input) for b in message.content if b.type == "tool_use"]
    assert calls == [
        ("bash", {"command": "ls -la"}),
        (
            "str_replace_based_edit_tool",
            {"command": "str_replace", "path": "/src/a.py", "old_str": "x = 1", "new_str": "x = 2"},
        ),
    ]
    prompt = sent["messages"][0]["content"]
    assert '<am:tool name="bash"' in prompt and "persistent bash shell" in prompt
    assert '<am:tool name="str_replace_based_edit_tool"' in prompt
    for parameter in ("command", "restart", "path", "old_str", "new_str", "insert_line"):
        assert f'name="{parameter}"' in prompt
    assert "undo_edit" not in prompt  # not in text_editor_20250728


def test_each_version_has_its_own_input() -> None:
    older = client_tool({"type": "text_editor_20250124", "name": "str_replace_editor"})
    memory = client_tool({"type": "memory_20250818", "name": "memory"})
    screen = client_tool(
        {"type": "computer_20250124", "name": "computer",
         "display_width_px": 1024, "display_height_px": 768}
    )
    assert older is not None and memory is not None and screen is not None
    assert "undo_edit" in older.parameters["properties"]["command"]["enum"]
    assert {"insert_text", "old_path", "new_path"} <= set(memory.parameters["properties"])
    assert "1024x768 pixels" in screen.description
    assert "scroll" in screen.parameters["properties"]["action"]["enum"]
    assert client_tool({"type": "web_search_20250305", "name": "web_search"}) is None


def test_an_unknown_tool_type_is_refused_by_its_name() -> None:
    # (a web search is left out: test_proxy_s19_web_search)
    search: Any = {"type": "code_execution_20250825", "name": "code_execution"}
    with proxy(["I have no tools."]) as (url, upstream):
        with pytest.raises(anthropic.BadRequestError) as info:
            _anthropic(url).messages.create(
                model="m", max_tokens=10, messages=USER, tools=[BASH, search]
            )
        assert upstream.requests == []
    body = info.value.body
    assert isinstance(body, dict) and body["error"]["type"] == "invalid_request_error"
    message = body["error"]["message"]
    assert "tools[1]" in message and "'code_execution_20250825'" in message
    assert "server tool type" not in message
