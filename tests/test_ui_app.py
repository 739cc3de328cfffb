"""The endpoint and the pump: a real server on 127.0.0.1, real HTTP clients."""

from __future__ import annotations

import re

import httpx
import msgspec
import pytest
from starlette.types import Message, Scope
from test_ui_support import ScriptedSource, read_ui_stream, serve, sse_data

from streamtools.errors import BudgetExceeded
from streamtools.events import (
    ArgsDelta,
    CallEnd,
    CallStart,
    Event,
    Final,
    Finish,
    TextDelta,
    ToolResult,
    TurnEnd,
    TurnStart,
    decode_event,
)
from streamtools.transcript import UserMessage
from streamtools.ui import KEEPALIVE, EventsFramer, UIMessageFramer, create_app, pump

SCRIPT: list[Event] = [
    TurnStart(turn=1),
    TextDelta(text="Adding. "),
    CallStart(index=0, id="call_0", name="add"),
    ArgsDelta(index=0, id="call_0", delta='{"a": 2, '),
    ArgsDelta(index=0, id="call_0", delta='"b": 3}'),
    CallEnd(index=0, id="call_0", name="add", arguments={"a": 2, "b": 3}, raw=""),
    Finish(reason="stop"),
    ToolResult(index=0, id="call_0", name="add", content="5"),
    TurnEnd(turn=1, reason="tool_calls"),
    TurnStart(turn=2),
    TextDelta(text="The sum is 5."),
    Finish(reason="stop"),
    TurnEnd(turn=2, reason="final"),
    Final(text="The sum is 5.", turns=2),
]

CHAT = {"messages": [{"id": "u", "role": "user", "parts": [{"type": "text", "text": "2+3?"}]}]}


def test_ai_sdk_endpoint_streams_the_protocol_with_its_headers() -> None:
    source = ScriptedSource(SCRIPT)
    with serve(create_app(source)) as server:
        response = httpx.post(server.url + "/api/chat", json=CHAT, timeout=10)
    assert response.status_code == 200
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert response.headers["content-type"].startswith("text/event-stream")
    reader = read_ui_stream(response.content)
    assert reader.text == "Adding. The sum is 5."
    assert reader.tool_parts == [
        {
            "type": "tool",
            "toolCallId": "call_0",
            "toolName": "add",
            "state": "output-available",
            "raw": '{"a": 2, "b": 3}',
            "input": {"a": 2, "b": 3},
            "output": "5",
        }
    ]
    assert source.prompts[0].messages == [UserMessage(content="2+3?")]  # type: ignore[union-attr]
    assert source.completed.is_set() and not source.cancelled.is_set()


def test_events_endpoint_streams_our_events_by_name() -> None:
    with serve(create_app(ScriptedSource(SCRIPT))) as server:
        response = httpx.post(
            server.url + "/api/events", json={"messages": [{"role": "user", "content": "x"}]}
        )
    assert response.status_code == 200
    assert "x-vercel-ai-ui-message-stream" not in response.headers
    assert [decode_event(d) for d in sse_data(response.content)] == SCRIPT
    assert response.text.startswith("event: turn_start\ndata: ")


# a part's ``input`` is any JSON: nested past msgspec's depth (RecursionError)
_DEEP_PART = (
    b'{"messages": [{"role": "user", "parts": [{"type": "text", "input": '
    + b"[" * 5000 + b"]" * 5000 + b"}]}]}"
)


@pytest.mark.parametrize(
    ("content", "status", "message"),
    [
        (b"not json", 400, "request body is not valid JSON: JSON is malformed: invalid character"),
        (b'{"messages": 3}', 400, "invalid chat request: Expected `array`, got `int`"),
        pytest.param(_DEEP_PART, 400, "request body is nested too deeply", id="nested-too-deeply"),
        pytest.param(  # msgspec raises UnicodeDecodeError for it: it was a 500
            b'{"messages": [{"role": "user", "content": "caf\xc3"}]}',
            400,
            "request body is not valid UTF-8: unexpected end of data",
            id="not-utf-8",
        ),
        (b"x" * 5_000_000, 413, "request body larger than 4194304 bytes"),
    ],
)
def test_bad_requests_get_a_json_error(content: bytes, status: int, message: str) -> None:
    source = ScriptedSource(SCRIPT)
    with serve(create_app(source)) as server:
        response = httpx.post(server.url + "/api/chat", content=content, timeout=10)
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["message"].startswith(message)
    assert source.prompts == []


