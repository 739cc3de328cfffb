"""The chat page keeps where a reply's reasoning came from and sends it back.

Two user turns on the page in Chromium, against an ``Agent`` whose model is a
real server on 127.0.0.1 playing DeepSeek's thinking mode, which refuses a
request whose past tool-call replies lack their ``reasoning_content``: the
page must keep the reasoning part's ``providerMetadata`` (our
``ReasoningOrigin``) and send it back with the history.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from reasoning_support import MODEL, STREAMED, Server, deepseek_check, multiply, sse, two_tool_turns
from test_ui_browser import chromium, sync_api
from test_ui_support import serve

from streamtools.providers import OpenAIChat
from streamtools.runtime import Agent
from streamtools.ui import create_app

if TYPE_CHECKING := False:
    from playwright.sync_api import Browser

__all__ = ["chromium"]  # the fixture, from test_ui_browser


@pytest.fixture
def deepseek() -> Iterator[Server]:
    replies = [*two_tool_turns(), sse([{"reasoning_content": "Half."}, {"content": "882"}], "stop")]
    with Server(replies, deepseek_check(STREAMED)) as server:
        yield server


def test_the_page_gives_deepseek_its_reasoning_back(chromium: Browser, deepseek: Server) -> None:
    provider = OpenAIChat(MODEL, base_url=deepseek.base_url, max_retries=0)
    expect = sync_api.expect
    with serve(create_app(Agent(provider, [multiply], native=True))) as server:
        page = chromium.new_page()
        page.goto(server.url + "/")
        box = page.get_by_test_id("input")
        box.fill("What is (6*7) squared?")
        box.press("Enter")
        expect(page.get_by_test_id("text-part")).to_have_text("1764")
        expect(page.get_by_test_id("status")).to_have_attribute("data-state", "idle")
        box.fill("And halved?")
        box.press("Enter")
        answers = page.locator('[data-testid="text-part"], [data-testid="error"]')
        expect(answers).to_have_count(2)  # the second answer, or the 400's error
        assert page.get_by_test_id("error").all_text_contents() == []
        expect(page.get_by_test_id("status")).to_have_attribute("data-state", "idle")
        texts = page.get_by_test_id("text-part").all_text_contents()
    assert deepseek.refused == []
    assert texts == ["1764", "882"]
    sent = [m.get("reasoning_content") for m in deepseek.bodies[3]["messages"]]
    assert sent.count(STREAMED["call_a"]) == sent.count(STREAMED["call_b"]) == 1
