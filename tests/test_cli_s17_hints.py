"""``streamtools chat``: a failed exchange whose cause is plain says what to do.

The error alone (``cannot connect before a response (…): All connection
attempts failed``, ``answered HTTP 404: …``) left a new user to find the
README's "When something goes wrong" table; the fix it names (start the
server, ``/v1`` in ``--base-url``, ``--api-key``, ``--max-turns``, another
``--dialect``) now follows on a ``hint:`` line of stderr."""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys

from streamtools.cli import _build_parser
from streamtools.cli.model_options import advice
from streamtools.errors import ProviderError, RepairExhausted
from streamtools.testing import FakeServer, Reply

KEYS = ("STREAMTOOLS_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "ANTHROPIC_API_KEY")


def run_chat(*options: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "streamtools", "chat", "--color", "never", "--model", "m"]
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    return subprocess.run(
        [*argv, "--timeout", "30", *options, "what is 2 + 3?"],
        capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL,
    )


def hints(proc: subprocess.CompletedProcess[str]) -> list[str]:
    assert proc.returncode == 1, proc.stderr
    return [line for line in proc.stderr.splitlines() if line.startswith("hint: ")]


def test_nothing_listening_says_to_start_the_server() -> None:
    with socket.socket() as s:  # a port nothing listens on once this closes
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    proc = run_chat("--base-url", url)
    assert "error: cannot connect" in proc.stderr
    said = (
        f"hint: nothing answers at {url}: start the server (one still loading its model "
        "refuses connections: --connect-wait SECONDS), or correct --base-url"
    )
    assert hints(proc) == [said]


def test_a_base_url_without_v1_says_to_add_it() -> None:
    with FakeServer(["hi"], wire="ollama") as server:  # no /chat/completions there
        proc = run_chat("--base-url", server.base_url)
    [hint] = hints(proc)
    assert "an OpenAI-compatible --base-url ends in /v1" in hint
    assert "--provider ollama" in hint


def test_ollama_s_native_api_with_v1_says_to_drop_it() -> None:
    with FakeServer(["hi"]) as server:
        proc = run_chat("--provider", "ollama", "--base-url", server.base_url)
    [hint] = hints(proc)
    assert hint.endswith("--base-url is the server's root, no /v1")


def test_an_unknown_model_says_so_not_the_path() -> None:
    body = '{"error": {"message": "model \\"m\\" not found, try pulling it first"}}'
    with FakeServer([Reply(status=404, body=body)]) as server:
        proc = run_chat("--base-url", server.base_url)
    assert hints(proc) == ["hint: --model m: the server may have no model of that name"]


def test_a_refused_key_names_the_ways_to_give_one() -> None:
    with FakeServer([Reply(status=401, body='{"error": {"message": "no key"}}')]) as server:
        proc = run_chat("--base-url", server.base_url)
    [hint] = hints(proc)
    assert hint.startswith("hint: the server wants an API key: --api-key KEY or --api-key-env")
    assert "STREAMTOOLS_API_KEY, OPENAI_API_KEY that is set" in hint  # (OpenRouter's: its host)
    with FakeServer([Reply(status=401, body='{"error": {"message": "bad key"}}')]) as server:
        proc = run_chat("--base-url", server.base_url, "--api-key", "sk-wrong")
    [hint] = hints(proc)
    assert hint.startswith("hint: the server refused the key it was given")


def test_the_turn_budget_says_max_turns() -> None:
    call = '<am:tool_call name="calculator"><expression>2+3</expression></am:tool_call>'
    with FakeServer([call, call]) as server:
        proc = run_chat("--base-url", server.base_url, "--max-turns", "1")
    assert "error: no final answer after 1 turn" in proc.stderr
    [hint] = hints(proc)
    assert "--max-turns N" in hint


def test_calls_that_stay_broken_suggest_another_dialect() -> None:
    broken = '<am:tool_call name="calculator"><expression>2+3</am:tool_call>'
    with FakeServer([broken] * 3) as server:
        proc = run_chat("--base-url", server.base_url)
    assert "error: the model's tool calls still failed" in proc.stderr
    [hint] = hints(proc)
    assert "another --dialect" in hint


def test_an_error_with_no_known_remedy_has_no_hint() -> None:
    with FakeServer([Reply(status=418, body='{"error": {"message": "teapot"}}')]) as server:
        proc = run_chat("--base-url", server.base_url)
    assert "teapot" in proc.stderr
    assert hints(proc) == []


def _args(*argv: str) -> argparse.Namespace:
    full = ["chat", "--model", "qwen3:8b", *argv]
    return _build_parser(full).parse_args(full)


def test_no_base_url_is_the_hosted_api_and_the_hint_says_so() -> None:
    """``streamtools chat --model qwen3:8b`` without ``--base-url`` talks to
    OpenAI's API: a user who meant a local server got a 401 (or, offline, no
    connection) and a hint about keys only."""
    refused = ProviderError("OpenAI-compatible server answered HTTP 401: no key", status=401)
    hint = advice(refused, _args())
    assert hint is not None and hint.endswith(
        "for a local server, give its --base-url "
        "(https://api.openai.com/v1 is --provider openai's default)"
    )
    offline = ProviderError("cannot connect before a response (https://api.openai.com/v1/…): x")
    hint = advice(offline, _args())
    assert hint is not None and hint.startswith("cannot reach https://api.openai.com/v1")
    # a --base-url given, or Ollama's local default: no such word
    for args in (_args("--base-url", "http://127.0.0.1:8000/v1"), _args("--provider", "ollama")):
        hint = advice(refused, args)
        assert hint is not None and "--base-url (" not in hint


def test_the_dialects_suggested_are_other_than_the_one_that_failed() -> None:
    failed = RepairExhausted("calls still failed", reason="call_error", turns=3)
    hint = advice(failed, _args("--dialect", "hermes"))
    assert hint is not None and "another --dialect (am_xml, json_action, command…)" in hint
    hint = advice(failed, _args())  # am_xml by default
    assert hint is not None and "(hermes, json_action, command…)" in hint
    hint = advice(failed, _args("--native"))
    assert hint is not None and "try a dialect" in hint and "--native" not in hint
