"""Responses input items of built-in tools (a conversation replayed from
another backend: OpenAI's web search, code interpreter, shell, MCP...) reach the
model as notes it reads, through the official ``openai`` SDK, Uvicorn on
127.0.0.1 and ``FakeServer`` as the plain-chat upstream. They used to be a 400,
so the conversation could not go on."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from test_proxy import PARIS, WEATHER, _openai, proxy

FN_WEATHER: Any = {"type": "function", **WEATHER["function"]}
SCREENSHOT = "data:image/png;base64," + "iVBORw0KGgo" * 50
SECRET = "gAAAAB-encrypted-" + "x" * 40

# one item of each type, in the shapes the SDK's ResponseInputItemParam gives
ITEMS: dict[str, Any] = {
    "web_search_call": {
        "type": "web_search_call", "id": "ws_1", "status": "completed",
        "action": {"type": "search", "query": "weather Paris today",
                   "sources": [{"type": "url", "url": "https://meteo.example/paris"}]},
    },
    "file_search_call": {
        "type": "file_search_call", "id": "fs_1", "status": "completed",
        "queries": ["refund policy"],
        "results": [{"file_id": "file_1", "filename": "policy.md", "score": 0.9,
                     "text": "Refunds within 30 days."}],
    },
    "code_interpreter_call": {
        "type": "code_interpreter_call", "id": "ci_1", "status": "completed",
        "container_id": "cntr_1", "code": "print(21 * 9 / 5 + 32)",
        "outputs": [{"type": "logs", "logs": "69.8\n"}, {"type": "image", "url": "https://c/i.png"}],
    },
    "image_generation_call": {
        "type": "image_generation_call", "id": "ig_1", "status": "completed",
        "revised_prompt": "a red bicycle in the rain", "result": "iVBORw0KGgo" * 50,
    },
    "computer_call": {
        "type": "computer_call", "id": "cu_1", "call_id": "cc_1", "status": "completed",
        "pending_safety_checks": [],
        "action": {"type": "click", "button": "left", "x": 12, "y": 34},
    },
    "computer_call_output": {
        "type": "computer_call_output", "call_id": "cc_1",
        "output": {"type": "computer_screenshot", "image_url": SCREENSHOT},
    },
    "local_shell_call": {
        "type": "local_shell_call", "id": "ls_1", "call_id": "lc_1", "status": "completed",
        "action": {"type": "exec", "command": ["grep", "-n", "two words", "f.txt"], "env": {}},
    },
    "local_shell_call_output": {"type": "local_shell_call_output", "id": "lc_1", "output": "3:x"},
    "shell_call": {
        "type": "shell_call", "call_id": "sh_1", "status": "completed",
        "action": {"commands": ["ls", "pwd"]},
    },
    "shell_call_output": {
        "type": "shell_call_output", "call_id": "sh_1",
        "output": [
            {"stdout": "a.txt\n", "stderr": "warn\n", "outcome": {"type": "exit", "exit_code": 2}}
        ],
    },
    "apply_patch_call": {
        "type": "apply_patch_call", "call_id": "ap_1", "status": "completed",
        "operation": {"type": "update_file", "path": "src/app.py", "diff": "-a\n+b\n"},
    },
    "apply_patch_call_output": {
        "type": "apply_patch_call_output", "call_id": "ap_1", "status": "failed",
        "output": "hunk 1 did not apply",
    },
    "mcp_call": {
        "type": "mcp_call", "id": "mcp_1", "server_label": "deepwiki", "name": "ask",
        "arguments": '{"q": "what is h11"}', "output": "a sans-IO HTTP library",
    },
    "program": {"type": "program", "id": "p_1", "call_id": "pc_1", "code": "x = 1 + 1",
                "fingerprint": "fp"},
    "program_output": {"type": "program_output", "id": "po_1", "call_id": "pc_1",
                       "result": "2", "status": "completed"},
}
# what the model must read of each (its useful text)
READS = {
    "web_search_call": ["weather Paris today", "https://meteo.example/paris"],
    "file_search_call": ["refund policy", "policy.md", "Refunds within 30 days."],
    "code_interpreter_call": ["print(21 * 9 / 5 + 32)", "69.8", "[image omitted"],
    "image_generation_call": ["a red bicycle in the rain", "[image omitted"],
    "computer_call": ['"x":12', '"click"'],
    "computer_call_output": ["[image omitted"],
    "local_shell_call": ["grep -n 'two words' f.txt"],
    "local_shell_call_output": ["3:x"],
    "shell_call": ["command: ls", "command: pwd"],
    "shell_call_output": ["stdout: a.txt", "stderr: warn", "exit code: 2"],
    "apply_patch_call": ["update_file src/app.py", "-a\n+b"],
    "apply_patch_call_output": ["failed", "hunk 1 did not apply"],
    "mcp_call": ["deepwiki.ask", "what is h11", "a sans-IO HTTP library"],
    "program": ["x = 1 + 1"],
    "program_output": ["result: 2"],
}
# items that tell the model nothing it can use here: left out
SILENT: list[Any] = [
    {"type": "reasoning", "id": "rs_1", "encrypted_content": SECRET,
     "summary": [{"type": "summary_text", "text": "summary-s16-xyz"}]},
    {"type": "compaction_trigger"},
    {"type": "configuration_update", "reasoning": {"effort": "low"}},
    {"type": "mcp_list_tools", "id": "ml_1", "server_label": "deepwiki",
     "tools": [{"name": "ask", "input_schema": {}}]},
    {"type": "mcp_approval_request", "id": "ar_1", "arguments": "{}", "name": "ask",
     "server_label": "deepwiki"},
    {"type": "mcp_approval_response", "approval_request_id": "ar_1", "approve": True},
    {"type": "tool_search_call", "id": "ts_1", "arguments": {"q": "x"}},
]


def _sent(upstream: Any) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = upstream.received[-1].body["messages"]
    return messages


@pytest.mark.parametrize("kind", sorted(ITEMS))
def test_each_builtin_item_is_a_note_in_the_assistant_turn(kind: str) -> None:
    history: Any = [
        {"role": "user", "content": "Go on."},
        ITEMS[kind],
        {"type": "message", "role": "assistant", "content": "Done."},
        {"role": "user", "content": "And now?"},
    ]
    with proxy(["Now this."]) as (url, upstream):
        response = _openai(url).responses.create(model="m", input=history)
        sent = _sent(upstream)
    assert response.output_text == "Now this."
    roles = [m["role"] for m in sent]
    assert roles == ["user", "assistant", "user"]
    assistant = sent[1]["content"]
    # a note, then the turn's text after it: one assistant turn
    assert assistant.startswith(f"[{kind}") and assistant.endswith("\nDone.")
    for text in READS[kind]:
        assert text in assistant
    # the images' bytes are not sent to a model that reads text only
    assert "iVBORw0KGgo" not in json.dumps(sent)


def test_a_conversation_replayed_from_openai_goes_on_streamed() -> None:
    history: list[Any] = [
        {"type": "compaction", "id": "cmp_1", "encrypted_content": SECRET},
        {"role": "user", "content": "Weather in Paris?"},
        *SILENT,
        ITEMS["web_search_call"],
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "It is 21 C.", "annotations": []}]},
        ITEMS["code_interpreter_call"],
        {"role": "user", "content": "Check again with the tool."},
    ]
    with proxy([f"Checking. {PARIS}"]) as (url, upstream):
        with _openai(url).responses.stream(
            model="m", input=history, tools=[FN_WEATHER, {"type": "web_search"}]
        ) as stream:
            final = stream.get_final_response()
        sent = _sent(upstream)
    (call,) = [item for item in final.output if item.type == "function_call"]
    assert call.name == "weather" and json.loads(call.arguments) == {"city": "Paris"}
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    # the compaction stands where the history it replaced began, on the user's side
    first = sent[1]["content"]
    assert first.startswith("[compaction: ") and "cannot read" in first
    assert first.endswith("Weather in Paris?")
    # reasoning, approvals, tool listings: left out; nothing encrypted goes upstream
    text = json.dumps(sent)
    assert SECRET not in text and "summary-s16-xyz" not in text and "mcp_list_tools" not in text
    assistant = sent[2]["content"]
    assert assistant.index("weather Paris today") < assistant.index("It is 21 C.")
    assert assistant.index("It is 21 C.") < assistant.index("69.8")


def test_tools_a_tool_search_found_can_be_called() -> None:
    history: Any = [
        {"role": "user", "content": "Weather in Paris?"},
        {"type": "tool_search_call", "id": "ts_1", "call_id": "tsc_1",
         "arguments": {"query": "weather"}, "execution": "client"},
        {"type": "tool_search_output", "call_id": "tsc_1", "execution": "client",
         "tools": [FN_WEATHER]},
    ]
    with proxy([PARIS]) as (url, upstream):
        response = _openai(url).responses.create(model="m", input=history)
        sent = _sent(upstream)
    (call,) = [item for item in response.output if item.type == "function_call"]
    assert call.name == "weather" and json.loads(call.arguments) == {"city": "Paris"}
    assert 'name="weather"' in sent[0]["content"]  # in the tools' prompt


def test_unknown_item_types_are_still_a_400_naming_them() -> None:
    with proxy(["never sent"]) as (url, upstream):
        client = _openai(url)
        bad: list[tuple[Any, str]] = [
            ({"type": "hologram_call", "id": "h"}, "input\\[1\\]: items of type 'hologram_call'"),
            ({"type": "item_reference", "id": "msg_1"}, "item_reference is not supported"),
            ({"type": 7}, "items of type 7 "),
            ({"type": ["x"]}, "items of type \\['x'\\] "),
        ]
        for item, says in bad:
            with pytest.raises(openai.BadRequestError, match=says):
                client.responses.create(model="m", input=[{"role": "user", "content": "hi"}, item])
        assert upstream.received == []
