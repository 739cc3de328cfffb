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
from test_ui_support import HELLO, ScriptedSource, serve

from streamtools.ui import create_app
from streamtools.ui.app import LOOPBACK_NAMES

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
    source = ScriptedSource(HELLO)
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
    source = ScriptedSource(HELLO)
    with serve(create_app(source, cors_origins=["http://localhost:3000"])) as server:
        response = request(kind, server.url, headers)
    assert response.status_code == 200
    assert len(source.prompts) == 1


def test_an_old_browser_on_the_servers_own_origin_is_served() -> None:
    source = ScriptedSource(HELLO)
    with serve(create_app(source)) as server:
        response = request("post", server.url, {"origin": server.url})
        # the page is https behind a proxy that ends TLS; this request is http
        https = "https://" + server.url.split("://")[1]
        behind_a_proxy = request("post", server.url, {"origin": https})
    assert response.status_code == 200
    assert behind_a_proxy.status_code == 200


def test_any_origin_with_a_star() -> None:
    source = ScriptedSource(HELLO)
    with serve(create_app(source, cors_origins=["*"])) as server:
        response = request("get", server.url, {"sec-fetch-site": "cross-site"})
    assert response.status_code == 200


# --- DNS rebinding: a name an attacker's DNS points at 127.0.0.1 ---------------------


@pytest.mark.parametrize("kind", ["get", "post"])
def test_a_host_name_not_ours_is_refused_on_a_loopback_server(kind: str) -> None:
    """The page of http://rebound.test:PORT, once its name resolves to 127.0.0.1,
    is same-origin with the server for the browser; only ``Host`` tells."""
    source = ScriptedSource(HELLO)
    with serve(create_app(source, hosts=LOOPBACK_NAMES)) as server:
        port = server.url.rsplit(":", 1)[1]
        headers = {"host": f"rebound.test:{port}", "sec-fetch-site": "same-origin"}
        response = request(kind, server.url, headers)
    assert response.status_code == 421
    assert response.json()["error"]["message"] == (
        f"this server does not answer to the host name 'rebound.test:{port}'"
    )
    assert source.prompts == []


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "LOCALHOST", "[::1]"])
def test_the_loopback_names_are_served(host: str) -> None:
    source = ScriptedSource(HELLO)
    with serve(create_app(source, hosts=LOOPBACK_NAMES)) as server:
        port = server.url.rsplit(":", 1)[1]
        response = request("get", server.url, {"host": f"{host}:{port}"})
    assert response.status_code == 200


def test_streamtools_ui_on_loopback_answers_only_to_its_names() -> None:
    from test_ui_cli import parse

    from streamtools.cli.ui import build_app

    app, _ = build_app(parse("--instant"))
    with serve(app) as server:
        rebound = request("get", server.url, {"host": "rebound.test"})
        ours = request("get", server.url, {})
    assert rebound.status_code == 421
    assert ours.status_code == 200
    app, _ = build_app(parse("--instant", "--host", "0.0.0.0"))  # asked to be reachable
    with serve(app) as server:
        assert request("get", server.url, {"host": "box.lan"}).status_code == 200


def test_an_origin_written_with_a_trailing_slash_still_matches() -> None:
    """A browser's ``Origin`` never ends with ``/``; ``http://localhost:3000/``
    (as copied from the address bar) matched nothing, and the front end was
    refused."""
    source = ScriptedSource(HELLO)
    front = {"sec-fetch-site": "cross-site", "origin": "http://localhost:3000"}
    with serve(create_app(source, cors_origins=["http://localhost:3000/"])) as server:
        response = request("post", server.url, front)
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "http://localhost:3000"


def test_the_command_takes_an_origin_with_a_trailing_slash() -> None:
    from test_ui_cli import parse

    args = parse("--cors-origin", "http://localhost:3000/", "--cors-origin", "*")
    assert args.cors_origin == ["http://localhost:3000", "*"]
