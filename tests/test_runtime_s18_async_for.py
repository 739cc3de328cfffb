"""``async for event in agent.stream(prompt)``, as the OpenAI and Anthropic SDKs'
streams are iterated, failed with Python's own ``TypeError: 'async for'
requires an object with __aiter__ method, got _AsyncGeneratorContextManager``,
which names a private class and not the form that works. ``stream()`` still
returns an async context manager (leaving its block is what cancels the run),
and iterating it directly now says how to use it."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

import pytest

from streamtools.events import Final
from streamtools.runtime import Agent
from streamtools.runtime.hybrid import HybridAgent
from streamtools.testing import ScriptedModel

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("kind", [Agent, HybridAgent])
async def test_async_for_over_stream_says_the_form(anyio_backend: str, kind: type[Agent]) -> None:
    agent = kind(ScriptedModel(["Hi."]))
    with pytest.raises(TypeError) as caught:
        async for _ in agent.stream("hello"):  # type: ignore[attr-defined]
            pass
    message = str(caught.value)
    assert "async with agent.stream(prompt) as events" in message
    assert "async for event in events" in message
    assert "_AsyncGeneratorContextManager" not in message


@pytest.mark.parametrize("kind", [Agent, HybridAgent])
async def test_the_documented_form_still_runs(anyio_backend: str, kind: type[Agent]) -> None:
    agent = kind(ScriptedModel(["Hi.", "Hi."]))
    stream = agent.stream("hello")
    assert isinstance(stream, AbstractAsyncContextManager)
    async with stream as events:
        finals = [e async for e in events if isinstance(e, Final)]
    assert [f.text for f in finals] == ["Hi."]
    assert (await agent.run("again")).text == "Hi."
