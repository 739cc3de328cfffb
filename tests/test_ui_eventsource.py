"""``GET /api/events``: our events for a browser's ``EventSource``, which can
only GET, names its own connection errors ``error`` and reconnects whenever a
stream ends. A real server on 127.0.0.1; the last test drives a real
``EventSource``, Node's."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import httpx
import pytest
from test_ui_support import HELLO, ScriptedSource, serve, sse_data

from streamtools.errors import BudgetExceeded
from streamtools.events import (
    StreamError,
    TextDelta,
    decode_event,
)
from streamtools.transcript import AssistantMessage, UserMessage
from streamtools.ui import create_app


def names(body: bytes) -> list[str]:
    """The SSE event names of ``body``, in order (blocks without a name skipped)."""
    out = []
    for block in body.decode().split("\n\n"):
        for line in block.split("\n"):
            if line.startswith("event:"):
                out.append(line[6:].strip())
    return out


def test_get_streams_our_events_from_a_prompt_in_the_query() -> None:
    source = ScriptedSource(HELLO)
    with serve(create_app(source)) as server:
        response = httpx.get(server.url + "/api/events", params={"prompt": "hi & bye"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert source.prompts[0].messages == [UserMessage(content="hi & bye")]  # type: ignore[union-attr]
    data = sse_data(response.content)
    assert [decode_event(d) for d in data[:-1]] == HELLO
    assert names(response.content)[-1] == "done" and data[-1] == "{}"
    # an ``id`` before any event, so that a reconnection says it is one
    assert response.text.startswith("id: 0\n\n")


def test_get_takes_a_whole_conversation_as_messages_json() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "2+3?"},
        {"role": "assistant", "parts": [{"type": "text", "text": "5."}]},
        {"role": "user", "parts": [{"type": "text", "text": "and 4+4?"}]},
    ]
    source = ScriptedSource(HELLO)
    with serve(create_app(source)) as server:
        params = {"messages": json.dumps(messages), "_": "1700000000"}  # a cache buster
        response = httpx.get(server.url + "/api/events", params=params)
    assert response.status_code == 200
    assert source.prompts[0].messages == [  # type: ignore[union-attr]
        UserMessage(content="2+3?"),
        AssistantMessage(text="5."),
        UserMessage(content="and 4+4?"),
    ]


def test_a_failure_is_a_stream_error_event_not_an_error_event() -> None:
    """``error`` is the name EventSource gives its own connection errors: a page
    listening for it could not tell the server's report from a dropped line."""
    mid = StreamError(kind="stream", message="cut")
    source = ScriptedSource([TextDelta(text="a"), mid], fail=BudgetExceeded("out", turns=8))
    with serve(create_app(source)) as server:
        response = httpx.get(server.url + "/api/events", params={"prompt": "x"})
    assert names(response.content) == ["text", "stream_error", "stream_error", "done"]
    events = [decode_event(d) for d in sse_data(response.content)[:-1]]
    assert events == [
        TextDelta(text="a"),
        mid,
        StreamError(kind="server", message="BudgetExceeded: out"),
    ]


def test_post_keeps_its_names() -> None:
    """Clients of POST /api/events (fetch readers) keep the names they know."""
    source = ScriptedSource([TextDelta(text="a")], fail=BudgetExceeded("out", turns=8))
    with serve(create_app(source)) as server:
        response = httpx.post(
            server.url + "/api/events", json={"messages": [{"role": "user", "content": "x"}]}
        )
    assert names(response.content) == ["text", "error"]
    assert not response.text.startswith("id:")


def test_a_reconnection_gets_204_and_runs_nothing() -> None:
    """EventSource reconnects when a stream ends or drops; the stateless stream
    cannot resume, and starting it again would run the tools again. 204 is the
    status that tells EventSource to stop."""
    source = ScriptedSource(HELLO)
    with serve(create_app(source)) as server:
        response = httpx.get(
            server.url + "/api/events", params={"prompt": "x"}, headers={"Last-Event-ID": "0"}
        )
    assert response.status_code == 204
    assert response.content == b""
    assert source.prompts == []


@pytest.mark.parametrize(
    ("params", "status", "message"),
    [
        ({}, 400, "give the conversation as one `prompt` or one `messages` query parameter"),
        ({"prompt": "a", "messages": "[]"}, 400, "give the conversation as one"),
        ({"messages": "[{"}, 400, "the `messages` query parameter is not valid JSON"),
        (
            {"messages": '[{"role": "robot", "content": "x"}]'},
            400,
            "invalid `messages` query parameter: Invalid enum value 'robot' - at `$[0].role`",
        ),
        ({"messages": "[]"}, 400, "the conversation must end with a user message"),
        ({"prompt": "x" * 9000}, 414, "query string longer than 8192 bytes; POST it"),
    ],
)
def test_bad_queries_get_a_json_error(params: dict[str, str], status: int, message: str) -> None:
    source = ScriptedSource(HELLO)
    with serve(create_app(source)) as server:
        response = httpx.get(server.url + "/api/events", params=params)
    assert response.status_code == status
    assert response.json()["error"]["message"].startswith(message)
    assert source.prompts == []


# --- a real EventSource: Node's (undici's, the WHATWG spec's) --------------------

# records each event by name; at `done` closes, as a page should, unless told not to;
# prints what it saw once the source is closed (by itself, or by the browser's rules)
LISTEN = """
const [url, close] = [process.argv[1], process.argv[2] === "close"];
const seen = [];
const source = new EventSource(url);
const end = () => { console.log(JSON.stringify(seen)); process.exit(0); };
for (const name of ["text", "final", "stream_error", "done"]) {
  source.addEventListener(name, (e) => {
    seen.push([name, e.data]);
    if (name === "done" && close) { source.close(); end(); }
  });
}
source.addEventListener("error", (e) => {
  seen.push(["error", source.readyState]);  // 0: will reconnect, 2: closed
  if (source.readyState === EventSource.CLOSED) end();
});
setTimeout(() => { console.log(JSON.stringify(["timed out", seen])); process.exit(1); }, 20000);
"""


def node_event_source() -> list[str]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js not installed")
    argv = [node, "--no-warnings", "--experimental-eventsource", "-e"]
    probe = subprocess.run([*argv, "typeof EventSource === 'function' || process.exit(3)"])
    if probe.returncode != 0:
        pytest.skip("this Node.js has no EventSource (needs 20.10 or later)")
    return argv


@pytest.mark.parametrize("close", ["close", "forget"], ids=["page-closes", "page-forgets"])
def test_an_event_source_reads_the_stream_once(close: str) -> None:
    argv = node_event_source()
    source = ScriptedSource(
        [TextDelta(text="a"), 0.05, TextDelta(text="b")], fail=BudgetExceeded("out", turns=8)
    )
    with serve(create_app(source)) as server:
        url = server.url + "/api/events?prompt=hi%20there"
        run = subprocess.run([*argv, LISTEN, url, close], capture_output=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    seen = json.loads(run.stdout)
    assert [name for name, _ in seen[:4]] == ["text", "text", "stream_error", "done"]
    assert json.loads(seen[2][1])["message"] == "BudgetExceeded: out"
    # a source left open reconnects once the stream ends (an error event, state
    # CONNECTING), is refused (204) and closes (another, state CLOSED); the agent
    # is not run again
    assert seen[4:] == ([] if close == "close" else [["error", 0], ["error", 2]])
    assert len(source.prompts) == 1
    assert source.prompts[0].messages == [UserMessage(content="hi there")]  # type: ignore[union-attr]
