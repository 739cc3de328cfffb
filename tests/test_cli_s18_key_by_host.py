"""``streamtools chat --base-url https://openrouter.ai/api/v1`` (the README's
OpenRouter line) took its key from ``STREAMTOOLS_API_KEY``, then
``OPENAI_API_KEY``, then ``OPENROUTER_API_KEY``, whatever the server: with
both usual keys exported, OpenRouter was sent the user's OpenAI key (a secret
handed to a third party, and a 401 the hint blamed on "the key it was given"),
and with only an OpenRouter key set, any other server (a local vLLM, a
colleague's host) was sent that. The key now follows the server: OpenRouter's
for openrouter.ai, OpenAI's for any other OpenAI-compatible server (as the
openai SDK sends it), ``STREAMTOOLS_API_KEY`` first for any."""

from __future__ import annotations

import argparse

import pytest

from streamtools.cli.chat import register
from streamtools.cli.model_options import advice, api_key, build_model
from streamtools.errors import ProviderError

OPENROUTER = "https://openrouter.ai/api/v1"
LOCAL = "http://127.0.0.1:8000/v1"


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    return parser.parse_args(["chat", "--model", "m", *argv])


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("STREAMTOOLS_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_openrouter_gets_its_own_key_not_openais(keys: pytest.MonkeyPatch) -> None:
    keys.setenv("OPENAI_API_KEY", "sk-openai")
    keys.setenv("OPENROUTER_API_KEY", "sk-or-router")
    assert api_key(_args("--base-url", OPENROUTER)) == "sk-or-router"
    assert build_model(_args("--base-url", OPENROUTER)).api_key == "sk-or-router"
    assert api_key(_args("--base-url", LOCAL)) == "sk-openai"
    assert api_key(_args()) == "sk-openai"  # OpenAI's own API


def test_a_key_for_one_server_is_never_sent_to_another(keys: pytest.MonkeyPatch) -> None:
    keys.setenv("OPENAI_API_KEY", "sk-openai")
    assert api_key(_args("--base-url", OPENROUTER)) is None
    keys.delenv("OPENAI_API_KEY")
    keys.setenv("OPENROUTER_API_KEY", "sk-or-router")
    assert api_key(_args("--base-url", LOCAL)) is None
    assert api_key(_args()) is None


def test_streamtools_api_key_comes_first_for_any_server(keys: pytest.MonkeyPatch) -> None:
    keys.setenv("STREAMTOOLS_API_KEY", "sk-mine")
    keys.setenv("OPENAI_API_KEY", "sk-openai")
    keys.setenv("OPENROUTER_API_KEY", "sk-or-router")
    assert api_key(_args("--base-url", OPENROUTER)) == "sk-mine"
    assert api_key(_args("--base-url", LOCAL)) == "sk-mine"


def test_the_401_hint_names_the_variables_read_for_that_server(keys: pytest.MonkeyPatch) -> None:
    refused = ProviderError("answered HTTP 401: no key", status=401)
    hint = advice(refused, _args("--base-url", OPENROUTER))
    assert hint is not None and "STREAMTOOLS_API_KEY, OPENROUTER_API_KEY that is set" in hint
    assert "OPENAI_API_KEY" not in hint
    hint = advice(refused, _args("--base-url", LOCAL))
    assert hint is not None and "STREAMTOOLS_API_KEY, OPENAI_API_KEY that is set" in hint
    assert "OPENROUTER_API_KEY" not in hint
