"""The chat page in a real browser: Debian's Chromium, headless, via Playwright.

One conversation: the first message streams text, a folded reasoning block,
a tool card whose arguments fill in live and then show the result, and an
error card for a failing tool; the second message is stopped mid-stream with
the stop button, and the server must see the disconnect and cancel the
agent. A screenshot goes to ``test-artifacts/ui-chat.png``.

Playwright drives the system Chromium (``executable_path``); its own browser
download (``playwright install``) is never used.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from test_ui_support import ScriptedSource, Step, serve

from streamtools.events import (
    ArgsDelta,
    CallEnd,
    CallStart,
    Event,
    Final,
    Finish,
    ReasoningDelta,
    TextDelta,
    ToolFailed,
    ToolResult,
    TurnEnd,
    TurnStart,
)
from streamtools.ui import create_app

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright not installed (pip install playwright)"
)
if TYPE_CHECKING:
    from playwright.sync_api import Browser

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

P = 0.12  # pause between streamed pieces: slow enough to watch things fill in

FIRST: list[Step] = [
    TurnStart(turn=1),
    ReasoningDelta(text="The user wants the weather; "),
    ReasoningDelta(text="call the weather tool, and the news tool for context."),
    P,
    TextDelta(text="Let me "),
    P,
    TextDelta(text="check the weather "),
    P,
    TextDelta(text="in Paris."),
    P,
    CallStart(index=0, id="call_0", name="weather.current"),
    P,
    ArgsDelta(index=0, id="call_0", delta='{"city": "Pa'),
    P * 3,
    ArgsDelta(index=0, id="call_0", delta='ris", "units": "metric"}'),
    P,
    CallEnd(
        index=0,
        id="call_0",
        name="weather.current",
        arguments={"city": "Paris", "units": "metric"},
        raw="",
    ),
    CallStart(index=1, id="call_1", name="news.headlines"),
    ArgsDelta(index=1, id="call_1", delta='{"topic": "Paris weather"}'),
    CallEnd(
        index=1, id="call_1", name="news.headlines", arguments={"topic": "Paris weather"}, raw=""
    ),
    Finish(reason="stop"),
    P * 3,
    ToolResult(
        index=0,
        id="call_0",
        name="weather.current",
        content='{"temperature": 18, "sky": "light rain", "wind_kmh": 12}',
    ),
    ToolFailed(
        index=1,
        id="call_1",
        name="news.headlines",
        kind="timeout",
        message="news.headlines timed out after 30 s",
    ),
    TurnEnd(turn=1, reason="tool_calls"),
    TurnStart(turn=2),
    TextDelta(text="It is 18 °C in Paris with light rain "),
    P,
    TextDelta(text="and a light wind (12 km/h). Take an umbrella."),
    Finish(reason="stop"),
    TurnEnd(turn=2, reason="final"),
    Final(text="…", turns=2),
]

SECOND: list[Step] = [
    TurnStart(turn=1),
    TextDelta(text="Here is a long story. Once upon a time"),
    CallStart(index=0, id="call_0", name="story.next_page"),
    ArgsDelta(index=0, id="call_0", delta='{"page": 2}'),
    CallEnd(index=0, id="call_0", name="story.next_page", arguments={"page": 2}, raw=""),
    60.0,  # the tool "runs"; the stop button ends it long before this
    TextDelta(text=" THE END"),
]


OBSERVE = """() => {
  window.__seen = [];
  const q = (sel) => document.querySelector(sel);
  new MutationObserver(() => {
    const card = q('[data-testid="tool-card"]'), text = q('[data-testid="text-part"]');
    window.__seen.push({
      status: q('[data-testid="status"]').dataset.state,
      text: text ? text.textContent : "",
      card: card ? card.dataset.state : "",
      args: card ? card.querySelector(".tool-args").textContent : "",
    });
  }).observe(document.body, {
    subtree: true, childList: true, characterData: true, attributes: true,
  });
}"""


@pytest.fixture
def chromium() -> Iterator[Browser]:
    path = shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(path):
        pytest.skip("Chromium not installed (CI installs it: apt-get install -y chromium)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def test_chat_page_streams_tools_and_stops(chromium: Browser) -> None:
    expect = sync_api.expect
    source = ScriptedSource(FIRST, SECOND)
    with serve(create_app(source, title="streamtools demo")) as server:
        page = chromium.new_page(viewport={"width": 960, "height": 1080})
        page.goto(server.url + "/")
        # Record every DOM state the page goes through, so that "partial" is
        # checked on what was really shown, whatever the machine's speed.
        page.evaluate(OBSERVE)
        page.get_by_test_id("input").fill("What's the weather in Paris?")
        page.get_by_test_id("input").press("Enter")
        expect(page.get_by_test_id("stop")).to_be_visible()
        card = page.get_by_test_id("tool-card").first
        expect(card).to_contain_text("weather.current")
        # Then the result, and an error card for the failing tool.
        expect(card).to_have_attribute("data-state", "output-available")
        expect(card.get_by_test_id("tool-args")).to_contain_text('"units": "metric"')
        expect(card.get_by_test_id("tool-result")).to_contain_text('"temperature": 18')
        failed = page.get_by_test_id("tool-card").nth(1)
        expect(failed).to_have_attribute("data-state", "output-error")
        expect(failed.get_by_test_id("tool-error")).to_have_text(
            "news.headlines timed out after 30 s"
        )
        expect(page.get_by_test_id("text-part").last).to_contain_text("Take an umbrella.")
        expect(page.get_by_test_id("status")).to_have_attribute("data-state", "idle")
        reasoning = page.locator("details.reasoning")
        expect(reasoning).to_contain_text("Reasoning")
        assert reasoning.get_attribute("open") is None  # folded
        assert source.completed.is_set()
        seen: list[dict[str, str]] = page.evaluate("window.__seen")
        # Text streamed in: shown partially while the response was running.
        assert any(
            s["status"] == "streaming"
            and s["text"].startswith("Let me")
            and "Paris" not in s["text"]
            for s in seen
        )
        # The card's arguments filled in live, before the call was complete.
        assert any(
            s["card"] == "input-streaming" and '"Pa' in s["args"] and "metric" not in s["args"]
            for s in seen
        )

        # Second message: stop it mid-stream; the server must cancel the agent.
        page.get_by_test_id("input").fill("Tell me a long story.")
        page.get_by_test_id("send").click()
        expect(page.get_by_test_id("text-part").last).to_contain_text("Once upon a time")
        running = page.get_by_test_id("tool-card").nth(2)
        expect(running).to_have_attribute("data-state", "input-available")
        page.get_by_test_id("stop").click()
        expect(page.get_by_test_id("stopped")).to_be_visible()
        expect(page.get_by_test_id("status")).to_have_attribute("data-state", "stopped")
        # The card of the tool that was running does not stay "running" forever.
        expect(running).to_have_attribute("data-state", "output-error")
        expect(running.get_by_test_id("tool-error")).to_have_text(
            "stopped before it finished: the answer was stopped"
        )
        assert source.cancelled.wait(10), "the server did not cancel the agent after stop"
        assert "THE END" not in page.content()

        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "ui-chat.png"), full_page=True)


def test_the_offline_demo_runs_in_the_page(chromium: Browser) -> None:
    """`streamtools ui` with no options: the demo recording, live tools, no network."""
    from test_ui_cli import parse

    from streamtools.cli.ui import build_source

    source, subtitle, suggestion = build_source(parse("--speed", "8"))
    expect = sync_api.expect
    with serve(create_app(source, subtitle=subtitle, suggestion=suggestion)) as server:
        page = chromium.new_page(viewport={"width": 960, "height": 1000})
        page.goto(server.url + "/")
        expect(page.get_by_test_id("subtitle")).to_contain_text("offline")
        page.get_by_test_id("suggestion").click()
        expect(page.get_by_test_id("user-message")).to_have_text(str(suggestion))
        expect(page.get_by_test_id("status")).to_have_attribute(
            "data-state", "idle", timeout=60_000
        )
        cards = page.get_by_test_id("tool-card")
        names = cards.locator(".name").all_inner_texts()
        assert {"calculator", "clock"} <= set(names), names
        for i in range(cards.count()):
            expect(cards.nth(i)).to_have_attribute("data-state", "output-available")
        assert page.get_by_test_id("error").count() == 0
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "ui-demo.png"), full_page=True)


def test_a_stream_cut_off_without_done_is_an_error_and_ends_its_tool_cards(
    chromium: Browser,
) -> None:
    """A server that goes away mid-answer: the stream ends without ``[DONE]``."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, Response
    from starlette.routing import Route

    from streamtools.ui import UIMessageFramer, chat_page

    framer = UIMessageFramer()
    events: list[Event] = [
        TurnStart(turn=1),
        TextDelta(text="Looking it up."),
        CallStart(index=0, id="call_0", name="lookup"),
        CallEnd(index=0, id="call_0", name="lookup", arguments={}, raw=""),
    ]
    cut = framer.open() + b"".join(framer.frame(e) for e in events)  # no finish, no [DONE]

    async def index(request: Request) -> Response:
        return HTMLResponse(chat_page().replace("{{config}}", "{}"))

    async def chat(request: Request) -> Response:
        return Response(cut, media_type="text/event-stream")

    app = Starlette(routes=[Route("/", index), Route("/api/chat", chat, methods=["POST"])])
    expect = sync_api.expect
    with serve(app) as server:
        page = chromium.new_page()
        page.goto(server.url + "/")
        page.get_by_test_id("input").fill("Look it up.")
        page.get_by_test_id("input").press("Enter")
        expect(page.get_by_test_id("status")).to_have_attribute("data-state", "error")
        expect(page.get_by_test_id("error")).to_have_text(
            "the connection closed before the answer was complete"
        )
        card = page.get_by_test_id("tool-card")
        expect(card).to_have_attribute("data-state", "output-error")
        expect(card.get_by_test_id("tool-error")).to_contain_text("stopped before it finished")


