"""``--presence-penalty`` and ``--frequency-penalty`` for ``streamtools chat``
and ``streamtools ui``: the agents and the providers took both
(``ModelRequest.presence_penalty``, ``frequency_penalty``), but no command could
set them, so a model that repeats itself could not be tuned from the command
line. They go where ``--seed`` goes: OpenAI-compatible bodies at the top level,
Ollama's in ``options``, and not to Anthropic, whose API has neither."""

from __future__ import annotations

import argparse
import io
from typing import Any

import httpx
import pytest
from chat_support import args_for, reader
from test_ui_support import read_ui_stream, serve

from streamtools.cli import main
from streamtools.cli.chat import build_model, chat, make_agent, register
from streamtools.cli.ui import build_app
from streamtools.cli.ui import register as register_ui
from streamtools.errors import UsageError
from streamtools.testing import FakeServer

pytestmark = pytest.mark.anyio

CHAT = {"messages": [{"role": "user", "content": "hi"}]}
FLAGS = ("--presence-penalty", "0.5", "--frequency-penalty", "-1.25", "--seed", "7")


async def _sent(wire: str) -> dict[str, Any]:
    async with FakeServer(["Hi."], wire=wire) as server:  # type: ignore[arg-type]
        args = args_for(server, *FLAGS)
        out = io.StringIO()
        code = await chat(
            make_agent(build_model(args), args), reader(["hi\n"]), out, color=False, prompt=False
        )
        [body] = server.requests
    assert code == 0 and "Hi." in out.getvalue()
    sent: dict[str, Any] = body
    return sent


async def test_openai_compatible_bodies_carry_them(anyio_backend: str) -> None:
    body = await _sent("openai")
    assert body["presence_penalty"] == 0.5 and body["frequency_penalty"] == -1.25
    assert body["seed"] == 7


async def test_ollama_takes_them_in_its_options(anyio_backend: str) -> None:
    body = await _sent("ollama")
    options = body["options"]
    assert options["presence_penalty"] == 0.5 and options["frequency_penalty"] == -1.25
    assert options["seed"] == 7


async def test_anthropic_is_not_sent_what_its_api_lacks(anyio_backend: str) -> None:
    body = await _sent("anthropic")
    assert not {"presence_penalty", "frequency_penalty", "seed"} & set(body)


def test_not_given_they_are_not_sent() -> None:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["chat", "--model", "m"])
    assert args.presence_penalty is None and args.frequency_penalty is None


def test_a_penalty_that_is_not_a_number_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["chat", "--model", "m", "--presence-penalty", "nan"])
    assert "--presence-penalty" in capsys.readouterr().err


def test_ui_takes_them_for_a_live_model_only() -> None:
    parser = argparse.ArgumentParser()
    register_ui(parser.add_subparsers())
    with pytest.raises(UsageError, match="--frequency-penalty is for a live model"):
        build_app(parser.parse_args(["ui", "--frequency-penalty", "1"]))
    with FakeServer(["Hello."]) as model:
        live = ["ui", "--model", "m", "--base-url", model.base_url, *FLAGS]
        app, _ = build_app(parser.parse_args(live))
        with serve(app) as server:
            reply = httpx.post(server.url + "/api/chat", json=CHAT, timeout=30)
        [body] = model.requests
    assert read_ui_stream(reply.content).text == "Hello."
    assert body["presence_penalty"] == 0.5 and body["frequency_penalty"] == -1.25
    assert body["seed"] == 7
