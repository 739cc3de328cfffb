"""The proxy refuses what a web page makes a browser send it, and names it does not
answer to (``streamtools.browser_guard``), before it asks the upstream anything."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from typing import Any

import httpx
import pytest

from streamtools.browser_guard import LOOPBACK_NAMES
from streamtools.proxy import ProxyConfig, create_app
from streamtools.testing import FakeServer, ScriptedModel

pytestmark = pytest.mark.anyio

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
MESSAGES = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}


class Upstreams:
    """The model factory of the proxy under test: counts the upstreams it made."""

    def __init__(self) -> None:
        self.made = 0

    def __call__(self, name: str, key: str | None) -> ScriptedModel:
        self.made += 1
        return ScriptedModel(["Hello."])


async def post(
    hosts: tuple[str, ...] | None, headers: dict[str, str], path: str = "/v1/chat/completions"
) -> tuple[httpx.Response, int]:
    upstreams = Upstreams()
    app = create_app(ProxyConfig(hosts=hosts), model_factory=upstreams)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
        body = MESSAGES if path == "/v1/messages" else CHAT
        response = await client.post(path, json=body, headers=headers)
    return response, upstreams.made


@pytest.mark.parametrize(
    "headers",
    [
        {"sec-fetch-site": "cross-site", "origin": "https://evil.example"},
        {"sec-fetch-site": "same-site", "origin": "http://localhost:3000"},
        {"origin": "https://evil.example"},  # an older browser: Origin alone
    ],
)
async def test_a_page_of_another_site_runs_nothing(
    anyio_backend: str, headers: dict[str, str]
) -> None:
    response, made = await post(None, headers)
    assert response.status_code == 403 and made == 0
    assert "another site" in response.json()["error"]["message"]
    assert response.headers["x-should-retry"] == "false"


async def test_an_anthropic_client_is_refused_in_its_own_shape(anyio_backend: str) -> None:
    headers = {"origin": "https://evil.example", "anthropic-version": "2023-06-01"}
    response, made = await post(None, headers, "/v1/messages")
    assert response.status_code == 403 and made == 0
    body = response.json()
    assert body["type"] == "error" and "another site" in body["error"]["message"]


@pytest.mark.parametrize(
    "headers",
    [
        {},  # the SDKs, curl: no browser headers
        {"sec-fetch-site": "none"},  # an address the user typed
        {"sec-fetch-site": "same-origin"},
        {"origin": "http://127.0.0.1:8000"},  # an older browser, the proxy's own origin
    ],
)
async def test_programs_and_the_proxys_own_origin_are_served(
    anyio_backend: str, headers: dict[str, str]
) -> None:
    response, made = await post(LOOPBACK_NAMES, headers)
    assert response.status_code == 200 and made == 1
    assert response.json()["choices"][0]["message"]["content"] == "Hello."


async def test_a_rebound_name_is_refused_only_where_hosts_are_named(anyio_backend: str) -> None:
    rebound = {"host": "attacker.example"}
    refused, made = await post(LOOPBACK_NAMES, rebound)
    assert refused.status_code == 421 and made == 0
    assert "attacker.example" in refused.json()["error"]["message"]
    served, made = await post(None, rebound)  # bound for others (0.0.0.0): served as asked
    assert served.status_code == 200 and made == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_the_command_on_a_loopback_address_answers_to_its_own_names() -> None:
    with FakeServer(["Hi.", "Hi again."]) as upstream:
        port = _free_port()
        argv = [sys.executable, "-m", "streamtools", "proxy", "--upstream", upstream.base_url]
        argv += ["--port", str(port), "--log-level", "warning"]
        with subprocess.Popen(argv, stderr=subprocess.DEVNULL) as proc:
            try:
                url = f"http://127.0.0.1:{port}/v1/chat/completions"
                deadline = time.monotonic() + 30
                while True:
                    try:
                        first = httpx.post(url, json=CHAT, headers={"host": "a.example"})
                        break
                    except httpx.TransportError:
                        assert time.monotonic() < deadline and proc.poll() is None
                        time.sleep(0.1)
                own: dict[str, Any] = {"host": f"localhost:{port}"}
                second = httpx.post(url, json=CHAT, headers=own, timeout=30)
            finally:
                proc.terminate()
                proc.wait(timeout=10)
        asked = len(upstream.requests)
    assert first.status_code == 421
    assert second.status_code == 200 and second.json()["choices"][0]["message"]["content"]
    assert asked == 1  # the refused request never reached the upstream
