"""``--connect-wait`` for ``streamtools chat`` and ``ui``: the provider's
``connect_wait`` (a server that refuses connections until it has loaded its
model, as vLLM and SGLang do, is waited for), which the command line could
not reach; and the hint after a refused connection names it."""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys

import pytest
from test_providers_s19_late_server import _ask_then_open, _free_port

from streamtools.cli import chat as chat_cli
from streamtools.cli.model_options import build_model


def _chat_args(*argv: str) -> argparse.Namespace:
    subparsers = argparse.ArgumentParser().add_subparsers()
    chat_cli.register(subparsers)
    return subparsers.choices["chat"].parse_args(["--model", "m", *argv])


@pytest.mark.anyio
async def test_the_flag_waits_for_a_server_that_opens_late(
    anyio_backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "streamtools.providers")
    port = _free_port()
    url = f"http://127.0.0.1:{port}/v1"
    model = build_model(_chat_args("--base-url", url, "--connect-wait", "60"))

    def waiting() -> bool:
        return any("(connect_wait)" in r.getMessage() for r in caplog.records)

    assert await _ask_then_open(model, port, waiting) == "Hello"


def test_without_the_flag_nothing_is_waited_for() -> None:
    assert build_model(_chat_args()).connect_wait == 0


@pytest.mark.parametrize("value", ["0", "-1", "nan", "soon"])
def test_the_flag_takes_seconds(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _chat_args("--connect-wait", value)
    assert "--connect-wait" in capsys.readouterr().err


def test_a_refused_connection_s_hint_names_the_flag() -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    argv = [sys.executable, "-m", "streamtools", "chat", "--color", "never", "--model", "m",
            "--base-url", url, "what is 2 + 3?"]
    env = {k: v for k, v in os.environ.items() if not k.endswith("API_KEY")}
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 1, proc.stderr
    hints = [line for line in proc.stderr.splitlines() if line.startswith("hint: ")]
    assert hints == [
        f"hint: nothing answers at {url}: start the server (one still loading its model "
        "refuses connections: --connect-wait SECONDS), or correct --base-url"
    ]
