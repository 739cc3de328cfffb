"""The proxy's ASGI app: OpenAI- and Anthropic-compatible tool calling over a plain upstream.

Theory of operation
-------------------
``create_app(ProxyConfig(...))`` returns a Starlette app with seven routes:

* ``POST /v1/chat/completions`` and ``POST /v1/responses`` (OpenAI) and
  ``POST /v1/messages`` (Anthropic). The body is read up to ``max_body``
  bytes (413 beyond; a gzip or deflate body is decompressed, up to ``max_body``
  bytes again, another coding is a 415), decoded by the wire module into a ``ProxyCall``, and
  one upstream turn is driven by ``turn.run_turn``. Streaming answers are
  written by ``response.TurnResponse`` (status line sent once the upstream has
  accepted the request, so an upstream refusal keeps its status, or once
  ``ping_interval`` seconds have passed without its answer; then a
  keep-alive every ``ping_interval`` seconds of silence; later failures are
  written in-band; a client disconnect cancels the turn and the upstream request). Non-streaming
  answers collect the same events into one body; a failure after the turn began
  becomes a 502 in the client's format.
* ``POST /v1/messages/count_tokens`` (Anthropic) and ``POST
  /v1/responses/input_tokens`` (Responses) count the input tokens of the
  request the proxy would send upstream: the upstream's count where it has
  one (Anthropic's API, a vLLM or llama.cpp tokenizer), else, or when it
  fails, an estimate (``tokens``).
* ``GET /v1/models`` is the upstream's model listing, and ``GET
  /v1/models/{model_id}`` one of its models: passed through when the client
  speaks the upstream's API, else converted to the client's format (an
  Anthropic client, known by its ``anthropic-version`` header, gets Anthropic's
  pages of ``type: "model"`` entries from an OpenAI-style upstream, and an OpenAI
  client OpenAI's list from an Anthropic upstream).

Stateless: each request carries the whole conversation; nothing of one is
cached between requests, so replicas scale behind any load balancer. What an
upstream refused (``stop`` to a reasoning model) is kept per upstream
(``learned``), so only the first request pays the refusal.

Upstream API key: ``ProxyConfig.api_key`` when configured (the operator's key),
else the client's own ``Authorization: Bearer`` or ``x-api-key`` header is
forwarded. The upstream model is the request's ``model`` unless
``ProxyConfig.model`` overrides it; with one configured, a request may leave
``model`` out (``_named``: Codex App sends some Responses requests without one).

The POST endpoints bypass Starlette's middleware (``_ProxyApp``): a
streamed answer calls ``send`` once per chunk, and each middleware added a hop.
The upstream is read by the package's providers as they are (``OpenAIChat``,
``AnthropicMessages``, ``OllamaChat``). (A proxy-only SSE reader, which also let
the chunks of one network read leave in one ``send``, was measured against
them and taken out: the bench could not tell the two apart.)

The upstream clients are ``network.Upstreams``: one connection each, made as
needed, the warmest reused first, made and closed by the ASGI lifespan; a
host that runs none (``httpx.ASGITransport``, ``uvicorn --lifespan off``) gets a
client per request instead, which nothing would otherwise close.

``create_app_from_env`` builds the same app from ``$STREAMTOOLS_PROXY_CONFIG``
(the ``ProxyConfig`` as JSON) in each worker process of
``streamtools proxy --workers N``.
"""

from __future__ import annotations

import logging
import math
import os
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, Literal
from urllib.parse import quote

