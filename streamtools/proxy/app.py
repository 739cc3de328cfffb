"""The proxy's ASGI app: OpenAI- and Anthropic-compatible tool calling over a plain upstream.

Theory of operation
-------------------
``create_app(ProxyConfig(...))`` returns a Starlette app with three routes:

* ``POST /v1/chat/completions`` (OpenAI) and ``POST /v1/messages``
  (Anthropic). The body is read up to ``max_body`` bytes (413 beyond), decoded
  by the wire module into a ``ProxyCall``, and one upstream turn is driven by
  ``turn.run_turn``. Streaming responses are written by ``_TurnResponse``: the
  status line is sent lazily, with the first output event, so an upstream that
  refuses the request (401, 429, 5xx…) is answered with the upstream's status
  and an error in the client's own format; a failure after the first byte is
  written in-band (OpenAI ``data: {"error": …}``, Anthropic ``event: error``).
  A client that disconnects cancels the turn, which closes the upstream request.
* ``GET /v1/models`` is passed through to the upstream's model listing.

Stateless: each request carries the whole conversation; nothing is cached
between requests, so replicas scale behind any load balancer.

Upstream API key: ``ProxyConfig.api_key`` when configured (the operator's key),
else the client's own ``Authorization: Bearer`` or ``x-api-key`` header is
forwarded. The upstream model is the request's ``model`` unless
``ProxyConfig.model`` overrides it. One pooled ``httpx.AsyncClient`` is shared
by all requests, opened and closed with the app's lifespan.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal, NamedTuple, Protocol

import anyio
import httpx
import msgspec
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from streamtools.errors import ProviderError
from streamtools.events import Event, StreamError
from streamtools.model import Model
from streamtools.proxy import anthropic_wire, openai_wire
from streamtools.proxy.request import ProxyCall, Reply, RequestError, kind_for_status
from streamtools.proxy.turn import Emit, run_turn

__all__ = ["ProxyConfig", "create_app"]

UpstreamKind = Literal["openai", "anthropic", "ollama"]
ModelFactory = Callable[[str, "str | None"], Model]

_decode_json = msgspec.json.Decoder().decode
_encode_json = msgspec.json.Encoder().encode


class ProxyConfig(msgspec.Struct, kw_only=True):
    """How the proxy reaches its upstream and parses its output."""

    upstream: str = "http://127.0.0.1:11434/v1"
    upstream_kind: UpstreamKind = "openai"
    dialect: str = "am_xml"
    api_key: str | None = None
    model: str | None = None  # overrides the request's model
    max_body: int = 8 * 1024 * 1024
    max_repairs: int = 1
    timeout: float = 120.0
    max_connections: int = 1000


class _Encoder(Protocol):
    media_type: str

    def start(self) -> bytes: ...
    def encode(self, event: Event) -> bytes: ...
    def error(self, status: int, message: str, kind: str) -> bytes: ...


class _Wire(NamedTuple):
    decode: Callable[[Any], ProxyCall]
    encoder: Callable[[ProxyCall], _Encoder]
    body: Callable[[Reply, str], dict[str, Any]]
    error: Callable[[int, str, str], dict[str, Any]]
    id_prefix: str


OPENAI = _Wire(
    openai_wire.decode_request,
    lambda call: openai_wire.ChunkEncoder(call.model, include_usage=call.include_usage),
    openai_wire.response_body,
    openai_wire.error_body,
    "call_",
)
ANTHROPIC = _Wire(
    anthropic_wire.decode_request,
    lambda call: anthropic_wire.EventEncoder(call.model),
    anthropic_wire.response_body,
    anthropic_wire.error_body,
    "toolu_",
)


def _error_response(wire: _Wire, status: int, message: str, kind: str | None = None) -> Response:
    body = wire.error(status, message, kind or kind_for_status(status))
    return Response(_encode_json(body), status_code=status, media_type="application/json")


def _provider_error(exc: ProviderError) -> tuple[int, str]:
    status = exc.status if exc.status is not None and exc.status >= 400 else 502
    return status, f"upstream error: {exc}"


class _TurnResponse(Response):
    """Streams one turn; sends the status line with the first event (see above)."""

    def __init__(self, wire: _Wire, call: ProxyCall, model: Model, config: ProxyConfig) -> None:
        super().__init__(media_type="text/event-stream")
        self.wire, self.call, self.model, self.config = wire, call, model, config
        self.encoder = wire.encoder(call)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def emit(event: Event) -> None:
            nonlocal started
            if not started:
                started = True
                headers = [
                    (b"content-type", b"text/event-stream; charset=utf-8"),
                    (b"cache-control", b"no-cache"),
                    (b"x-accel-buffering", b"no"),
                ]
                await send({"type": "http.response.start", "status": 200, "headers": headers})
                await send(
                    {"type": "http.response.body", "body": self.encoder.start(), "more_body": True}
                )
            if isinstance(event, StreamError):
                status = 502
                data = self.encoder.error(status, event.message, "upstream")
            else:
                data = self.encoder.encode(event)
            if data:
                await send({"type": "http.response.body", "body": data, "more_body": True})

        async with anyio.create_task_group() as tg:

            async def watch_disconnect() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                tg.cancel_scope.cancel()

            tg.start_soon(watch_disconnect)
            try:
                await _drive(self.model, self.call, emit, self.config, self.wire)
            except ProviderError as exc:  # raised only before the first event
                status, message = _provider_error(exc)
                await _error_response(self.wire, status, message)(scope, receive, send)
                tg.cancel_scope.cancel()
                return
            except OSError:  # the client went away while we were writing
                tg.cancel_scope.cancel()
                return
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            tg.cancel_scope.cancel()


async def _drive(
    model: Model, call: ProxyCall, emit: Emit, config: ProxyConfig, wire: _Wire
) -> None:
    await run_turn(
        model,
        call,
        emit,
        dialect=config.dialect,
        max_repairs=config.max_repairs,
        id_prefix=wire.id_prefix,
    )


def _client_key(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip() or None
    return request.headers.get("x-api-key") or None


async def _read_body(request: Request, limit: int) -> Any:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise RequestError(f"request body exceeds {limit} bytes", status=413, kind="too_large")
    data = bytearray()
    async for piece in request.stream():
        data += piece
        if len(data) > limit:
            raise RequestError(f"request body exceeds {limit} bytes", status=413, kind="too_large")
    try:
        return _decode_json(bytes(data))
    except msgspec.DecodeError as exc:
        raise RequestError(f"the request body is not valid JSON: {exc}") from exc


def _default_factory(config: ProxyConfig, client: httpx.AsyncClient) -> ModelFactory:
    from streamtools.providers import AnthropicMessages, OllamaChat, OpenAIChat

    def make(model: str, api_key: str | None) -> Model:
        common: dict[str, Any] = {"base_url": config.upstream, "client": client}
        common["timeout"] = config.timeout
        if config.upstream_kind == "anthropic":
            return AnthropicMessages(model, api_key=api_key, **common)
        if config.upstream_kind == "ollama":
            return OllamaChat(model, **common)
        return OpenAIChat(model, api_key=api_key, **common)

    return make


def create_app(
    config: ProxyConfig | None = None, *, model_factory: ModelFactory | None = None
) -> Starlette:
    """The proxy as an ASGI app. ``model_factory(model, api_key)`` replaces the
    HTTP upstream (tests and embedding use it); by default a provider for
    ``config.upstream_kind`` is made per request over one pooled client."""
    cfg = config or ProxyConfig()
    state: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        limits = httpx.Limits(max_connections=cfg.max_connections, max_keepalive_connections=200)
        async with httpx.AsyncClient(limits=limits, timeout=cfg.timeout) as client:
            state["client"] = client
            state["factory"] = model_factory or _default_factory(cfg, client)
            yield

    def upstream(request: Request, call: ProxyCall) -> Model:
        factory: ModelFactory = state["factory"]
        return factory(cfg.model or call.model, cfg.api_key or _client_key(request))

    async def handle(request: Request, wire: _Wire) -> Response:
        try:
            call = wire.decode(await _read_body(request, cfg.max_body))
        except RequestError as exc:
            return _error_response(wire, exc.status, exc.message, exc.kind)
        except ClientDisconnect:
            return Response(status_code=499)
        model = upstream(request, call)
        if call.stream:
            return _TurnResponse(wire, call, model, cfg)
        reply = Reply()

        async def collect(event: Event) -> None:
            reply.add(event)
            if isinstance(event, StreamError):
                raise _Failed(event.message)

        try:
            await _drive(model, call, collect, cfg, wire)
        except ProviderError as exc:
            return _error_response(wire, *_provider_error(exc))
        except _Failed as exc:
            return _error_response(wire, 502, str(exc), "upstream")
        body = wire.body(reply, call.model)
        return Response(_encode_json(body), media_type="application/json")

    async def chat_completions(request: Request) -> Response:
        return await handle(request, OPENAI)

    async def messages(request: Request) -> Response:
        return await handle(request, ANTHROPIC)

    async def models(request: Request) -> Response:
        wire = ANTHROPIC if "anthropic-version" in request.headers else OPENAI
        client: httpx.AsyncClient = state["client"]
        key = cfg.api_key or _client_key(request)
        base = cfg.upstream.rstrip("/")
        headers: dict[str, str] = {}
        if cfg.upstream_kind == "anthropic":
            url = f"{base}/v1/models"
            headers["anthropic-version"] = request.headers.get("anthropic-version", "2023-06-01")
            if key:
                headers["x-api-key"] = key
        else:
            url = f"{base}/models" if cfg.upstream_kind == "openai" else f"{base}/v1/models"
            if key:
                headers["authorization"] = f"Bearer {key}"
        try:
            upstream_response = await client.get(
                url, headers=headers, params=list(request.query_params.multi_items())
            )
        except httpx.HTTPError as exc:
            return _error_response(wire, 502, f"upstream unreachable: {exc!r}")
        ctype = upstream_response.headers.get("content-type", "application/json")
        return Response(upstream_response.content, upstream_response.status_code, media_type=ctype)

    routes = [
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/messages", messages, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


class _Failed(Exception):
    """A non-streaming turn failed after it began."""