def test_enter_that_confirms_an_input_methods_candidate_does_not_send(chromium: Browser) -> None:
    """With a Japanese or Chinese input method, Enter picks the composed text; the
    page took it for "send" and sent the half-typed message."""
    source = ScriptedSource([TurnStart(turn=1), TextDelta(text="ok"), Finish(reason="stop")])
    expect = sync_api.expect
    with serve(create_app(source)) as server:
        page = chromium.new_page()
        page.goto(server.url + "/")
        page.get_by_test_id("input").fill("とうきょう")
        page.get_by_test_id("input").dispatch_event(
            "keydown", {"key": "Enter", "keyCode": 229, "isComposing": True}
        )
        page.get_by_test_id("input").fill("東京")
        page.get_by_test_id("input").press("Enter")  # composition over: this one sends
        expect(page.get_by_test_id("user-message")).to_have_text(["東京"])
        expect(page.get_by_test_id("status")).to_have_attribute("data-state", "idle")
    assert len(source.prompts) == 1


COUNT_WORK = """() => {
  window.__written = 0; window.__measured = 0; window.__frames = 0; window.__scrolls = 0;
  const count = (proto, prop) => {
    const d = Object.getOwnPropertyDescriptor(proto, prop);
    Object.defineProperty(proto, prop, {
      ...d, set(v) { window.__written += String(v).length; d.set.call(this, v); },
    });
  };
  count(Element.prototype, "innerHTML");
  count(Node.prototype, "textContent");
  const append = Element.prototype.append;
  Element.prototype.append = function (...items) {
    for (const i of items) if (typeof i === "string") window.__written += i.length;
    return append.apply(this, items);
  };
  const height = Object.getOwnPropertyDescriptor(Element.prototype, "scrollHeight");
  Object.defineProperty(Element.prototype, "scrollHeight", {
    ...height, get() { window.__measured += 1; return height.get.call(this); },
  });
  const tick = () => { window.__frames += 1; requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
  addEventListener("scroll", () => { window.__scrolls += 1; }, true);
}"""


