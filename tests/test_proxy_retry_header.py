"""``x-should-retry``: the upstream's word on a retry reaches the client's SDK.

The openai and anthropic SDKs obey the header over the status (``true``
retries a 400, ``false`` stops at a 429 or a 503). The proxy dropped the
upstream's, so a client retried a refusal the upstream had said was final (a
quota used up answers 429), and gave up on one it had said was worth another
try; and it said nothing on its own answers that no retry can change."""

from __future__ import annotations

import anthropic
import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from test_proxy import USER, _anthropic, _ask, _openai, proxy, serve
from test_proxy_overflow import LLAMA_BODY

from streamtools.model import Model
from streamtools.proxy import ProxyConfig, create_app
from streamtools.testing.fake_server import Reply

_ERRORS = (openai.APIStatusError, anthropic.APIStatusError)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_an_upstreams_no_stops_the_clients_retries(wire: str, stream: bool) -> None:
    final = Reply(status=429, headers={"x-should-retry": "false"}, retry_after=0)
    with proxy([final, "Sunny."], wire=wire) as (url, upstream):
        with pytest.raises(_ERRORS) as info:
            _ask(wire, url, stream, retries=2)
        assert len(upstream.received) == 1  # the SDK did not ask again
    refused = info.value
    assert isinstance(refused, _ERRORS) and refused.status_code == 429
    assert refused.response.headers["x-should-retry"] == "false"


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_an_upstreams_yes_gets_a_400_retried(wire: str, stream: bool) -> None:
    worth_it = Reply(status=400, headers={"x-should-retry": "true"})
    with proxy([worth_it, "Sunny."], wire=wire) as (url, upstream):
        assert _ask(wire, url, stream, retries=1) == "Sunny."
        assert len(upstream.received) == 2


def test_without_the_header_none_is_made_up() -> None:
    with proxy([Reply(status=503)]) as (url, _):
        with pytest.raises(openai.InternalServerError) as info:
            _ask("openai", url, False)
    assert "x-should-retry" not in info.value.response.headers


@pytest.mark.parametrize("stream", [False, True])
def test_an_overflow_says_no_retry(stream: bool) -> None:
    """llama.cpp's older overflow, a 500, was retried twice by the SDK."""
    with proxy([Reply(status=500, body=LLAMA_BODY)] * 3) as (url, upstream):
        with pytest.raises(openai.BadRequestError) as info:
            _ask("openai", url, stream, retries=2)
        assert len(upstream.received) == 1
    assert info.value.response.headers["x-should-retry"] == "false"


def test_a_bug_before_the_upstream_is_asked_is_not_retried() -> None:
    """The same body meets the same bug: the SDK's retries only repeat it."""
    made: list[str] = []

    def broken(name: str, key: str | None) -> Model:
        made.append(name)
        raise RuntimeError("a bug")

    with serve(create_app(ProxyConfig(), model_factory=broken)) as url:
        with pytest.raises(openai.InternalServerError) as info:
            _openai(url, retries=2).chat.completions.create(model="m", messages=USER)
    assert made == ["m"]
    assert info.value.response.headers["x-should-retry"] == "false"


@pytest.mark.parametrize("client", ["openai", "anthropic"])
def test_a_model_lists_refusal_keeps_its_word_on_a_retry(client: str) -> None:
    """``GET /v1/models``, passed through (openai) or converted (anthropic):
    the refusal's ``retry-after`` and ``x-should-retry`` were dropped."""
    asked: list[str] = []

    async def models(request: Request) -> JSONResponse:
        asked.append(request.url.path)
        headers = {"retry-after": "0", "x-should-retry": "false"}
        return JSONResponse({"error": {"message": "quota"}}, status_code=429, headers=headers)

    with serve(Starlette(routes=[Route("/v1/models", models)])) as upstream_url:
        with serve(create_app(ProxyConfig(upstream=f"{upstream_url}/v1"))) as url:
            with pytest.raises(_ERRORS) as info:
                if client == "openai":
                    _openai(url, retries=2).models.list()
                else:
                    _anthropic(url, retries=2).models.list()
    refused = info.value
    assert isinstance(refused, _ERRORS) and refused.status_code == 429
    assert refused.response.headers["x-should-retry"] == "false"
    assert refused.response.headers["retry-after"] == "0"
    assert len(asked) == 1
