"""``streamtools chat`` takes the two model options ui had or lacked with it:
``--api-key-env NAME`` (ui's, a key not typed on the command line) and
``--max-tokens N`` (the agents' ``max_tokens``, which no command could set)."""

from __future__ import annotations

import argparse
import io

import pytest
from chat_support import reader

from streamtools.cli import main
from streamtools.cli.chat import build_model, chat, make_agent, register
from streamtools.testing import FakeServer

pytestmark = pytest.mark.anyio


async def test_the_key_from_a_named_variable_and_max_tokens_are_sent(
    anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ST_S16B_KEY", "sk-named")
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    async with FakeServer(["Hi."]) as server:
        args = parser.parse_args([
            "chat", "--base-url", server.base_url, "--model", "m",
            "--api-key-env", "ST_S16B_KEY", "--max-tokens", "32",
        ])
        out = io.StringIO()
        code = await chat(
            make_agent(build_model(args), args), reader(["hi\n"]), out, color=False, prompt=False
        )
        [received] = server.received
    assert code == 0 and "Hi." in out.getvalue()
    assert received.headers["authorization"] == "Bearer sk-named"
    assert received.body["max_tokens"] == 32


def test_a_named_variable_that_is_not_set_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ST_S16B_UNSET", raising=False)
    argv = ["chat", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
    assert main([*argv, "--api-key-env", "ST_S16B_UNSET"]) == 2
    assert capsys.readouterr().err == (
        "streamtools chat: error: --api-key-env ST_S16B_UNSET: no such environment variable "
        "is set (it names the variable that holds the key)\n"
    )
    with pytest.raises(SystemExit):  # one key or the other
        main([*argv, "--api-key", "k", "--api-key-env", "ST_S16B_UNSET"])
    assert "not allowed with argument" in capsys.readouterr().err