def test_a_long_answer_costs_work_in_proportion_to_its_length(chromium: Browser) -> None:
    """Each delta rewrote its whole text part (and reasoning, and a card's
    arguments), and measured the page to follow it down: time in the square of the
    answer's length, half a minute for 2000 deltas of a reply with `code` in it.
    Counted here: characters written into the page, and page measurements (at most
    one per frame), not time."""
    pieces = ["Call `f(", "x)` with **ca", "re**, then "]  # markup cut across deltas
    text = [TextDelta(text=pieces[i % 3] + ("\n" if i % 9 == 8 else "")) for i in range(1200)]
    args = [ArgsDelta(index=0, id="c", delta='"ab'[i % 3]) for i in range(300)]
    script: list[Step] = [
        TurnStart(turn=1),
        *[ReasoningDelta(text="thinking ") for _ in range(300)],
        TextDelta(text="\n \n"),  # blank lines before the text are not shown
        *text,
        TextDelta(text="\n\n  "),  # nor whitespace after it
        CallStart(index=0, id="c", name="write"),
        *args,
        Finish(reason="stop"),
    ]
    shown = "".join(e.text for e in text).rstrip()
    size = len(shown) + 300 * len("thinking ") + len(args)
    source = ScriptedSource(script)
    with serve(create_app(source)) as server:
        page = chromium.new_page()
        page.add_init_script(f"({COUNT_WORK})()")
        page.goto(server.url + "/")
        page.get_by_test_id("input").fill("A long one.")
        page.get_by_test_id("input").press("Enter")
        sync_api.expect(page.get_by_test_id("status")).to_have_attribute(
            "data-state", "idle", timeout=60_000
        )
        part = page.get_by_test_id("text-part")
        assert (part.text_content() or "").rstrip() == shown.replace("`", "").replace("**", "")
        assert part.locator("code").count() == 400 and part.locator("strong").count() == 400
        work = page.evaluate("({w: __written, m: __measured, f: __frames, s: __scrolls})")
    # each delta rewrites at most the line in progress (9 deltas, with its markup);
    # rewriting the whole part each time wrote about 100 times the answer here
    assert work["w"] < 12 * size, work
    assert work["m"] <= work["f"] + 2 * work["s"] + 10, work


