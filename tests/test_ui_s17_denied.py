"""A tool call the user denied (ai 6's tool approval) reaches the model as denied.

A ``useChat`` front end whose history holds a call in the ``output-denied`` state
(the user said no to it) sent it back, and the call was dropped as one that never
got an output: the model did not know the user had refused, and asked again. It is
now a call with an error result saying that the user denied it, and why, as the
SDK's own server tells its model. The message is checked against ai 6's own
``validateUIMessages`` when Node.js is there, so the shape is the SDK's.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from test_ui_node import JS, node_available

from streamtools.transcript import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from streamtools.ui import parse_chat_request


def conversation(approval: dict[str, Any]) -> list[dict[str, Any]]:
    denied = {
        "type": "dynamic-tool",
        "toolName": "files.remove",
        "toolCallId": "call_0",
        "state": "output-denied",
        "input": {"path": "/srv/data"},
        "approval": approval,
    }
    return [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Clean up /srv."}]},
        {
            "id": "a1",
            "role": "assistant",
            "parts": [{"type": "step-start"}, {"type": "text", "text": "Removing."}, denied],
        },
        {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "Now what?"}]},
    ]


@pytest.mark.parametrize(
    ("approval", "told"),
    [
        (
            {"id": "ap1", "approved": False, "reason": "that is production data"},
            "The user denied this tool call; it was not run. "
            "Their reason: that is production data",
        ),
        ({"id": "ap1", "approved": False}, "The user denied this tool call; it was not run."),
    ],
)
def test_a_denied_call_is_told_to_the_model_with_the_reason(
    approval: dict[str, Any], told: str
) -> None:
    messages = conversation(approval)
    node = node_available()
    if node is not None:  # the SDK itself takes this history as valid
        script = (
            "const { validateUIMessages } = await import('ai');"
            "await validateUIMessages({ messages: JSON.parse(process.argv[1]) });"
        )
        done = subprocess.run(
            [node, "--input-type=module", "-e", script, json.dumps(messages)],
            cwd=JS, capture_output=True, text=True, timeout=60, check=False,
        )
        assert done.returncode == 0, done.stderr
    transcript = parse_chat_request(json.dumps({"messages": messages}).encode())
    assert transcript.messages == [
        UserMessage(content="Clean up /srv."),
        AssistantMessage(
            text="Removing.",
            calls=(ToolCall(id="call_0", name="files.remove", arguments={"path": "/srv/data"}),),
        ),
        ToolResultMessage(call_id="call_0", name="files.remove", content=told, is_error=True),
        UserMessage(content="Now what?"),
    ]
