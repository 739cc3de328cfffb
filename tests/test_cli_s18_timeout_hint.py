"""A server that sends nothing for ``--timeout`` seconds (Ollama loading a model,
a slow machine reading a long prompt, a reasoning model behind a proxy) ended
``streamtools chat``'s exchange with ``read timeout: the server stopped sending
…`` and no hint, though the remedy is the command's own option: the README's
"When something goes wrong" promises a ``hint:`` line where the cause is plain.
The hint names ``--timeout`` and the value that ran out."""

from __future__ import annotations

import argparse

import pytest

from streamtools.cli import main
from streamtools.cli.chat import register
from streamtools.cli.model_options import advice
from streamtools.errors import ProviderError
from streamtools.providers.failures import ProviderTimeout
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply, Wire


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    return parser.parse_args(["chat", "--model", "m", *argv])


def test_a_read_timeout_is_advised_with_the_option_and_its_value() -> None:
    exc = ProviderError(
        "read timeout: the server stopped sending while streaming the answer "
        "(http://127.0.0.1:9/v1/chat/completions): ReadTimeout"
    )
    hint = advice(exc, _args("--base-url", "http://127.0.0.1:9/v1", "--timeout", "7"))
    assert hint is not None
    assert "--timeout SECONDS" in hint and "7 s" in hint
    default = advice(exc, _args("--base-url", "http://127.0.0.1:9/v1"))
    assert default is not None and "120 s" in default


def test_a_timeout_before_a_response_is_advised_too() -> None:
    exc = ProviderTimeout(
        "read timeout: the server stopped sending before a response "
        "(http://127.0.0.1:9/api/chat): ReadTimeout"
    )
    hint = advice(exc, _args("--provider", "ollama", "--timeout", "3"))
    assert hint is not None and "--timeout SECONDS" in hint and "3 s" in hint


def test_other_failures_get_no_timeout_hint() -> None:
    exc = ProviderError("connection cut by the server while streaming the answer (u): x")
    assert advice(exc, _args("--base-url", "http://127.0.0.1:9/v1")) is None


@pytest.mark.parametrize("wire", ["openai", "ollama"])
def test_the_command_says_the_hint(wire: Wire, capsys: pytest.CaptureFixture[str]) -> None:
    # headers, then nothing: the read timeout comes while streaming
    reply = Reply(text="Hello.", stall_after=0, stall=30)
    with FakeServer([reply], wire=wire) as server:
        provider = [] if wire == "openai" else ["--provider", "ollama"]
        argv = ["chat", "--base-url", server.base_url, "--model", "m", *provider]
        code = main([*argv, "--timeout", "0.5", "hi"])
        server.resume()
    assert code == 1
    err = capsys.readouterr().err
    assert "read timeout" in err
    assert "hint: " in err and "--timeout SECONDS" in err and "0.5 s" in err
