"""The official AI SDK client (npm package `ai`) reads our endpoint.

``tests/js/chat_client.mjs`` runs the SDK's ``AbstractChat`` (the core of
React's ``useChat``) against a live server: two user turns, so the second
request carries the first answer back in the SDK's own message format. The
test checks the SDK rebuilt the same text, reasoning, tool calls and results
(and error) that the agent produced, and that our server read the history
the SDK sent back.

Both SDK majors in use are checked: ``ai`` 6 and ``ai`` 5 (installed as the
npm alias ``ai5``; its stricter chunk schemas were the open question).

Needs Node.js and ``npm ci`` in tests/js (CI does it; run here if missing).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_ui_cli import parse
from test_ui_support import ScriptedSource, serve, sse_data

from streamtools.cli.ui import build_source
from streamtools.events import (
    ArgsDelta,
    CallEnd,
    CallStart,
    Event,
    Final,
    Finish,
    ReasoningDelta,
    StreamError,
    TextDelta,
    ToolFailed,
    ToolResult,
    TurnEnd,
    TurnStart,
    decode_event,
)
from streamtools.transcript import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from streamtools.ui import create_app

JS = Path(__file__).parent / "js"
# npm names in tests/js/package.json and the major each must be: ai 6, and ai 5 by alias
SDKS = {"ai": "6.", "ai5": "5."}

SCRIPT: list[Event] = [
    TurnStart(turn=1),
    ReasoningDelta(text="Two lookups."),
    TextDelta(text="Checking "),
    TextDelta(text="both."),
    CallStart(index=0, id="call_0", name="kom.weather.v1.now"),
    ArgsDelta(index=0, id="call_0", delta='{"city": '),
    ArgsDelta(index=0, id="call_0", delta='"Paris"}'),
    CallEnd(index=0, id="call_0", name="kom.weather.v1.now", arguments={"city": "Paris"}, raw=""),
    CallStart(index=1, id="call_1", name="search"),
    ArgsDelta(index=1, id="call_1", delta='{"q": "x"}'),
    CallEnd(index=1, id="call_1", name="search", arguments={"q": "x"}, raw=""),
    Finish(reason="stop"),
    ToolResult(index=0, id="call_0", name="kom.weather.v1.now", content='{"temp": 18}'),
    ToolFailed(index=1, id="call_1", name="search", kind="exception", message="search is down"),
    TurnEnd(turn=1, reason="tool_calls"),
    TurnStart(turn=2),
    TextDelta(text="Paris: 18C."),
    Finish(reason="stop"),
    TurnEnd(turn=2, reason="final"),
    Final(text="Paris: 18C.", turns=2),
]


def node_available() -> str | None:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return None
    if not all((JS / "node_modules" / sdk).is_dir() for sdk in SDKS):
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=JS, check=True, timeout=300)
    return node


def run_client(url: str, *prompts: str, sdk: str = "ai") -> dict[str, Any]:
    node = node_available()
    if node is None:
        pytest.skip("Node.js/npm not installed (CI installs them: apt-get install nodejs npm)")
    done = subprocess.run(
        [node, str(JS / "chat_client.mjs"), url, *prompts],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "AI_PACKAGE": sdk},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    assert result["sdkVersion"].startswith(SDKS[sdk]), result["sdkVersion"]
    return result


@pytest.mark.parametrize("sdk", list(SDKS))
def test_the_ai_sdk_chat_client_rebuilds_text_tools_and_results(sdk: str) -> None:
    source = ScriptedSource(SCRIPT)
    with serve(create_app(source)) as server:
        result = run_client(server.url + "/api/chat", "Weather in Paris?", "Thanks", sdk=sdk)
    assert result["errors"] == []
    assert result["status"] == "ready"
    user1, answer, user2, _answer2 = result["messages"]
    assert [user1["role"], answer["role"], user2["role"]] == ["user", "assistant", "user"]
    parts = [p for p in answer["parts"] if p["type"] != "step-start"]
    summary = [(p["type"], p.get("text") or p.get("toolName"), p.get("state")) for p in parts]
    assert summary == [
        ("reasoning", "Two lookups.", "done"),
        ("text", "Checking both.", "done"),
        ("dynamic-tool", "kom.weather.v1.now", "output-available"),
        ("dynamic-tool", "search", "output-error"),
        ("text", "Paris: 18C.", "done"),
    ]
    weather, search = parts[2], parts[3]
    assert (weather["toolCallId"], weather["input"], weather["output"]) == (
        "call_0",
        {"city": "Paris"},
        '{"temp": 18}',
    )
    assert (search["toolCallId"], search["input"], search["errorText"]) == (
        "call_1",
        {"q": "x"},
        "search is down",
    )
    assert [p["type"] for p in answer["parts"]].count("step-start") == 2
    # The second request carried the SDK's messages back; we read them as history.
    history = source.prompts[1].messages  # type: ignore[union-attr]
    assert history == [
        UserMessage(content="Weather in Paris?"),
        AssistantMessage(
            text="Checking both.",
            reasoning="Two lookups.",
            calls=(
                ToolCall(id="call_0", name="kom.weather.v1.now", arguments={"city": "Paris"}),
                ToolCall(id="call_1", name="search", arguments={"q": "x"}),
            ),
        ),
        ToolResultMessage(call_id="call_0", name="kom.weather.v1.now", content='{"temp": 18}'),
        ToolResultMessage(call_id="call_1", name="search", content="search is down", is_error=True),
        AssistantMessage(text="Paris: 18C."),
        UserMessage(content="Thanks"),
    ]


@pytest.mark.parametrize("sdk", list(SDKS))
def test_the_ai_sdk_client_rebuilds_what_the_demo_agent_produced(sdk: str) -> None:
    """The real pipeline (demo replay, parser, live tools): the SDK's message
    matches our own event stream for the same run."""
    source, _subtitle, _suggestion = build_source(parse("--instant"))
    with serve(create_app(source)) as server:
        ours = httpx.post(
            server.url + "/api/events",
            json={"messages": [{"role": "user", "content": "x"}]},
            timeout=60,
        )
        result = run_client(server.url + "/api/chat", "x", sdk=sdk)
    events = [decode_event(d) for d in sse_data(ours.content)]
    assert result["errors"] == []
    parts = result["messages"][1]["parts"]
    text = "".join(p["text"] for p in parts if p["type"] == "text")
    assert text == "".join(e.text for e in events if isinstance(e, TextDelta))
    calls = [(p["toolName"], p["input"], p["state"]) for p in parts if p["type"] == "dynamic-tool"]
    assert calls == [
        (e.name, e.arguments, "output-available") for e in events if isinstance(e, CallEnd)
    ]
    outputs = {p["toolCallId"]: p["output"] for p in parts if p["type"] == "dynamic-tool"}
    results = {e.id: e.content for e in events if isinstance(e, ToolResult)}
    assert outputs.keys() == results.keys()
    names = {e.id: e.name for e in events if isinstance(e, CallEnd)}
    for call_id, content in results.items():
        if names[call_id] != "clock":  # the clock's reading differs between the two runs
            assert outputs[call_id] == content


@pytest.mark.parametrize("sdk", list(SDKS))
def test_a_stream_error_the_agent_goes_on_after_does_not_end_the_sdks_answer(sdk: str) -> None:
    """The SDK's chat stops reading at an ``error`` chunk and aborts the request;
    sent for a model stream the agent recovers from, it lost the rest of the
    answer and left the card running."""
    source = ScriptedSource(
        [
            TurnStart(turn=1),
            CallEnd(index=0, id="call_0", name="f", arguments={}, raw=""),
            StreamError(kind="stream", message="connection reset"),
            Finish(reason="error"),
            ToolResult(index=0, id="call_0", name="f", content="ok"),
            TurnEnd(turn=1, reason="tool_calls"),
            TurnStart(turn=2),
            TextDelta(text="All done."),
            Finish(reason="stop"),
            TurnEnd(turn=2, reason="final"),
        ]
    )
    with serve(create_app(source)) as server:
        result = run_client(server.url + "/api/chat", "hi", sdk=sdk)
    assert (result["status"], result["errors"]) == ("ready", [])
    parts = [p for p in result["messages"][1]["parts"] if p["type"] != "step-start"]
    assert [(p["type"], p["state"]) for p in parts] == [
        ("dynamic-tool", "output-available"),
        ("text", "done"),
    ]
    assert source.completed.is_set()


# onFinish's finishReason as the SDK reports it (chat_client.mjs prints messages only)
FINISH_CLIENT = """
const { AbstractChat, DefaultChatTransport } = await import(process.env.AI_PACKAGE);
const state = {
  status: "ready", error: undefined, messages: [],
  pushMessage(m) { this.messages = this.messages.concat(m); },
  popMessage() { this.messages = this.messages.slice(0, -1); },
  replaceMessage(i, m) {
    const rest = this.messages.slice(i + 1);
    this.messages = [...this.messages.slice(0, i), structuredClone(m), ...rest];
  },
  snapshot(t) { return structuredClone(t); },
};
class Chat extends AbstractChat { constructor(init) { super({ ...init, state }); } }
const reasons = [], errors = [];
const chat = new Chat({
  transport: new DefaultChatTransport({ api: process.argv[1] }),
  onError: (e) => errors.push(String(e && e.message || e)),
  onFinish: ({ finishReason }) => reasons.push(finishReason ?? null),
});
await chat.sendMessage({ text: "hi" });
process.stdout.write(JSON.stringify({ reasons, errors }));
"""


@pytest.mark.parametrize("sdk", list(SDKS))
def test_the_sdks_on_finish_gets_the_finish_reason(sdk: str) -> None:
    """``finish`` carried no ``finishReason``: ``onFinish`` got ``undefined``."""
    node = node_available()
    if node is None:
        pytest.skip("Node.js/npm not installed (CI installs them: apt-get install nodejs npm)")
    cut: list[Event] = [TurnStart(turn=1), TextDelta(text="It was cut"), Finish(reason="length"),
           TurnEnd(turn=1, reason="final")]
    with serve(create_app(ScriptedSource(cut))) as server:
        done = subprocess.run(
            [node, "--input-type=module", "-e", FINISH_CLIENT, f"{server.url}/api/chat"],
            cwd=JS,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "AI_PACKAGE": sdk},
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"reasons": ["length"], "errors": []}