import anyio
import httpx
import msgspec
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from streamtools.browser_guard import refusal
from streamtools.errors import ProviderError, ToolDefinitionError, UsageError
from streamtools.events import Event, StreamError
from streamtools.model import Model
from streamtools.prompts import get_renderer
from streamtools.providers import AnthropicMessages, OllamaChat, OpenAIChat
from streamtools.providers.base import sendable_header
from streamtools.providers.failures import transport_error
from streamtools.proxy import anthropic_wire, openai_wire
from streamtools.proxy.body import read_body
from streamtools.proxy.learned import Refusals
from streamtools.proxy.network import Upstreams, upstream_client
from streamtools.proxy.request import ProxyCall, Reply, RequestError, forwarded_format
from streamtools.proxy.response import (
    ANTHROPIC,
    NO_RETRY,
    OPENAI,
    RESPONSES,
    TurnResponse,
    Wire,
    error_response,
    failed_response,
    provider_error_response,
    upstream_status,
)
from streamtools.proxy.tokens import ESTIMATE_HEADER, TokenCounter
from streamtools.proxy.turn import Emit, Flush, run_turn
from streamtools.proxy.upstream import upstream_request

__all__ = ["CONFIG_ENV", "ProxyConfig", "create_app", "create_app_from_env"]

UpstreamKind = Literal["openai", "anthropic", "ollama"]
ModelFactory = Callable[[str, str | None], Model]

log = logging.getLogger("streamtools.proxy")
_decode_json = msgspec.json.Decoder().decode
_encode_json = msgspec.json.Encoder().encode


class ProxyConfig(msgspec.Struct, kw_only=True):
    """How the proxy reaches its upstream and parses its output."""

    upstream: str = "http://127.0.0.1:11434/v1"
    upstream_kind: UpstreamKind = "openai"
    dialect: str = "am_xml"
    # the upstream's chat template ends the prompt with <think> (DeepSeek-R1, QwQ):
    # its replies begin inside reasoning (``Parser(think_open=True)``; where the
    # proxy parses, in requests with tools)
    think_open: bool = False
    api_key: str | None = None
    model: str | None = None  # overrides the request's model
    # Anthropic's Messages API takes 32 MB: a coding agent's conversation of pasted
    # screenshots (base64, never sent upstream) went past 8 MiB, and got a 413 for
    # that request and every later one of its session
    max_body: int = 32 * 1024 * 1024
    max_repairs: int = 1
    timeout: float = 120.0
    # 0: an upstream 429/5xx goes straight back to the client, whose SDK retries
    # with its own policy (retrying here too would multiply the attempts)
    upstream_retries: int = 0
    # seconds each request waits for an upstream that refuses connections, as
    # vLLM and SGLang do until their model is loaded (``HTTPProvider``'s
    # ``connect_wait``; 0: a refusal fails at once)
    connect_wait: float = 0.0
    max_connections: int = 1024  # to the upstream (each its own httpx client)
    keepalive: float = 4.0  # seconds an idle upstream connection is kept
    # the longest a streaming client waits for a byte: the answer begins then if
    # the upstream has not answered yet, else a keep-alive is sent (0: never;
    # see ``response``)
    ping_interval: float = 15.0
    # fields added to every upstream request body, merged one level deep
    # (``{"options": {"num_ctx": 32768}}`` for Ollama); see ``HTTPProvider``
    upstream_body: dict[str, Any] = msgspec.field(default_factory=dict)
    # the only names the Host header may give (``browser_guard``): the CLI sets the
    # loopback names when it binds a loopback address; None: any
    hosts: tuple[str, ...] | None = None


def _client_key(request: Request) -> str | None:
    """The client's own key, to forward upstream. One that no request can carry
    (a key pasted with a "…" or a non-breaking space: its bytes come as
    Latin-1) is a 401, as a key the upstream refuses would be; the provider
    refused it with a UsageError, a plain 500 that held an upstream connection."""
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        key = auth[7:].strip() or None
    else:
        key = request.headers.get("x-api-key") or None
    if key is not None and not sendable_header(key):
        raise RequestError(
            "the API key holds a character an HTTP header cannot carry (a non-ASCII or "
            "control character): check it for a pasted extra character",
            status=401,
            kind="authentication",
        )
    return key


_NO_JSON_OBJECT = (
    "an Anthropic upstream constrains a reply to a JSON schema, not to any JSON object: "
    "use response_format json_schema"
)


