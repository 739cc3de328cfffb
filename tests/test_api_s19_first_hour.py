"""What a new user copies from the first screens streamtools shows works as
it says. The demo's last lines are the first live command a user runs: the
Ollama one used Ollama's OpenAI endpoint with its default context, which the
README and ``chat --help`` warn cuts the tools' prompt without an error (the
model then answers as if it had no tools). Each command the demo suggests
parses, and one aimed at Ollama gives the model room (``num_ctx``)."""

from __future__ import annotations

import io
import shlex

from streamtools.cli import _build_parser
from streamtools.cli.demo import _footer
from streamtools.cli.model_options import build_model
from streamtools.model import ChatMessage, ModelRequest
from streamtools.providers import OllamaChat
from streamtools.runtime.console import ConsoleRenderer


def _suggested() -> list[list[str]]:
    out = io.StringIO()
    _footer(ConsoleRenderer(out, color=False))
    lines = [line.strip() for line in out.getvalue().splitlines()]
    return [
        shlex.split(line.split("  (")[0])[1:]
        for line in lines
        if line.startswith("streamtools chat --") and "--help" not in line
    ]


def test_each_suggested_command_parses_and_an_ollama_one_has_room() -> None:
    suggested = _suggested()
    assert len(suggested) >= 2
    ollama = 0
    request = ModelRequest(messages=(ChatMessage(role="user", content="hi"),))
    for argv in suggested:
        args = _build_parser(argv).parse_args(argv)
        model = build_model(args)
        if "11434" in model.base_url or isinstance(model, OllamaChat):
            ollama += 1
            # Ollama's OpenAI endpoint takes no num_ctx: only its own API can say it
            assert isinstance(model, OllamaChat), argv
            assert model.request_body(request)["options"]["num_ctx"] >= 8192
    assert ollama == 1
