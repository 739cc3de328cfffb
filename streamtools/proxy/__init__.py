"""OpenAI- and Anthropic-compatible tool calling in front of any plain chat model.

``streamtools proxy --upstream URL`` (or ``create_app(ProxyConfig(...))`` under any
ASGI server) serves ``POST /v1/chat/completions``, ``POST /v1/responses``,
``POST /v1/messages``, ``POST /v1/messages/count_tokens`` and ``GET /v1/models``.
Tools in a request become the
dialect's system prompt; the upstream's text is parsed as it streams and
re-encoded as native ``tool_calls`` deltas, ``function_call`` items or
``tool_use`` blocks. Needs the ``streamtools[proxy]`` extra.

Modules: ``request`` (the wire-neutral request and reply), ``openai_wire``,
``responses_wire`` (its request decoding in ``responses_request``) and
``anthropic_wire`` (decoding and exact encoding per API),
``turn`` (one upstream turn through the parser, with bounded repairs),
``tokens`` (token counts for Anthropic clients),
``response`` (the streaming response, coalesced writes, errors in the client's
format), ``app`` (Starlette routes, configuration, body limit, upstream pools).

The app is imported on first use, so that the wire modules (pure functions over
msgspec) import without the ``proxy`` extra installed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from streamtools.proxy.app import ProxyConfig, create_app

__all__ = ["ProxyConfig", "create_app"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("streamtools.proxy.app"), name)
    raise AttributeError(f"module 'streamtools.proxy' has no attribute {name!r}")