def _provider(
    config: ProxyConfig, model: str, key: str | None, client: httpx.AsyncClient | None
) -> Model:
    common: dict[str, Any] = {"base_url": config.upstream, "client": client}
    common["timeout"] = config.timeout
    common["max_retries"] = config.upstream_retries
    common["connect_wait"] = config.connect_wait
    common["extra_body"] = config.upstream_body
    if config.upstream_kind == "anthropic":
        return AnthropicMessages(model, api_key=key, **common)
    if config.upstream_kind == "ollama":
        return OllamaChat(model, **common)
    return OpenAIChat(model, api_key=key, **common)


def create_app(
    config: ProxyConfig | None = None, *, model_factory: ModelFactory | None = None
) -> Starlette:
    """The proxy as an ASGI app. ``model_factory(model, api_key)`` replaces the
    HTTP upstream (tests and embedding use it); by default a provider for
    ``config.upstream_kind`` is made per request over the pooled clients."""
    cfg = config or ProxyConfig()
    # made now, not per request: UnknownDialectError names the choices
    renderer = get_renderer(cfg.dialect)
    if cfg.upstream_kind not in ("openai", "anthropic", "ollama"):
        raise UsageError(f"unknown upstream_kind {cfg.upstream_kind!r}")
    if not cfg.ping_interval >= 0 or cfg.ping_interval == math.inf:
        raise UsageError(f"ping_interval must be a number of seconds >= 0, not {cfg.ping_interval}")
    if model_factory is None:
        # a bad upstream URL or api_key is a UsageError now that names it, not
        # one per request (each a plain 500)
        _provider(cfg, cfg.model or "", cfg.api_key, None)
    state: dict[str, Any] = {}
    counter = TokenCounter()  # remembers an upstream without a tokenizer endpoint
    refusals = Refusals()  # the fields each upstream refused (``learned``)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # idle connections are dropped before 5 s, the idle timeout of Uvicorn,
        # Node and others: reusing one the server is closing fails the request
        limits = httpx.Limits(
            max_connections=1, max_keepalive_connections=1, keepalive_expiry=cfg.keepalive
        )
        tls = ssl.create_default_context()  # loaded once, shared by the clients

        def client() -> httpx.AsyncClient:  # see network.py
            return upstream_client(limits, tls, cfg.timeout)

        upstreams = Upstreams(client, cfg.max_connections)
        state["upstreams"] = upstreams
        try:
            yield
        finally:
            del state["upstreams"]
            await upstreams.aclose()

    def lease() -> tuple[httpx.AsyncClient | None, Callable[[], None]]:
        """A pooled upstream client for one request, and its release. A host that
        runs no lifespan (``httpx.ASGITransport``, ``uvicorn --lifespan off``) has
        no pool, and nothing would close one: each request gets its own client
        then (None: the provider's own, closed when the request ends)."""
        upstreams: Upstreams | None = state.get("upstreams")
        if upstreams is None:
            return None, lambda: None
        index = upstreams.acquire()  # an idle connection, not one a stream holds
        return upstreams.clients[index], partial(upstreams.release, index)

    def upstream(request: Request, call: ProxyCall) -> tuple[Model, Callable[[], None]]:
        """The upstream model for one request, and what to call when it is done."""
        name, key = cfg.model or call.model, cfg.api_key or _client_key(request)
        if model_factory is not None:
            return model_factory(name, key), lambda: None
        client, release = lease()
        try:
            provider = refusals.applied(_provider(cfg, name, key, client), call.forward)
        except BaseException:
            release()  # else the connection counts as busy for good
            raise

        def done() -> None:
            try:
                refusals.learn(provider)
            finally:
                release()  # whatever learning does, the connection is given back

        return provider, done

    def decoded(wire: Wire, body: Any) -> ProxyCall:
        """The request, once its tools are known to suit the dialect: a name the
        dialect cannot write (``command`` ends one at a space) is a 400 naming
        it, not a 500 when the prompt is made."""
        call = wire.decode(body)
        try:
            renderer.check_tools(call.tools)
        except ToolDefinitionError as exc:
            raise RequestError(str(exc)) from None
        return call

    async def handle(request: Request, wire: Wire) -> Response:
        try:
            call = decoded(wire, _named(await read_body(request, cfg.max_body), cfg.model))
            asked = forwarded_format(call)
            if asked and asked["type"] == "json_object" and cfg.upstream_kind == "anthropic":
                raise RequestError(_NO_JSON_OBJECT)
            sent = upstream_request(call, cfg.dialect)  # before the lease: nothing to release
            model, done = upstream(request, call)
        except RequestError as exc:
            return error_response(wire, exc.status, exc.message, exc.kind)
        except ClientDisconnect:
            return Response(status_code=499)
        except Exception:  # a bug of ours (this path has no exception handler, see _ProxyApp)
            log.exception("proxy request failed")
            # before any upstream request: the same body meets the same bug
            return error_response(wire, 500, "internal error in the proxy", "internal", NO_RETRY)

        async def drive(emit: Emit, flush: Flush | None = None, ready: Flush | None = None) -> None:
            try:
                await run_turn(
                    model,
                    call,
                    emit,
                    dialect=cfg.dialect,
                    think_open=cfg.think_open,
                    max_repairs=cfg.max_repairs,
                    id_prefix=wire.id_prefix,
                    flush=flush,
                    ready=ready,
                    request=sent,
                )
            except ProviderError as exc:
                if exc.status != 404:
                    raise
                raise _not_found(exc, cfg, cfg.model or call.model) from None
            finally:
                done()

        if call.stream:
            return TurnResponse(wire, call, sent, drive, ping_interval=cfg.ping_interval)
        reply = Reply()

        async def collect(event: Event) -> None:
            reply.add(event)
            if isinstance(event, StreamError):
                raise _Failed(event)

        async def answer() -> Response:
            try:
                await drive(collect)
            except ProviderError as exc:
                return provider_error_response(wire, exc)
            except _Failed as exc:
                return failed_response(wire, exc.error)
            except Exception:  # a bug of ours: log it, answer in the client's format
                log.exception("proxy turn failed")
                return error_response(wire, 500, "internal error in the proxy", "internal")
            body = wire.body(reply, call)
            return Response(_encode_json(body), media_type="application/json")

        # a client that gave up (its timeout) ends the upstream request: no
        # generating for nobody, as for a stream (see response.TurnResponse)
        return await _unless_disconnected(request, answer) or Response(status_code=499)

    async def chat_completions(request: Request) -> Response:
        return await handle(request, OPENAI)

    async def messages(request: Request) -> Response:
        return await handle(request, ANTHROPIC)

    async def responses(request: Request) -> Response:
        return await handle(request, RESPONSES)

    async def count_tokens(request: Request) -> Response:
        # a count has no answer to bound: max_tokens, which the decoder asks for, is not sent
        return await counted(request, ANTHROPIC, {"max_tokens": 1}, {})

    async def input_tokens(request: Request) -> Response:
        # the Responses API's count (the openai SDK's responses.input_tokens.count),
        # whose model is optional (then the configured one: ``_named``)
        return await counted(request, RESPONSES, {}, {"object": "response.input_tokens"})

    async def counted(
        request: Request, wire: Wire, defaults: dict[str, Any], shape: dict[str, Any]
    ) -> Response:
        """The input tokens of the request the proxy would send upstream (see
        tokens.py), in ``wire``'s answer: ``shape`` plus ``input_tokens``.
        ``defaults`` fill fields the count request may leave out."""
        try:
            body = await read_body(request, cfg.max_body)
            if isinstance(body, dict):
                body = {**defaults, **body}
            call = decoded(wire, _named(body, cfg.model))
            model, done = upstream(request, call)
        except RequestError as exc:
            return error_response(wire, exc.status, exc.message, exc.kind)
        except ClientDisconnect:
            return Response(status_code=499)
        try:
            # never refused: a count the upstream cannot give is an estimate
            tokens, exact = await counter.count(model, upstream_request(call, cfg.dialect))
        finally:
            done()
        return Response(
            _encode_json({**shape, "input_tokens": tokens}),
            media_type="application/json",
            headers={} if exact else {ESTIMATE_HEADER: "estimate"},
        )

    async def models(request: Request) -> Response:
        return await listing(request, None)

    async def model(request: Request) -> Response:
        return await listing(request, request.path_params["model_id"])

    async def listing(request: Request, model_id: str | None) -> Response:
        """``GET /v1/models``, or ``GET /v1/models/{model_id}`` (one model, the
        SDKs' ``models.retrieve``): the upstream's answer, converted to the
        client's format when its API differs."""
        wire = _client_wire(request)
        # the upstream's list is in its own API's format: converted when the client's differs
        convert = (wire is ANTHROPIC) != (cfg.upstream_kind == "anthropic")
        try:
            key = cfg.api_key or _client_key(request)
        except RequestError as exc:
            return error_response(wire, exc.status, exc.message, exc.kind)
        base = cfg.upstream.rstrip("/")
        # the id as the SDKs write it in a path ("org/name" as "org%2Fname")
        one = "" if model_id is None else "/" + quote(model_id, safe=":@")
        headers: dict[str, str] = {}
        params = httpx.QueryParams(str(request.query_params))
        if cfg.upstream_kind == "anthropic":
            url = f"{base}/v1/models{one}"
            headers["anthropic-version"] = request.headers.get("anthropic-version", "2023-06-01")
            if key:
                headers["x-api-key"] = key
            if convert and model_id is None:  # an OpenAI client gets the whole list:
                params = httpx.QueryParams(limit=1000)  # one page of 1000 (the most)
        else:
            path = "/models" if cfg.upstream_kind == "openai" else "/v1/models"
            url = f"{base}{path}{one}"
            if key:
                headers["authorization"] = f"Bearer {key}"
            if convert:  # no pages: the client's are cut from the whole list
                params = httpx.QueryParams()
        pooled, release = lease()
        client = pooled or httpx.AsyncClient(timeout=cfg.timeout)
        try:
            upstream_response = await client.get(url, headers=headers, params=params)
        except httpx.HTTPError as exc:  # a timeout is a 504, as for a turn
            status = upstream_status(transport_error(exc))
            return error_response(wire, status, f"upstream unreachable: {exc!r}")
        finally:
            release()
            if pooled is None:
                await client.aclose()
        if not convert:
            ctype = upstream_response.headers.get("content-type", "application/json")
            return Response(
                upstream_response.content,
                upstream_response.status_code,
                headers=_retry_advice(upstream_response),
                media_type=ctype,
            )
        return _converted_models(wire, upstream_response, request.query_params, model_id)

    async def http_error(request: Request, exc: Exception) -> Response:
        # unknown paths and wrong methods, answered as the client's API would
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        wire = ANTHROPIC if request.url.path.startswith("/v1/messages") else _client_wire(request)
        said = f"{request.method} {request.url.path}: {exc}"
        if status == 404:
            said += _base_url_hint(request.url.path, str(request.base_url).rstrip("/"))
        return error_response(wire, status, said)

    async def internal_error(request: Request, exc: Exception) -> Response:
        # a bug of ours in count_tokens or the model listing (the turns catch
        # their own): Starlette logs it, and answered plain "Internal Server
        # Error", which the client's SDK could not read
        wire = ANTHROPIC if request.url.path.startswith("/v1/messages") else _client_wire(request)
        return error_response(wire, 500, "internal error in the proxy", "internal")

    routes = [
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/messages", messages, methods=["POST"]),
        Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
        Route("/v1/responses", responses, methods=["POST"]),
        Route("/v1/responses/input_tokens", input_tokens, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        # a model id may hold a slash ("org/name"; the SDKs send it as %2F)
        Route("/v1/models/{model_id:path}", model, methods=["GET"]),
    ]
    app = _ProxyApp(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={HTTPException: http_error, Exception: internal_error},
    )
    app.fast = {
        "/v1/chat/completions": chat_completions,
        "/v1/messages": messages,
        "/v1/responses": responses,
    }
    app.hosts = cfg.hosts
    return app


class _ProxyApp(Starlette):
    """Starlette, with the POST endpoints served past its middleware.

    Starlette's middleware wraps ``send`` twice; a streamed answer calls it once
    per chunk, so those two hops were paid per chunk. ``handle`` already answers
    every failure in the client's format, which is all the middleware did here.
    """

    fast: dict[str, Callable[[Request], Awaitable[Response]]] = {}
    hosts: tuple[str, ...] | None = None  # ``ProxyConfig.hosts``

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (
            refused := refusal(Headers(scope=scope), hosts=self.hosts, sites=(), fix=_NO_CORS)
        ):  # a web page's request, or a rebound name's (``browser_guard``): run nothing
            wire = _client_wire(Request(scope, receive))
            await error_response(wire, *refused, headers=NO_RETRY)(scope, receive, send)
            return
        if scope["type"] == "http" and scope["method"] == "POST" and not scope.get("root_path"):
            endpoint = self.fast.get(scope["path"])
            if endpoint is not None:
                scope["app"] = self
                response = await endpoint(Request(scope, receive))
                await response(scope, receive, send)
                return
        await super().__call__(scope, receive, send)


CONFIG_ENV = "STREAMTOOLS_PROXY_CONFIG"


def create_app_from_env() -> Starlette:
    """``create_app`` with the ``ProxyConfig`` JSON found in ``$STREAMTOOLS_PROXY_CONFIG``:
    the factory each Uvicorn worker process calls (``streamtools proxy --workers N``)."""
    raw = os.environ.get(CONFIG_ENV)
    if not raw:
        raise UsageError(f"${CONFIG_ENV} is not set")
    return create_app(msgspec.json.decode(raw, type=ProxyConfig))


def _named(body: Any, model: str | None) -> Any:
    """``body`` with the configured ``model`` where it names none (absent or
    null). Codex App leaves ``model`` out of some Responses requests of a
    custom provider (most of them, in one report: openai/codex#41095); the
    proxy, which sends ``model`` upstream in its place anyway, refused them as
    LiteLLM did, and the app showed "Reconnecting" until it gave up."""
    if model and isinstance(body, dict) and body.get("model") is None:
        return {**body, "model": model}
    return body


_SERVED = ("chat/completions", "responses", "messages", "models")


def _base_url_hint(path: str, root: str) -> str:
    """What to change when ``path`` is one the proxy serves under another prefix:
    a client's base URL without ``/v1`` (OpenAI's SDKs add only the endpoint)
    or with it (Anthropic's add ``/v1`` too), the commonest setup mistake."""
    served = next((e for e in _SERVED if path.endswith(f"/{e}") and path != f"/v1/{e}"), None)
    if served is None:
        return ""
    return (
        f". The proxy serves /v1/{served}: an OpenAI client's base URL is {root}/v1, "
        f"an Anthropic client's is {root}"
    )


def _client_wire(request: Request) -> Wire:
    """The API a request's client speaks where its path does not tell (``GET
    /v1/models``, an unknown path): Anthropic's when it sends ``anthropic-version``,
    as the anthropic SDK does with every request (the openai SDK never does), else
    OpenAI's. An Anthropic client answered in OpenAI's shape got an error its SDK
    could not read (no ``type``, a message under another key)."""
    return ANTHROPIC if "anthropic-version" in request.headers else OPENAI


async def _unless_disconnected(
    request: Request, answer: Callable[[], Awaitable[Response]]
) -> Response | None:
    """``answer()``, or None when the client disconnects first (``answer`` is
    cancelled then). ``answer`` must return rather than raise."""
    answered: list[Response] = []
    async with anyio.create_task_group() as tg:

        async def watch() -> None:
            while (await request.receive())["type"] != "http.disconnect":
                pass
            tg.cancel_scope.cancel()

        tg.start_soon(watch)
        answered.append(await answer())
        tg.cancel_scope.cancel()
    return answered[0] if answered else None


def _converted_models(
    wire: Wire, upstream: httpx.Response, query: Mapping[str, str], model_id: str | None
) -> Response:
    """An upstream's model list, or its model ``model_id`` (or its refusal), in the
    client's API format (see ``anthropic_wire.model_list``, ``model_info``,
    ``openai_wire.model_list``, ``model_object``)."""
    if upstream.status_code >= 400:
        message = f"upstream error: HTTP {upstream.status_code}: {upstream.text[:1000]}"
        return error_response(wire, upstream.status_code, message, headers=_retry_advice(upstream))
    try:
        listing = _decode_json(upstream.content)
        if wire is ANTHROPIC:
            if model_id is None:
                body = anthropic_wire.model_list(listing, query)
            else:
                body = anthropic_wire.model_info(listing)
        elif model_id is None:
            body = openai_wire.model_list(listing)
        else:
            body = openai_wire.model_object(listing)
    except RequestError as exc:
        return error_response(wire, exc.status, exc.message, exc.kind)
    except (msgspec.DecodeError, ValueError, RecursionError) as exc:
        return error_response(wire, 502, f"upstream model list unreadable: {exc}", "upstream")
    return Response(_encode_json(body), media_type="application/json")


def _not_found(exc: ProviderError, cfg: ProxyConfig, model: str | None) -> ProviderError:
    """An upstream's 404 to a turn, with a hint at the fix for the client, and
    logged: the upstream does not know the model (the client's own name sent
    on, a Claude model's from Claude Code, where ``--model`` names the
    upstream's), or has no such endpoint (``--upstream`` without ``/v1``)."""
    if "model" in f"{exc} {exc.body or ''}".lower():
        fix = "start the proxy with --model NAME" if cfg.model is None else "check --model"
        hint = f"the upstream does not serve the model {model!r}: {fix}, its name for the model"
    elif cfg.upstream_kind == "openai" and not cfg.upstream.rstrip("/").endswith("/v1"):
        hint = (
            f"the upstream has no chat completions at {cfg.upstream}: an OpenAI-compatible "
            f"server's base URL usually ends in /v1 (--upstream {cfg.upstream.rstrip('/')}/v1)"
        )
    else:
        hint = f"check --upstream {cfg.upstream} (--upstream-kind) and the model {model!r}"
    log.warning("upstream answered 404: %s; %s", exc, hint)
    return ProviderError(
        f"{exc} (hint: {hint})",
        status=exc.status,
        body=exc.body,
        retryable=exc.retryable,
        retry_after=exc.retry_after,
        should_retry=exc.should_retry,
    )


def _retry_advice(upstream: httpx.Response) -> dict[str, str] | None:
    """An upstream refusal's word on a retry (``retry-after``, ``retry-after-ms``,
    ``x-should-retry``), passed on with it, as a turn's refusal passes it on."""
    if upstream.status_code < 400:
        return None
    return {k: v for k in _RETRY_ADVICE if (v := upstream.headers.get(k)) is not None}


_RETRY_ADVICE = ("retry-after", "retry-after-ms", "x-should-retry")
# what a refused web page is told: the proxy serves programs, no browser's page
_NO_CORS = "the proxy does not serve web pages' requests (it sends no CORS headers)"


class _Failed(Exception):
    """A non-streaming turn failed after it began (``error``, as the turn said it)."""

    def __init__(self, error: StreamError) -> None:
        super().__init__(error.message)
        self.error = error