def test_a_failed_request_leaves_no_unanswered_question_in_the_conversation(
    chromium: Browser,
) -> None:
    """After a 400 or a network error the page kept the question with no answer,
    so the next request carried two user messages in a row. The failed question
    now leaves the conversation; its bubble stays, marked not sent, with the
    error and a Retry button that sends it again."""
    import json

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Route

    from streamtools.ui import UIMessageFramer, chat_page

    sent: list[list[tuple[str, str]]] = []  # each request's (role, text) messages

    async def index(request: Request) -> Response:
        return HTMLResponse(chat_page().replace("{{config}}", "{}"))

    async def chat(request: Request) -> Response:
        body = json.loads(await request.body())
        sent.append([
            (m["role"], "".join(p.get("text", "") for p in m["parts"] if p["type"] == "text"))
            for m in body["messages"]
        ])
        if len(sent) == 1:
            return JSONResponse({"error": {"message": "bad request body"}}, status_code=400)
        framer = UIMessageFramer()
        answer: list[Event] = [TextDelta(text=f"Answer {len(sent)}."), Finish(reason="stop")]
        stream = framer.open() + b"".join(framer.frame(e) for e in answer) + framer.close()
        return Response(stream, media_type="text/event-stream")

    app = Starlette(routes=[Route("/", index), Route("/api/chat", chat, methods=["POST"])])
    expect = sync_api.expect
    with serve(app) as server:
        page = chromium.new_page()
        page.goto(server.url + "/")
        box = page.get_by_test_id("input")
        box.fill("First?")
        box.press("Enter")
        expect(page.get_by_test_id("error")).to_have_text("bad request body")
        expect(page.get_by_test_id("retry")).to_have_count(1)
        expect(page.get_by_test_id("user-message").first).to_have_class("msg user unsent")

        page.route("**/api/chat", lambda route: route.abort())  # the network fails
        box.fill("Second?")
        box.press("Enter")
        expect(page.get_by_test_id("retry")).to_have_count(2)
        expect(page.get_by_test_id("error")).to_have_count(2)
        page.unroute("**/api/chat")

        page.get_by_test_id("retry").nth(1).click()  # send "Second?" again
        expect(page.get_by_test_id("text-part")).to_have_text("Answer 2.")
        expect(page.get_by_test_id("status")).to_have_attribute("data-state", "idle")
        expect(page.get_by_test_id("retry")).to_have_count(1)  # First's is still there
        box.fill("Third?")
        box.press("Enter")
        expect(page.get_by_test_id("text-part").nth(1)).to_have_text("Answer 3.")
    assert sent == [
        [("user", "First?")],
        [("user", "Second?")],
        [("user", "Second?"), ("assistant", "Answer 2."), ("user", "Third?")],
    ]


def test_one_long_line_costs_work_in_proportion_to_its_length(chromium: Browser) -> None:
    """A reply with no line break (a model that writes one paragraph, a minified
    blob) rewrote its whole line in progress per delta: time in the square of its
    length (23 million characters written for this 17 000). Each delta is now
    appended once, markup included, read as Markdown reads it (where the two
    regular expressions made bold inside code)."""
    pieces = ["Call `f(", "x)` with **ca", "re**, then ", "a `` b ** c * d ", "***e** `g "]
    text = [TextDelta(text=pieces[i % 5]) for i in range(1500)]
    shown = "".join(e.text for e in text).rstrip()
    script: list[Step] = [TurnStart(turn=1), *text, Finish(reason="stop")]
    with serve(create_app(ScriptedSource(script))) as server:
        page = chromium.new_page()
        page.add_init_script(f"({COUNT_WORK})()")
        page.goto(server.url + "/")
        page.get_by_test_id("input").fill("One long line.")
        page.get_by_test_id("input").press("Enter")
        sync_api.expect(page.get_by_test_id("status")).to_have_attribute(
            "data-state", "idle", timeout=60_000
        )
        part = page.get_by_test_id("text-part")
        written = page.evaluate("__written")
        html = part.inner_html()
    # Markdown's reading: a code span's text is literal (no bold inside it)
    unit = (
        "Call <code>f(x)</code> with <strong>care</strong>, then a `<code> b ** c * d ***e** "
        "</code>g "
    )
    assert html.count("<code>") == 600 and html.count("<strong>") == 300
    assert re.sub(r"</?span>", "", html).startswith(unit * 3)
    assert written < 4 * len(shown), written


