"""The proxy's answers where the client's API shows in its headers and body rather
than in the path: unknown paths, a single model, compressed bodies, the legacy
``functions`` parameters and past calls whose arguments are not JSON. The official
``openai`` and ``anthropic`` SDKs are the clients, ``FakeServer`` the upstream."""

from __future__ import annotations

import anthropic
import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from test_proxy import _anthropic, _openai, proxy, serve

from streamtools.proxy import ProxyConfig, create_app


def test_an_unknown_path_is_answered_in_the_clients_format() -> None:
    # the anthropic SDK sends anthropic-version with every request: its client
    # got OpenAI's error shape for a path outside /v1/messages
    with proxy([]) as (url, _):
        with pytest.raises(anthropic.NotFoundError) as info:
            _anthropic(url).beta.files.list()
        assert isinstance(info.value.body, dict)
        assert info.value.body["type"] == "error"
        assert info.value.body["error"]["type"] == "not_found_error"
        with pytest.raises(openai.NotFoundError) as found:
            _openai(url).files.list()
        assert found.value.code is None and found.value.type == "not_found_error"


def _model_upstreams() -> Starlette:
    """An upstream that knows one model, ``org/plain-7b``, in OpenAI's format
    under ``/models`` and in Anthropic's under ``/v1/models``."""

    async def openai_model(request: Request) -> JSONResponse:
        if request.path_params["model_id"] != "org/plain-7b":
            error = {"error": {"message": "no such model", "type": "invalid_request_error"}}
            return JSONResponse(error, status_code=404)
        owner = request.headers.get("authorization", "")
        return JSONResponse(
            {"id": "org/plain-7b", "object": "model", "created": 1700000000, "owned_by": owner}
        )

    async def anthropic_model(request: Request) -> JSONResponse:
        if request.path_params["model_id"] != "org/plain-7b":
            error = {"type": "error", "error": {"type": "not_found_error", "message": "no"}}
            return JSONResponse(error, status_code=404)
        assert request.headers["x-api-key"] in ("sk-client", "sk-ant-client")
        return JSONResponse({"type": "model", "id": "org/plain-7b", "display_name": "Plain",
                             "created_at": "2025-02-19T00:00:00Z"})

    return Starlette(routes=[
        Route("/models/{model_id:path}", openai_model),
        Route("/v1/models/{model_id:path}", anthropic_model),
    ])


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_one_model_is_retrieved_in_the_clients_format(kind: str) -> None:
    # the SDKs' models.retrieve(id) was a 404: GET /v1/models/{id} was not routed
    with serve(_model_upstreams()) as upstream_url:
        cfg = ProxyConfig(upstream=upstream_url, upstream_kind=kind)  # type: ignore[arg-type]
        with serve(create_app(cfg)) as url:
            model = _openai(url).models.retrieve("org/plain-7b")
            info = _anthropic(url).models.retrieve("org/plain-7b")
            with pytest.raises(openai.NotFoundError):
                _openai(url).models.retrieve("gone")
            with pytest.raises(anthropic.NotFoundError) as missing:
                _anthropic(url).models.retrieve("gone")
    assert model.id == "org/plain-7b" and model.object == "model"
    if kind == "openai":  # passed through, the client's key forwarded
        assert (model.created, model.owned_by) == (1700000000, "Bearer sk-client")
        assert info.type == "model" and info.created_at.timestamp() == 1700000000
    else:
        assert model.created == 1739923200 and info.display_name == "Plain"
    assert info.id == "org/plain-7b"
    assert isinstance(missing.value.body, dict) and missing.value.body["type"] == "error"
