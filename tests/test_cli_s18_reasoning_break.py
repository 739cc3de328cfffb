"""``streamtools chat`` with a model that reasons (qwen3 on Ollama, DeepSeek-R1)
wrote the answer straight after the reasoning, on the same line: dimmed on a
colour terminal, and with no colour at all (a pipe, a file, ``NO_COLOR``) one run
of text, ``…I'll answer now.It is 5.``, where the reader could not tell where
the thinking ended. Text that follows reasoning now starts on a line of its own."""

from __future__ import annotations

import io

import pytest
from chat_support import args_for, reader

from streamtools.cli.chat import build_model, chat, make_agent
from streamtools.events import ReasoningDelta, TextDelta
from streamtools.runtime.console import ConsoleRenderer
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply, Wire


def _rendered(*events: ReasoningDelta | TextDelta) -> str:
    out = io.StringIO()
    renderer = ConsoleRenderer(out, color=False)
    for event in events:
        renderer.render(event)
    return out.getvalue()


def test_text_after_reasoning_starts_a_line() -> None:
    text = _rendered(
        ReasoningDelta(text="Two and three."), ReasoningDelta(text=" I'll answer now."),
        TextDelta(text="It is"), TextDelta(text=" 5."),
    )
    assert text == "Two and three. I'll answer now.\nIt is 5."


def test_reasoning_that_ends_its_line_gets_no_blank_line() -> None:
    assert _rendered(ReasoningDelta(text="Thinking.\n"), TextDelta(text="5.")) == "Thinking.\n5."


def test_text_alone_and_text_before_reasoning_are_unchanged() -> None:
    assert _rendered(TextDelta(text="It"), TextDelta(text=" is 5.")) == "It is 5."
    assert _rendered(TextDelta(text="So "), ReasoningDelta(text="hm")) == "So hm"


@pytest.mark.anyio
@pytest.mark.parametrize("wire", ["openai", "ollama"])
async def test_a_chat_session_shows_the_answer_below_the_reasoning(
    anyio_backend: str, wire: Wire
) -> None:
    reply = Reply(reasoning="The user says hi. I'll greet back.", text="Hello!")
    async with FakeServer([reply], wire=wire) as server:
        args = args_for(server)
        out = io.StringIO()
        code = await chat(make_agent(build_model(args), args), reader(["hi\n"]), out, color=False)
    assert code == 0
    assert "I'll greet back.\nHello!" in out.getvalue()
