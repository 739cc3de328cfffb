"""``--answer-at-max-turns`` (``streamtools chat`` and ``ui``): the last turn
``--max-turns`` allows asks the model for its answer (``Agent(answer_at_max_turns=
True)``), so the page gets an answer where it got "no final answer after 2
turns"; offline (the replay) it is a live model's option, refused."""

from __future__ import annotations

import httpx
import pytest
from test_ui_s16b_model_options import CALC, CHAT, parse
from test_ui_support import read_ui_stream, serve

from streamtools.cli.ui import build_app
from streamtools.errors import UsageError
from streamtools.runtime.repair import LAST_TURN_NOTE
from streamtools.testing import FakeServer


def test_the_last_turn_gives_the_page_an_answer() -> None:
    with FakeServer([CALC, "6*7 is 42."]) as model:
        live = ("--base-url", model.base_url, "--model", "m", "--max-turns", "2")
        app, _ = build_app(parse(*live, "--answer-at-max-turns"))
        with serve(app) as server:
            reply = httpx.post(server.url + "/api/chat", json=CHAT, timeout=30)
        last = model.requests[-1]["messages"][-1]["content"]
    read = read_ui_stream(reply.content)
    assert read.errors == []  # before: "no final answer after 2 turns"
    assert [p["text"] for p in read.parts if p["type"] == "text"][-1] == "6*7 is 42."
    assert LAST_TURN_NOTE in last


def test_offline_it_is_a_live_model_s_option() -> None:
    with pytest.raises(UsageError, match="--answer-at-max-turns is for a live model"):
        build_app(parse("--instant", "--answer-at-max-turns"))
