"""``FakeServer`` replies computed from the request: a function of the JSON body
returns what to send (text, a ``Reply``, chunks), so a reply can depend on what
the client sent (the user's words, the tools offered, a tool's result)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from provider_support import collect, provider_for, text_of

from streamtools.errors import ProviderError
from streamtools.model import ChatMessage, ModelRequest
from streamtools.runtime import Agent
from streamtools.testing import FakeServer
from streamtools.testing.fake_server import FakeCall, Reply, Scripted, Wire
from streamtools.tools import tool


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def _last_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, list):  # anthropic's blocks
        return "".join(b.get("text") or str(b.get("content") or "") for b in content)
    return str(content)


@pytest.mark.parametrize("wire", ["openai", "anthropic", "ollama"])
async def test_a_reply_made_from_the_request(anyio_backend: str, wire: Wire) -> None:
    def echo(body: dict[str, Any]) -> str:
        return f"You said: {_last_text(body)}"

    request = ModelRequest(messages=(ChatMessage(role="user", content="good morning"),))
    async with FakeServer([echo, echo], wire=wire) as server:
        provider = provider_for(server)
        first = text_of(await collect(provider, request))
        second = text_of(await collect(provider))
    assert first == "You said: good morning"
    assert second == "You said: hi"


async def test_a_native_agent_against_a_function_server(anyio_backend: str) -> None:
    """The function calls the tool it was offered, then reads the result back."""
    seen: list[dict[str, Any]] = []

    def model(body: dict[str, Any]) -> Scripted:
        seen.append(body)
        last = body["messages"][-1]
        if last["role"] == "tool":
            return f"The product is {last['content']}."
        [offered] = body["tools"]
        name = offered["function"]["name"]
        return Reply(calls=(FakeCall(name=name, arguments={"a": 6, "b": 7}),))

    async with FakeServer([model, model]) as server:
        result = await Agent(provider_for(server), [multiply], native=True).run("6 x 7?")
    assert result.text == "The product is 42."
    assert len(seen) == 2 and seen == [r.body for r in server.received]


def test_a_function_that_raises_is_a_500_and_the_script_goes_on() -> None:
    def broken(body: dict[str, Any]) -> str:
        raise KeyError("tools")

    with FakeServer([broken, "fine"]) as server:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        url = f"{server.base_url}/chat/completions"
        failed = httpx.post(url, json=body, timeout=10)
        ok = httpx.post(url, json=body, timeout=10)
    assert failed.status_code == 500
    message = failed.json()["error"]["message"]
    assert "the scripted reply function raised KeyError('tools')" in message
    assert ok.status_code == 200 and ok.json()["choices"][0]["message"]["content"] == "fine"


async def test_a_pushed_function_reply(anyio_backend: str) -> None:
    async with FakeServer(wire="anthropic") as server:
        server.push(lambda body: Reply(status=529, body='{"type":"error"}'))
        with pytest.raises(ProviderError) as raised:
            await collect(provider_for(server, max_retries=0))
    assert raised.value.status == 529
