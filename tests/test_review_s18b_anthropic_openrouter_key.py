"""5a7c9b5 keeps the user's OpenAI key from OpenRouter and OpenRouter's from
other servers, but only for ``--provider openai``. OpenRouter also serves the
Anthropic Messages API (``https://openrouter.ai/api``, the base URL its Claude
Code guide gives, with ``ANTHROPIC_API_KEY`` set empty so it is not sent), and
``streamtools chat --provider anthropic --base-url https://openrouter.ai/api``
sent it ``ANTHROPIC_API_KEY``: the user's Anthropic secret to a third party,
and a 401 since it is no OpenRouter key. It now takes OpenRouter's key there."""

from __future__ import annotations

import argparse

import pytest

from streamtools.cli.chat import register
from streamtools.cli.model_options import advice, api_key
from streamtools.errors import ProviderError

ROUTER = "https://openrouter.ai/api"


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    return parser.parse_args(["chat", "--model", "m", "--provider", "anthropic", *argv])


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("STREAMTOOLS_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_openrouters_anthropic_endpoint_gets_openrouters_key(keys: pytest.MonkeyPatch) -> None:
    keys.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    assert api_key(_args("--base-url", ROUTER)) is None  # never Anthropic's
    keys.setenv("OPENROUTER_API_KEY", "sk-or-router")
    assert api_key(_args("--base-url", ROUTER)) == "sk-or-router"
    assert api_key(_args()) == "sk-ant-secret"  # Anthropic's own API
    assert api_key(_args("--base-url", "http://127.0.0.1:8400")) == "sk-ant-secret"
    hint = advice(ProviderError("HTTP 401", status=401), _args("--base-url", ROUTER))
    assert hint is not None and "STREAMTOOLS_API_KEY, OPENROUTER_API_KEY that is set" in hint