def test_a_chunk_arriving_in_many_reads_is_scanned_once(chromium: Browser) -> None:
    """A big chunk (a tool's long result) comes in many network reads; the page
    looked for the end of the SSE message from the start of its buffer at each
    read, work in the square of the chunk's size. Counted: characters searched."""
    import anyio
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, Response, StreamingResponse
    from starlette.routing import Route

    from streamtools.ui import UIMessageFramer, chat_page

    big = "x" * 400_000
    answer: list[Event] = [
        CallEnd(index=0, id="c", name="read_file", arguments={}, raw=""),
        ToolResult(index=0, id="c", name="read_file", content=big),
        TextDelta(text="Read it."),
        Finish(reason="stop"),
    ]
    framer = UIMessageFramer()
    body = framer.open() + b"".join(framer.frame(e) for e in answer) + framer.close()

    async def index(request: Request) -> Response:
        return HTMLResponse(chat_page().replace("{{config}}", "{}"))

    # cut every 1000 bytes (one read each, as a slow network gives), and between
    # the two newlines that end each message
    ends = {i + 1 for i in range(len(body)) if body[i : i + 2] == b"\n\n"}
    cuts = sorted({*range(0, len(body), 1000), *ends, len(body)})

    async def chat(request: Request) -> Response:
        async def pieces() -> AsyncIterator[bytes]:
            for start, end in zip(cuts, cuts[1:], strict=False):
                yield body[start:end]
                await anyio.sleep(0.001)

        return StreamingResponse(pieces(), media_type="text/event-stream")

    count_scans = """() => {
      window.__scanned = 0;
      const indexOf = String.prototype.indexOf;
      String.prototype.indexOf = function (s, from) {
        const found = indexOf.call(this, s, from);
        window.__scanned += (found < 0 ? this.length : found + s.length) - (from || 0);
        return found;
      };
    }"""
    app = Starlette(routes=[Route("/", index), Route("/api/chat", chat, methods=["POST"])])
    with serve(app) as server:
        page = chromium.new_page()
        page.add_init_script(f"({count_scans})()")
        page.goto(server.url + "/")
        page.get_by_test_id("input").fill("Read the file.")
        page.get_by_test_id("input").press("Enter")
        sync_api.expect(page.get_by_test_id("text-part")).to_have_text("Read it.", timeout=60_000)
        # [DONE] was read, though its message's end came in two reads
        sync_api.expect(page.get_by_test_id("status")).to_have_attribute("data-state", "idle")
        assert len(page.get_by_test_id("tool-result").text_content() or "") == len(big)
        scanned = page.evaluate("__scanned")
    assert scanned < 4 * len(body), scanned


def test_a_chunk_the_page_cannot_read_ends_the_request(chromium: Browser) -> None:
    """A chunk that is not JSON (a proxy's mangling) showed an error, but the page
    never aborted the request: the server kept streaming and its agent kept
    running, with nobody reading."""
    import threading

    import anyio
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, Response, StreamingResponse
    from starlette.routing import Route

    from streamtools.ui import chat_page

    ended = threading.Event()

    async def index(request: Request) -> Response:
        return HTMLResponse(chat_page().replace("{{config}}", "{}"))

    async def chat(request: Request) -> Response:
        async def pieces() -> AsyncIterator[bytes]:
            try:
                yield b'data: {"type":"start"}\n\ndata: {not json\n\n'
                for _ in range(600):  # an answer still going (60 s), as an agent's would
                    await anyio.sleep(0.1)
                    yield b": keep-alive\n\n"
            finally:
                ended.set()

        return StreamingResponse(pieces(), media_type="text/event-stream")

    app = Starlette(routes=[Route("/", index), Route("/api/chat", chat, methods=["POST"])])
    with serve(app) as server:
        page = chromium.new_page()
        page.goto(server.url + "/")
        page.get_by_test_id("input").fill("Hello?")
        page.get_by_test_id("input").press("Enter")
        sync_api.expect(page.get_by_test_id("status")).to_have_attribute("data-state", "error")
        assert ended.wait(20)  # bounds the wait; the stream itself would last 60 s
