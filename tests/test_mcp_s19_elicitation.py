"""A server that asks the user something mid-call (``elicitation/create``) is
answered: by the ``on_elicit`` handler given to ``mcp_tools`` (sync or async;
form mode with content, URL mode with an action), and without one by
"decline", so that the tool goes on. Before, every question got an error
("Elicitation not supported"), which failed the tool. The SDK's
``MCPServer`` over stdio (``mcp_servers/asking_server.py``), as a server of
2025 (the question sent mid-call) and of 2026-07-28 (the SDK's resolvers,
``InputRequiredResult``); the form on asyncio and trio, the rest on asyncio."""

from __future__ import annotations

import logging
import sys

import anyio
import anyio.lowlevel
import pytest
from mcp_servers.harness import HERE

from streamtools.mcp import ElicitAnswer, Elicitation, mcp_tools

pytestmark = pytest.mark.anyio

ASKING = f"{sys.executable} {HERE / 'asking_server.py'}"


async def _invoke(registry: object, name: str, arguments: dict[str, object]) -> str:
    from streamtools.tools import ToolRegistry

    assert isinstance(registry, ToolRegistry)
    found = registry.get(name)
    assert found is not None
    with anyio.fail_after(30):
        result = await found.invoke(arguments)
    assert isinstance(result, str)
    return result


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_an_async_handler_answers_the_form(era: str) -> None:
    asked: list[Elicitation] = []

    async def on_elicit(question: Elicitation) -> ElicitAnswer:
        asked.append(question)
        await anyio.lowlevel.checkpoint()
        return ElicitAnswer("accept", {"name": "Ada", "nights": 3})

    tool = "book" if era == "legacy" else "reserve"
    command = f"{ASKING} legacy" if era == "legacy" else ASKING
    async with mcp_tools(command, on_elicit=on_elicit) as registry:
        said = await _invoke(registry, tool, {"room": "12"})
    assert said == "booked 12 for Ada, 3 nights"
    [question] = asked
    assert question.mode == "form"
    assert question.message == "Who is room 12 for?"
    assert question.server == command
    assert question.schema is not None
    assert question.schema["required"] == ["name"]
    assert set(question.schema["properties"]) == {"name", "nights"}


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the trio run is the form test's
async def test_a_sync_handler_answers_in_a_thread_and_url_mode_has_no_content() -> None:
    import threading

    main = threading.get_ident()
    threads: list[int] = []
    asked: list[Elicitation] = []

    def on_elicit(question: Elicitation) -> ElicitAnswer:
        threads.append(threading.get_ident())
        asked.append(question)
        if question.mode == "url":
            return ElicitAnswer("accept", {"ignored": "yes"})
        return ElicitAnswer("decline")

    async with mcp_tools(f"{ASKING} legacy", on_elicit=on_elicit) as registry:
        assert await _invoke(registry, "book", {"room": "7"}) == "not booked: decline"
        assert await _invoke(registry, "login", {}) == "login: accept"
    assert [q.mode for q in asked] == ["form", "url"]
    assert asked[1].url == "https://example.com/login"
    assert asked[1].elicitation_id == "e-1"
    assert threads and main not in threads


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the trio run is the form test's
async def test_a_failing_handler_is_logged_and_answered_cancel(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def on_elicit(question: Elicitation) -> ElicitAnswer:
        raise RuntimeError("no terminal")

    with caplog.at_level(logging.ERROR, logger="streamtools.mcp"):
        async with mcp_tools(f"{ASKING} legacy", on_elicit=on_elicit) as registry:
            assert await _invoke(registry, "book", {"room": "3"}) == "not booked: cancel"
    assert any("on_elicit handler failed" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the trio run is the form test's
async def test_without_a_handler_a_question_is_declined_and_the_tool_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="streamtools.mcp"):
        async with mcp_tools(f"{ASKING} legacy") as registry:
            assert await _invoke(registry, "book", {"room": "5"}) == "not booked: decline"
            assert await _invoke(registry, "login", {}) == "login: decline"
    warned = [r.getMessage() for r in caplog.records if "elicitation" in r.getMessage()]
    assert len(warned) == 1  # once per session
    assert "on_elicit" in warned[0]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the trio run is the form test's
async def test_a_slow_answer_does_not_run_out_the_calls_timeout() -> None:
    """The user takes longer than ``call_timeout`` to answer: the call was cut
    at it, with the answer on its way."""

    async def on_elicit(question: Elicitation) -> ElicitAnswer:
        await anyio.sleep(2.5)
        return ElicitAnswer("accept", {"name": "Bo"})

    async with mcp_tools(
        f"{ASKING} legacy", on_elicit=on_elicit, call_timeout=1.0
    ) as registry:
        assert await _invoke(registry, "book", {"room": "9"}) == "booked 9 for Bo, 1 nights"
