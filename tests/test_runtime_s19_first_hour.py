"""A new user's first mistakes with the agent, each refused with what to do.

``Agent("qwen3:8b", tools)`` (a model's name for the model) was accepted and
failed only at the first run, with ``'str' object has no attribute 'stream'``."""

from __future__ import annotations

import pytest

from streamtools.runtime import Agent
from streamtools.runtime.hybrid import HybridAgent
from streamtools.testing import ScriptedModel
from streamtools.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.mark.parametrize("make", [Agent, HybridAgent])
def test_a_model_name_for_the_model_is_refused_with_how_to_make_one(make: type) -> None:
    with pytest.raises(TypeError) as caught:
        make("qwen3:8b", [add])
    message = str(caught.value)
    assert message.startswith(f"{make.__name__}() takes a model provider")
    assert "not str 'qwen3:8b'" in message
    assert 'OpenAIChat("qwen3:8b", base_url=' in message  # the README's own spelling
    assert 'OllamaChat("qwen3:8b")' in message
    assert make(ScriptedModel(["Hi."]), [add]).model is not None  # a model is taken