def test_an_agent_failure_ends_the_stream_with_an_error_chunk() -> None:
    source = ScriptedSource(SCRIPT[:3], fail=BudgetExceeded("ran out of turns", turns=8))
    with serve(create_app(source)) as server:
        response = httpx.post(server.url + "/api/chat", json=CHAT, timeout=10)
    reader = read_ui_stream(response.content)
    assert reader.errors == ["BudgetExceeded: ran out of turns"]
    # the call whose arguments were streaming ends as failed, not running forever
    assert reader.tool_parts[0]["state"] == "output-error"
    assert reader.tool_parts[0]["errorText"] == (
        "stopped before it finished: BudgetExceeded: ran out of turns"
    )


def test_an_unexpected_failure_is_reported_without_internals(
    caplog: pytest.LogCaptureFixture,
) -> None:
    source = ScriptedSource([TextDelta(text="a")], fail=KeyError("secret"))
    with serve(create_app(source)) as server:
        response = httpx.post(server.url + "/api/chat", json=CHAT, timeout=10)
    assert read_ui_stream(response.content).errors == ["internal server error"]
    assert "secret" not in response.text


def test_a_client_that_disconnects_cancels_the_agent() -> None:
    source = ScriptedSource([TextDelta(text="first"), 30.0, TextDelta(text="never")])
    with serve(create_app(source)) as server:
        with httpx.stream("POST", server.url + "/api/chat", json=CHAT, timeout=10) as response:
            for line in response.iter_lines():
                if "first" in line:
                    break  # leaving the block closes the connection mid-stream
        assert source.cancelled.wait(10), "the server did not cancel the agent"
    assert not source.completed.is_set()


def test_a_front_end_on_another_origin_may_call_the_endpoint_when_named() -> None:
    """A ``useChat`` app on its own dev server: the browser sends a preflight
    (JSON is not a simple content type), then the POST with its ``Origin``. With
    ``cors_origins`` both are answered for that origin, and the stream is whole;
    another origin, or no ``cors_origins``, gets no permission."""
    front = "http://localhost:3000"
    preflight = {
        "Origin": front,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
    }
    with serve(create_app(ScriptedSource(SCRIPT), cors_origins=[front])) as server:
        allowed = httpx.options(server.url + "/api/chat", headers=preflight, timeout=10)
        other = httpx.options(
            server.url + "/api/chat", headers={**preflight, "Origin": "http://evil.test"},
            timeout=10,
        )
        response = httpx.post(
            server.url + "/api/chat", json=CHAT, headers={"Origin": front}, timeout=10
        )
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == front
    assert "POST" in allowed.headers["access-control-allow-methods"]
    assert "content-type" in allowed.headers["access-control-allow-headers"].lower()
    assert "access-control-allow-origin" not in other.headers
    assert response.headers["access-control-allow-origin"] == front
    assert read_ui_stream(response.content).text == "Adding. The sum is 5."
    with serve(create_app(ScriptedSource(SCRIPT))) as server:
        closed = httpx.options(server.url + "/api/chat", headers=preflight, timeout=10)
    assert "access-control-allow-origin" not in closed.headers


def test_the_page_is_served_with_its_title() -> None:
    with serve(create_app(ScriptedSource([]), title="My <agent>")) as server:
        response = httpx.get(server.url + "/")
    assert response.status_code == 200
    assert "<title>My &lt;agent&gt;</title>" in response.text
    assert 'const API = "api/chat"' in response.text


