"""FakeServer's model lists (``GET /v1/models``, Anthropic's, Ollama's ``/api/tags``),
read by the official SDKs and passed on by the proxy."""

from __future__ import annotations

import anthropic
import httpx
import openai
import pytest

from streamtools.proxy import ProxyConfig, create_app
from streamtools.testing import FakeServer


def test_the_openai_sdk_lists_and_retrieves_models() -> None:
    with FakeServer(models=("qwen3:8b", "org/llama")) as server:
        with openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0) as client:
            listed = [m.id for m in client.models.list()]
            one = client.models.retrieve("org/llama")
            with pytest.raises(openai.NotFoundError):
                client.models.retrieve("missing")
        kept = [r.method for r in server.received]
        bodies = server.requests
    assert listed == ["qwen3:8b", "org/llama"] and one.id == "org/llama"
    assert kept == ["GET", "GET", "GET"] and bodies == []  # no JSON body was posted


def test_the_anthropic_sdk_lists_models() -> None:
    with FakeServer(wire="anthropic", models=("claude-x", "claude-y")) as server:
        client = anthropic.Anthropic(base_url=server.base_url, api_key="k", max_retries=0)
        with client:
            page = client.models.list()
            listed = [m.id for m in page.data]
            one = client.models.retrieve("claude-y")
    assert listed == ["claude-x", "claude-y"] and one.display_name == "claude-y"


def test_ollama_lists_its_tags_and_other_paths_are_404() -> None:
    with FakeServer(wire="ollama", models=("qwen3:8b",)) as server:
        tags = httpx.get(server.url + "/api/tags", timeout=5)
        other = httpx.get(server.url + "/api/ps", timeout=5)
    assert [m["name"] for m in tags.json()["models"]] == ["qwen3:8b"]
    assert other.status_code == 404


@pytest.mark.anyio
async def test_the_proxy_passes_the_list_on(anyio_backend: str) -> None:
    with FakeServer(models=("m1", "m2")) as upstream:
        app = create_app(ProxyConfig(upstream=upstream.base_url))
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as client:
            response = await client.get("/v1/models")
    assert response.status_code == 200
    assert [m["id"] for m in response.json()["data"]] == ["m1", "m2"]
