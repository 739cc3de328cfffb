"""What an upstream refused, remembered across the proxy's requests.

Theory of operation
-------------------
An ``OpenAIChat`` that meets a 400 refusing one of its own fields (``stop``,
``stream_options``, ``max_tokens`` for ``max_completion_tokens``:
``providers.refused_fields``) leaves it out and asks again, and remembers that
for its later requests. The proxy makes a provider per request, so that memory
died with each request: every request to such an upstream (an OpenAI reasoning
model refusing ``stop``) paid a refusal and a second request.

``Refusals`` keeps what the providers learned, per upstream (the provider's
class, base URL and model; not per client key: a refusal is the model's, not
the caller's), and hands it to the next provider made for the same upstream
(``applied``) before its first request. ``learn`` is called when a request is
done, with whatever the provider learned by then. Nothing of a conversation
is kept: three settings per upstream, only for upstreams that refused
something, at most ``limit`` of them (the least recently taught is dropped
first). Both methods run without an ``await`` on the event loop, so requests
running at once cannot interleave them; what one request learns while
another is under way reaches the requests made after it ends. Learned
settings only ever narrow (a field left out stays left out): two requests
that learned different fields are merged, not overwritten. The tool schema
rule (``providers.toolschema``) is not kept: the proxy sends a request's tools
in the prompt, never as native tools, so no upstream refuses one of its
schemas. The fields the proxy forwards for a client (``reasoning_effort``,
``prompt_cache_key``) and the client's sampling options (``forwarded``) are
kept the same way, for every kind of upstream (OpenAI-compatible, Anthropic,
Ollama): one an upstream refused is left out of its later requests. Each
request's provider is wrapped (``forwarded.Forwarded``) to learn them; an
entry is written only when a request learned something it was not told.

What is learned is kept for ``lifetime`` seconds (an hour) from when it was
last taught, then forgotten: an upstream that stops refusing (a server
upgraded, another model loaded under the same name: llama-swap, Ollama) got
the narrowed request until the proxy restarted. One that still refuses costs
one refusal an hour. Requests told what to leave out teach nothing new, so
they do not keep an entry alive.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from streamtools.model import Model
from streamtools.providers import OllamaChat, OpenAIChat
from streamtools.proxy.forwarded import Forwarded, sent_fields

__all__ = ["Refusals"]

_RENAMED = "max_completion_tokens"
# (stream_usage, supports_stop, max_tokens_field, fields and options refused)
Learned = tuple[bool, bool, str, frozenset[str]]
Key = tuple[str, str, str]
_NOTHING: Learned = (True, True, "max_tokens", frozenset())
LIFETIME = 3600.0  # seconds a refusal is remembered (module docstring)


def _key(provider: Any) -> Key:
    return type(provider).__qualname__, str(provider.base_url), str(provider.model)


def _state(provider: Model, refused: frozenset[str]) -> Learned:
    """What ``provider`` knows its upstream refuses (``refused``: the rest)."""
    if isinstance(provider, OpenAIChat):
        return (provider.stream_usage, provider.supports_stop, provider.max_tokens_field, refused)
    return (True, True, "max_tokens", refused)


class Refusals:
    """The fields each upstream refused, at most ``limit`` upstreams (see the
    module docstring)."""

    def __init__(
        self, limit: int = 256, lifetime: float = LIFETIME,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._limit = max(1, limit)
        self._lifetime, self._clock = lifetime, clock
        self._known: dict[Key, tuple[float, Learned]] = {}  # (when taught, what)

    def __len__(self) -> int:
        return len(self._known)

    def _get(self, key: Key) -> Learned | None:
        """What is known of ``key``'s upstream, unless it is older than the lifetime."""
        entry = self._known.get(key)
        if entry is None:
            return None
        if self._clock() - entry[0] >= self._lifetime:
            del self._known[key]  # forgotten: its next request sends everything again
            return None
        return entry[1]

    def applied(self, provider: Model, forward: dict[str, Any] | None = None) -> Forwarded:
        """``provider``, leaving out what its upstream refused before, adding the
        client's ``forward`` fields to its requests when it is OpenAI-compatible
        or Ollama (``forwarded.sent_fields``), less those it refused."""
        known = self._get(_key(provider))
        if isinstance(provider, OpenAIChat) and known is not None:
            usage, stop, field, _ = known
            provider.stream_usage = provider.stream_usage and usage
            provider.supports_stop = provider.supports_stop and stop
            if field == _RENAMED:
                provider.max_tokens_field = field
        kind = "openai" if isinstance(provider, OpenAIChat) else (
            "ollama" if isinstance(provider, OllamaChat) else "")
        # the operator's ``extra_body`` (``--upstream-body``) wins over a client's
        # field: else a client's effort turned thinking back on for every request
        ours = getattr(provider, "extra_body", None) or {}
        fields = {k: v for k, v in sent_fields(forward or {}, kind).items() if k not in ours}
        wrapped = Forwarded(provider, fields, set(known[3] if known else ()))
        wrapped.told = _state(provider, wrapped.given)
        return wrapped

    def learn(self, model: Model) -> None:
        """Keep what ``model`` (``applied``'s) learned of its upstream, if anything."""
        if not isinstance(model, Forwarded):
            return
        provider = model.inner
        usage, stop, field, refused = _state(provider, frozenset(model.refused))
        if (usage, stop, field, refused) in (model.told, _NOTHING):
            return  # nothing new: no entry, so the bound is spent on refusers only
        key = _key(provider)
        old = self._get(key)
        self._known.pop(key, None)  # re-inserted last: the most recently taught
        if old is not None:
            usage, stop = usage and old[0], stop and old[1]
            field = _RENAMED if _RENAMED in (field, old[2]) else field
            refused |= old[3]
        self._known[key] = (self._clock(), (usage, stop, field, refused))
        while len(self._known) > self._limit:
            del self._known[next(iter(self._known))]