def test_placeholders_in_the_page_strings_are_text_not_template() -> None:
    """The page's strings were put in one after another with str.replace, so a
    title holding ``{{config}}`` or ``{{subtitle}}`` had that placeholder filled
    in too: the page showed the config JSON or the subtitle in its title."""
    title = "{{config}} & {{subtitle}} <b>'"
    app = create_app(ScriptedSource([]), title=title, subtitle="{{title}}", suggestion="{{title}}")
    with serve(app) as server:
        page = httpx.get(server.url + "/").text
    shown = "{{config}} &amp; {{subtitle}} &lt;b&gt;&#x27;"
    assert f"<title>{shown}</title>" in page
    assert f"<h1>{shown}</h1>" in page
    assert '<div class="sub" data-testid="subtitle">{{title}}</div>' in page
    config = re.search(r'<script id="config" type="application/json">(.*?)</script>', page)
    assert config is not None and msgspec.json.decode(config[1]) == {"suggestion": "{{title}}"}
    assert page.count('<script id="config"') == 1


# --- the pump alone, on both anyio backends -------------------------------------


@pytest.mark.anyio
async def test_pump_writes_keepalives_while_the_agent_is_quiet() -> None:
    written: list[bytes] = []

    async def send(data: bytes) -> None:
        written.append(data)

    source = ScriptedSource([TextDelta(text="a"), 0.35, TextDelta(text="b")])
    await pump(source.stream("x"), EventsFramer(), send, keepalive=0.1)
    assert written.count(KEEPALIVE) >= 2
    assert [decode_event(d) for d in sse_data(b"".join(written))] == [
        TextDelta(text="a"),
        TextDelta(text="b"),
    ]


@pytest.mark.anyio
async def test_cancelling_the_pump_cancels_the_agent_and_leaves_nothing_running() -> None:
    import anyio

    written: list[bytes] = []

    async def send(data: bytes) -> None:
        written.append(data)

    source = ScriptedSource([TextDelta(text="a"), 30.0])
    with anyio.move_on_after(0.2):
        await pump(source.stream("x"), UIMessageFramer(), send, keepalive=5)
    assert source.cancelled.is_set() and not source.completed.is_set()
    chunks = [msgspec.json.decode(d) for d in sse_data(b"".join(written))]
    assert [c["type"] for c in chunks] == ["start", "start-step", "text-start", "text-delta"]


@pytest.mark.anyio
async def test_stop_ends_the_stream_properly_and_cancels_the_agent() -> None:
    """A server shutting down (``Shutdown.close()``) ends an answer in progress
    with what was made, an error saying why, ``finish`` and ``[DONE]``."""
    import anyio

    written: list[bytes] = []
    stop = anyio.Event()

    async def send(data: bytes) -> None:
        written.append(data)
        if b"text-delta" in data:
            stop.set()

    source = ScriptedSource([TurnStart(turn=1), TextDelta(text="Half an answer"), 30.0])
    with anyio.fail_after(5):
        await pump(source.stream("x"), UIMessageFramer(), send, keepalive=5, stop=stop)
    assert source.cancelled.is_set() and not source.completed.is_set()
    reader = read_ui_stream(b"".join(written))  # complete, in the SDK reader's terms
    assert reader.text == "Half an answer"
    assert reader.errors == ["the server is shutting down"]



@pytest.mark.anyio
async def test_a_client_gone_before_its_request_body_ended_is_not_a_server_error() -> None:
    """Starlette raises ``ClientDisconnect`` from the body; it escaped the endpoint
    (a traceback in the server's log for every such client)."""
    import anyio

    source = ScriptedSource(SCRIPT)
    app = create_app(source)
    incoming: list[Message] = [
        {"type": "http.request", "body": b'{"messages": [', "more_body": True},
        {"type": "http.disconnect"},
    ]

    async def receive() -> Message:
        if not incoming:
            await anyio.sleep_forever()
        return incoming.pop(0)

    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    scope: Scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/chat",
        "raw_path": b"/api/chat",
        "root_path": "",
        "query_string": b"",
        "headers": [(b"content-type", b"application/json")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8500),
    }
    with anyio.fail_after(5):
        await app(scope, receive, send)
    assert source.prompts == []  # the agent never ran
    assert sent[0]["status"] == 400
