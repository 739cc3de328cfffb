"""``streamtools ui`` takes ``streamtools chat``'s model options.

A user who had chat working (``--provider ollama``, ``--api-key``, sampling,
``--max-turns``, ``--timeout``, ``--hybrid`` …) could not start the page the
same way: ui knew only an OpenAI-compatible ``--base-url``/``--model`` and a
few flags, and refused the rest as unknown arguments."""

from __future__ import annotations

import argparse
from typing import Any

import httpx
import pytest
from test_ui_support import read_ui_stream, serve

from streamtools.cli import chat as chat_cli
from streamtools.cli import ui as ui_cli
from streamtools.cli.model_options import LIVE_ONLY
from streamtools.cli.ui import build_app
from streamtools.errors import UsageError
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import FakeCall, Reply

CHAT = {"messages": [{"role": "user", "content": "what is 6*7?"}]}
CALC = '<am:tool_call name="calculator"><expression>6*7</expression></am:tool_call>'


def parser_of(module: Any) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    module.register(subparsers)
    found: argparse.ArgumentParser = next(iter(subparsers.choices.values()))
    return found


def parse(*argv: str) -> argparse.Namespace:
    return parser_of(ui_cli).parse_args(list(argv))


def test_chat_s_model_options_reach_an_ollama_server_from_the_page() -> None:
    with FakeServer(["Forty-two."], wire="ollama") as model:
        args = parse(
            "--provider", "ollama", "--base-url", model.base_url, "--model", "qwen3:8b",
            "--api-key", "k-123", "--temperature", "0.25", "--top-p", "0.5", "--top-k", "7",
            "--seed", "11", "--max-tokens", "64", "--timeout", "30",
            "--extra-body", '{"options": {"num_ctx": 16384}}', "--system", "Be brief.",
        )
        app, subtitle = build_app(args)
        with serve(app) as server:
            reply = httpx.post(server.url + "/api/chat", json=CHAT, timeout=30)
        [received] = model.received
        assert subtitle == f"qwen3:8b at {model.base_url}, am_xml dialect"
    assert read_ui_stream(reply.content).text == "Forty-two."
    assert received.path == "/api/chat"  # Ollama's native API, not /v1/chat/completions
    assert received.headers["authorization"] == "Bearer k-123"
    body = received.body
    assert body["model"] == "qwen3:8b"
    options = body["options"]
    assert options["num_ctx"] == 16384  # --extra-body, merged one level deep
    assert (options["temperature"], options["top_p"], options["top_k"]) == (0.25, 0.5, 7)
    assert (options["seed"], options["num_predict"]) == (11, 64)
    assert body["messages"][0]["content"].startswith("Be brief.")


def test_max_turns_bounds_an_answer_on_the_page() -> None:
    with FakeServer([CALC, CALC, "never asked"]) as model:
        live = ("--base-url", model.base_url, "--model", "m")
        app, _ = build_app(parse(*live, "--max-turns", "2"))
        with serve(app) as server:
            reply = httpx.post(server.url + "/api/chat", json=CHAT, timeout=30)
        asked = len(model.requests)
    [error] = read_ui_stream(reply.content).errors
    assert asked == 2
    assert "2 turns" in error


def test_hybrid_picks_tools_natively_then_works_in_the_dialect() -> None:
    select = Reply(calls=(FakeCall(name="select_tools", arguments={"names": ["calculator"]}),))
    with FakeServer([select, CALC, "It is 42."]) as model:
        app, subtitle = build_app(parse("--base-url", model.base_url, "--model", "m", "--hybrid"))
        with serve(app) as server:
            reply = httpx.post(server.url + "/api/chat", json=CHAT, timeout=30)
        first = model.requests[0]
    reader = read_ui_stream(reply.content)
    assert [t["function"]["name"] for t in first["tools"]] == ["select_tools"]
    assert reader.errors == [] and reader.text.endswith("It is 42.")
    [card] = reader.tool_parts
    assert card["output"] == "42"
    assert subtitle.endswith("am_xml dialect, tools picked natively")


def test_the_system_prompt_defaults_to_chat_s_with_the_example_tools() -> None:
    with FakeServer(["Hi."]) as model:
        app, _ = build_app(parse("--base-url", model.base_url, "--model", "m"))
        with serve(app) as server:
            httpx.post(server.url + "/api/chat", json=CHAT, timeout=30)
        [body] = model.requests
    assert body["messages"][0]["content"].startswith(chat_cli.SYSTEM)


def test_the_shared_options_are_the_same_in_both_commands() -> None:
    """Same flags, help, types, choices and defaults (ui's may be for either mode)."""

    def options(module: Any) -> dict[str, tuple[Any, ...]]:
        return {
            flag: (action.dest, action.help, getattr(action.type, "__qualname__", None),
                   action.choices, action.default)
            for action in parser_of(module)._actions
            for flag in action.option_strings
        }

    chat, ui = options(chat_cli), options(ui_cli)
    for name in LIVE_ONLY:
        flag = "--" + name.replace("_", "-")
        assert flag in ui, flag
        if name != "system":  # the default prompt differs, said in ui's help
            assert ui[flag] == chat[flag], flag
    # chat's own: a recording of the session, and its terminal output (colour, and
    # the answer alone for a pipe)
    chat_only = {"--record", "--color", "--answer-only", "--no-answer-only"}
    assert set(chat) - set(ui) == chat_only


@pytest.mark.parametrize(
    "argv",
    [
        ("--temperature", "0.2"), ("--provider", "ollama"), ("--api-key", "k"),
        ("--hybrid",), ("--max-turns", "3"), ("--timeout", "9"), ("--max-tokens", "5"),
        ("--extra-body", "{}"), ("--think-open",), ("--base-url", "http://127.0.0.1:9/v1"),
    ],
)
def test_a_live_model_s_option_offline_is_a_usage_error(argv: tuple[str, ...]) -> None:
    with pytest.raises(UsageError) as info:
        build_app(parse("--instant", *argv))
    assert str(info.value) == f"{argv[0]} is for a live model (--model)"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--native", "--hybrid"), "--native and --hybrid exclude each other"),
    ],
)
def test_options_that_exclude_each_other_are_refused_as_in_chat(
    argv: tuple[str, ...], message: str
) -> None:
    with pytest.raises(UsageError) as info:
        build_app(parse("--base-url", "http://127.0.0.1:9/v1", "--model", "m", *argv))
    assert str(info.value) == message
