"""Pages of other sites may not make a visitor's browser run the agent.

The server listens on 127.0.0.1, but any web page the user opens can send
requests there: an ``<img>`` or a link to ``GET /api/events?prompt=…``, or a
``no-cors`` POST of JSON as ``text/plain`` (a "simple" request: no preflight).
The browser hides the answer from that page, but the agent ran, with its tools
and on the user's API key. Browsers say where a request comes from
(``Sec-Fetch-Site``, ``Origin``); those from another site are refused unless
their origin is one of ``cors_origins``. Clients that are not browsers send
neither header and are served as before.
"""

from __future__ import annotations

import httpx
import pytest
from test_ui_support import ScriptedSource, serve

from streamtools.events import Event, Final, Finish, TextDelta, TurnEnd, TurnStart
from streamtools.ui import create_app

SCRIPT: list[Event] = [
    TurnStart(turn=1),
    TextDelta(text="Hello."),
    Finish(reason="stop"),
    TurnEnd(turn=1, reason="final"),
    Final(text="Hello.", turns=1),
]
BODY = b'{"messages": [{"role": "user", "content": "delete everything"}]}'


def request(kind: str, url: str, headers: dict[str, str]) -> httpx.Response:
    if kind == "get":
        return httpx.get(url + "/api/events", params={"prompt": "x"}, headers=headers)
    plain = {"content-type": "text/plain", **headers}  # what a no-cors fetch may send
    return httpx.post(url + "/api/chat", content=BODY, headers=plain, timeout=10)


@pytest.mark.parametrize("kind", ["get", "post"])
@pytest.mark.parametrize(
    "headers",
    [
        {"sec-fetch-site": "cross-site", "origin": "https://evil.test"},
        {"sec-fetch-site": "cross-site"},  # an <img>: no Origin
        {"sec-fetch-site": "same-site", "origin": "http://localhost:3000"},  # another port
        {"origin": "https://evil.test"},  # a browser without Sec-Fetch-*
    ],
    ids=["cross-site", "cross-site-no-origin", "same-site", "origin-only"],
)
def test_a_request_from_another_site_is_refused(kind: str, headers: dict[str, str]) -> None:
    source = ScriptedSource(SCRIPT)
    with serve(create_app(source)) as server:
        response = request(kind, server.url, headers)
    assert response.status_code == 403
    assert response.json()["error"]["message"].startswith("a page of another site")
    assert source.prompts == []  # the agent never ran


@pytest.mark.parametrize("kind", ["get", "post"])
@pytest.mark.parametrize(
    "headers",
    [
        {},  # not a browser: curl, httpx, the AI SDK in Node
        {"sec-fetch-site": "same-origin", "origin": "https://chat.example.com"},  # a proxy's Host
        {"sec-fetch-site": "none"},  # typed into the address bar
        {"sec-fetch-site": "cross-site", "origin": "http://localhost:3000"},  # named below
    ],
    ids=["no-browser", "same-origin", "typed", "named-origin"],
)
def test_own_pages_named_origins_and_other_clients_are_served(
    kind: str, headers: dict[str, str]
) -> None:
    source = ScriptedSource(SCRIPT)
    with serve(create_app(source, cors_origins=["http://localhost:3000"])) as server:
        response = request(kind, server.url, headers)
    assert response.status_code == 200
    assert len(source.prompts) == 1


def test_an_old_browser_on_the_servers_own_origin_is_served() -> None:
    source = ScriptedSource(SCRIPT)
    with serve(create_app(source)) as server:
        response = request("post", server.url, {"origin": server.url})
    assert response.status_code == 200


def test_any_origin_with_a_star() -> None:
    source = ScriptedSource(SCRIPT)
    with serve(create_app(source, cors_origins=["*"])) as server:
        response = request("get", server.url, {"sec-fetch-site": "cross-site"})
    assert response.status_code == 200
