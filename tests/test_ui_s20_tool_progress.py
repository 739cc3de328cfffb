"""``streamtools ui`` shows a running tool's progress (``ToolProgress``).

The UI message stream carried no progress, so a long MCP call's card said
"running…" and nothing else until its result. Each report is now a transient
``data-tool-progress`` chunk (the AI SDK's transient data parts: ``useChat``
hands them to ``onData`` and keeps them out of the message, so nothing is sent
back with the history); the chat page shows it on the call's card until the
output replaces it. Our own event stream (``/api/events``) carries the event as
``tool_progress``. Checked with the encoder, the AI SDK's own client (ai 6 and
ai 5, whose chunk schemas are strict) and the page in Chromium.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from test_ui_node import SDKS, run_client
from test_ui_support import ScriptedSource, Step, UIReader, read_ui_stream, serve, sse_data

from streamtools.events import (
    CallEnd,
    CallStart,
    Event,
    Finish,
    TextDelta,
    ToolProgress,
    ToolResult,
    TurnEnd,
    TurnStart,
    decode_event,
)
from streamtools.ui import UIMessageStreamEncoder, create_app

if TYPE_CHECKING:
    from playwright.sync_api import Browser


def _progress(progress: float, total: float | None = None, message: str | None = None) -> Event:
    return ToolProgress(
        index=0, id="call_0", name="build", progress=progress, total=total, message=message
    )


def _script(*between: Step) -> list[Step]:
    return [
        TurnStart(turn=1),
        TextDelta(text="Building."),
        CallStart(index=0, id="call_0", name="build"),
        CallEnd(index=0, id="call_0", name="build", arguments={}, raw=""),
        *between,
        ToolResult(index=0, id="call_0", name="build", content="built"),
        Finish(reason="tool_calls"),
        TurnEnd(turn=1, reason="tool_calls"),
        TurnStart(turn=2),
        TextDelta(text="Done."),
        Finish(reason="stop"),
        TurnEnd(turn=2, reason="final"),
    ]


def _chunks(steps: list[Step]) -> list[dict[str, Any]]:
    encoder = UIMessageStreamEncoder()
    events = [e for e in steps if not isinstance(e, float)]
    return [c for e in events for c in encoder.encode(e)] + encoder.close()


def test_progress_is_a_transient_data_part_of_the_running_call() -> None:
    chunks = _chunks(_script(_progress(1, 4, "compiling"), _progress(2)))
    data = [c for c in chunks if c["type"].startswith("data-")]
    assert data == [
        {
            "type": "data-tool-progress",
            "id": "call_0",
            "data": {
                "toolCallId": "call_0", "toolName": "build", "progress": 1.0, "total": 4.0,
                "message": "compiling",
            },
            "transient": True,
        },
        {
            "type": "data-tool-progress",
            "id": "call_0",
            "data": {"toolCallId": "call_0", "toolName": "build", "progress": 2.0},
            "transient": True,
        },
    ]
    kinds = [c["type"] for c in chunks]
    shown = [n for n, kind in enumerate(kinds) if kind == "data-tool-progress"]
    assert kinds.index("tool-input-available") < shown[0]
    assert shown[-1] < kinds.index("tool-output-available")


def test_progress_leaves_the_text_part_open_and_is_dropped_once_the_call_has_ended() -> None:
    events: list[Step] = [
        TurnStart(turn=1),
        CallEnd(index=0, id="call_0", name="build", arguments={}, raw=""),
        TextDelta(text="Still "),
        _progress(1),
        TextDelta(text="writing."),
        ToolResult(index=0, id="call_0", name="build", content="built"),
        _progress(2),  # late: the card has its output
        ToolProgress(index=1, id="call_9", name="ghost", progress=1),  # no such call
    ]
    chunks = _chunks(events)
    assert [c["type"] for c in chunks].count("text-start") == 1  # one text part, unbroken
    assert [c["data"]["progress"] for c in chunks if c["type"] == "data-tool-progress"] == [1.0]
    reader = UIReader()
    for chunk in chunks:
        reader.feed(chunk)
    assert reader.text == "Still writing."
    assert [d["data"]["progress"] for d in reader.data] == [1.0]
    assert all(not p["type"].startswith("data-") for p in reader.parts)


def test_both_endpoints_carry_it() -> None:
    source = ScriptedSource(_script(_progress(1, 2, "half")), _script(_progress(1, 2, "half")))
    with serve(create_app(source)) as server:
        body = {"messages": [{"role": "user", "content": "Build."}]}
        ours = httpx.post(server.url + "/api/events", json=body, timeout=30)
        ui = httpx.post(server.url + "/api/chat", json=body, timeout=30)
    events = [decode_event(d) for d in sse_data(ours.content)]
    assert [e for e in events if isinstance(e, ToolProgress)] == [_progress(1, 2, "half")]
    assert b"event: tool_progress\n" in ours.content
    reader = read_ui_stream(ui.content)
    assert [d["data"]["message"] for d in reader.data] == ["half"]


@pytest.mark.parametrize("sdk", list(SDKS))
def test_the_ai_sdk_hands_it_to_on_data_and_keeps_it_out_of_the_message(sdk: str) -> None:
    source = ScriptedSource(_script(_progress(1, 2, "half"), _progress(2, 2, "all")))
    with serve(create_app(source)) as server:
        result = run_client(server.url + "/api/chat", "Build.", sdk=sdk)
    assert result["errors"] == []
    assert [d["data"]["message"] for d in result["data"]] == ["half", "all"]
    assert all(d["transient"] for d in result["data"])
    parts = result["messages"][1]["parts"]
    assert [p["type"] for p in parts if p["type"] != "step-start"] == [
        "text", "dynamic-tool", "text"
    ]
    assert parts[2]["state"] == "output-available"


@pytest.fixture
def chromium() -> Iterator[Browser]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed")
    from test_ui_browser import CHROMIUM_ARGS

    path = shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(path):
        pytest.skip("Chromium not installed (CI installs it: apt-get install -y chromium)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


# every state the card goes through, whatever the machine's speed
OBSERVE = """() => {
  window.__seen = [];
  new MutationObserver(() => {
    const card = document.querySelector('[data-testid="tool-card"]');
    const shown = card && card.querySelector('[data-testid="tool-progress"]');
    if (shown) window.__seen.push({
      text: shown.textContent, value: shown.querySelector("progress").value,
      max: shown.querySelector("progress").max, state: card.dataset.state,
    });
  }).observe(document.body, {
    subtree: true, childList: true, characterData: true, attributes: true,
  });
}"""


def test_the_page_shows_progress_on_the_card_until_the_result(chromium: Browser) -> None:
    from playwright.sync_api import expect

    source = ScriptedSource(
        _script(_progress(1, 4, "compiling"), 0.05, _progress(3, 4, "<b>linking</b>"), 0.05)
    )
    with serve(create_app(source)) as server:
        page = chromium.new_page()
        page.goto(server.url + "/")
        page.evaluate(OBSERVE)
        page.get_by_test_id("input").fill("Build.")
        page.get_by_test_id("input").press("Enter")
        card = page.get_by_test_id("tool-card")
        expect(card).to_have_attribute("data-state", "output-available")
        expect(page.get_by_test_id("status")).to_have_attribute("data-state", "idle")
        assert card.get_by_test_id("tool-progress").count() == 0  # gone with the result
        seen: list[dict[str, Any]] = page.evaluate("window.__seen")
    shown = [(s["text"], s["value"], s["max"], s["state"]) for s in seen]
    assert ("1 / 4 · compiling", 1, 4, "input-available") in shown
    # the message is text, never markup
    assert ("3 / 4 · <b>linking</b>", 3, 4, "input-available") in shown
