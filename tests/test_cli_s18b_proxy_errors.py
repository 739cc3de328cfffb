"""``streamtools proxy``'s first failures, said so that the fix is plain.

A port in use printed Uvicorn's ``ERROR: [Errno 98] error while attempting to
bind on address …`` and ended with status 3, where ``streamtools ui`` says it
in one line with the way out; both share ``cli.proxy.listen`` now. An upstream
404 (``--upstream`` without ``/v1``, or a client's own model name, a Claude
model's from Claude Code, passed on without ``--model``) reached the client as
``upstream error: HTTP 404 …`` with nothing to say what to change: its message
now ends with a hint (in the client's own error format), and it is logged."""

from __future__ import annotations

import json
import logging
import socket
from typing import Any

import anthropic
import openai
import pytest
from test_proxy import USER, _anthropic, _openai, serve

from streamtools.cli import main
from streamtools.proxy import ProxyConfig, create_app
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import Reply


def said(error: openai.APIStatusError | anthropic.APIStatusError) -> str:
    """The error's message as the client's API shapes it."""
    body: Any = error.body
    message = body["error"]["message"] if "error" in body else body["message"]
    assert isinstance(message, str)
    return message


def test_a_port_in_use_is_one_line_with_the_way_out(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        number = taken.getsockname()[1]
        assert main(["proxy", "--upstream", "http://127.0.0.1:9", "--port", str(number)]) == 1
    captured = capsys.readouterr()
    assert captured.err == (
        f"streamtools proxy: cannot listen on 127.0.0.1:{number}: Address already in use "
        "(--port 0 takes any free one)\n"
    )
    assert captured.out == ""


OLLAMA_MODEL = json.dumps(
    {"error": {"message": 'model "claude-test-model" not found, try pulling it first',
               "type": "api_error", "param": None, "code": None}}
)


@pytest.mark.parametrize("stream", [False, True])
def test_a_model_the_upstream_does_not_serve_hints_at_model(
    stream: bool, caplog: pytest.LogCaptureFixture
) -> None:
    with FakeServer([Reply(status=404, body=OLLAMA_MODEL)] * 2) as upstream:
        cfg = ProxyConfig(upstream=upstream.base_url)
        with serve(create_app(cfg)) as url, caplog.at_level(logging.WARNING, "streamtools.proxy"):
            with pytest.raises(anthropic.NotFoundError) as caught:
                _anthropic(url).messages.create(
                    model="claude-test-model", max_tokens=100, messages=USER, stream=stream
                )
            with pytest.raises(openai.NotFoundError) as other:
                _openai(url).chat.completions.create(
                    model="claude-test-model", messages=USER, stream=stream
                )
    for error in (caught.value, other.value):
        message = said(error)
        assert "not found, try pulling it first" in message  # the upstream's own words
        assert "'claude-test-model'" in message
        assert message.endswith("start the proxy with --model NAME, its name for the model)")
    logged = [r.getMessage() for r in caplog.records if r.name == "streamtools.proxy"]
    assert len(logged) == 2 and all("404" in m and "--model NAME" in m for m in logged)


def test_an_upstream_url_without_v1_hints_at_it() -> None:
    with FakeServer([Reply(status=404, body="404 page not found")]) as upstream:
        base = upstream.base_url.removesuffix("/v1")
        with serve(create_app(ProxyConfig(upstream=base))) as url:
            with pytest.raises(openai.NotFoundError) as caught:
                _openai(url).chat.completions.create(model="qwen3", messages=USER)
    message = said(caught.value)
    assert "404 page not found" in message
    assert f"--upstream {base}/v1" in message and "--model" not in message


def test_a_configured_model_the_upstream_lacks_names_the_flag() -> None:
    with FakeServer([Reply(status=404, body=OLLAMA_MODEL)]) as upstream:
        cfg = ProxyConfig(upstream=upstream.base_url, model="qwen3")
        with serve(create_app(cfg)) as url:
            with pytest.raises(openai.NotFoundError) as caught:
                _openai(url).chat.completions.create(model="m", messages=USER)
    assert "'qwen3'" in said(caught.value) and "check --model" in said(caught.value)
