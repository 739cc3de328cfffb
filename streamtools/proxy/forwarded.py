"""A client's options as they go upstream: what it asked for, less what the
upstream refused.

Theory of operation
-------------------
A client asks how hard the model should think, in its API's words: chat
completions' ``reasoning_effort``, the Responses API's ``reasoning.effort``,
an Anthropic client's ``output_config.effort``; and an OpenAI client may name
its conversation for the server's prompt cache (``prompt_cache_key``). The
proxy dropped them all. Each wire now reads them into ``ProxyCall.forward``,
by the names chat completions gives them (``forward_fields``), and an
OpenAI-compatible upstream gets them in its request body (``Forwarded``):

* ``reasoning_effort`` is what the OpenAI-compatible servers read:
  llama.cpp's server (``none`` turns thinking off,
  https://github.com/ggml-org/llama.cpp/pull/26045; other levels reach the
  chat template, https://github.com/ggml-org/llama.cpp/pull/26941), Ollama's
  ``/v1`` (https://docs.ollama.com/api/openai-compatibility lists
  ``reasoning_effort``), vLLM (gpt-oss), OpenAI's reasoning models. An
  Anthropic effort ``max`` is ``high``, the highest level they all name.
* ``prompt_cache_key`` goes as it came: OpenAI routes on it, local servers
  ignore a field they do not know.
* An Anthropic client's ``thinking`` (``anthropic_effort``): ``disabled`` is
  ``none``, whatever ``output_config.effort`` says (with thinking off, the API
  spends that effort on the answer; Claude Code's WebSearch sends both). Else
  an ``output_config.effort`` wins, being the level itself; without one,
  ``enabled`` is the level of its ``budget_tokens``, by the
  thresholds LiteLLM reads a budget with in its Anthropic adapters (up to
  1,024 tokens ``low``, up to 2,048 ``medium``, more ``high``: its
  ``DEFAULT_REASONING_EFFORT_*_THINKING_BUDGET``), so Claude Code's default
  budget (31,999) is ``high``. No OpenAI-compatible server reads a budget.
  ``adaptive`` (the model decides how much) sends no level. (OpenRouter reads a
  budget as a share of ``max_tokens`` instead, ~20/50/80%: a client's
  ``max_tokens`` is its answer's limit, not the thinking's, so the proxy keeps
  LiteLLM's absolute numbers.)

Ollama's own API reads no ``reasoning_effort`` but ``think``, whose levels
only gpt-oss takes (other models refuse them: "think value "medium" is not
supported for this model"), so it gets a boolean (``sent_fields``): ``false``
for thinking ``disabled`` or an effort ``none``, ``true`` for thinking
``enabled`` or ``adaptive`` or another effort. A model that cannot think
refuses ``true`` ("does not support thinking", a 400 that names it), and is
asked again without it, as below. Nothing goes to an Anthropic upstream (whose
thinking the proxy cannot replay: it writes past replies as text, without
their signed thinking blocks). A field the operator's ``--upstream-body`` sets
is not sent for a client (``learned.Refusals.applied``): the provider merges a
request's fields over its own, so a client's effort undid an operator's
``{"think": false}`` or ``{"reasoning_effort": "none"}``.

A server that refuses such a field (a 400 or 422 that names it: a strict
schema's "extra inputs are not permitted", a model without reasoning levels;
or Ollama's ``/v1``, whose refusal of ``reasoning_effort`` for a model that
cannot think says only ""llama3.1:8b" does not support thinking")
gets the request again without it, and ``learned.Refusals`` keeps that for the
upstream's later requests, as it keeps ``stop`` and ``max_tokens``. So does
one that refuses a sampling option the client set (``DROPPABLE``), on every
kind of upstream: OpenAI's reasoning models refuse a ``temperature`` other than
1 ("Unsupported value: 'temperature' does not support 0.2 with this model"),
Anthropic's newer models ``temperature`` beside ``top_p`` ("`temperature` and
`top_p` cannot both be specified for this model"; ``top_p`` is named first, so
it goes). That failed every such request, and only the OpenAI-compatible
upstream's own fields were learned. A token count asks the provider inside
(``tokens.TokenCounter``), with no such field.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import msgspec

from streamtools.errors import ProviderError
from streamtools.model import Chunk, Model, ModelRequest
from streamtools.proxy.request import RequestError

__all__ = [
    "CACHE_KEY", "EFFORT", "THINK", "Forwarded", "anthropic_effort", "forward_fields",
    "refused_field", "sent_fields",
]

# the client's sampling options an upstream may refuse, in the order a refusal
# that names several gives them up
DROPPABLE = ("top_p", "top_k", "temperature", "seed", "presence_penalty", "frequency_penalty")
EFFORT = "reasoning_effort"
CACHE_KEY = "prompt_cache_key"
THINK = "think"  # Ollama's; in ``ProxyCall.forward`` only from Anthropic's ``thinking``
_ANTHROPIC_EFFORTS = {"low": "low", "medium": "medium", "high": "high", "max": "high"}
# refusals of a field that do not name it: Ollama's /v1 refuses reasoning_effort
# for a model without thinking so (Gitlawb/openclaude#1371)
_SAID = {EFFORT: ("does not support thinking",)}
# the largest thinking budget read as each level (LiteLLM's thresholds); more is high
_BUDGETS = ((1024, "low"), (2048, "medium"))


def _text(raw: Any, what: str) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise RequestError(f"{what} must be a string")
    return raw


def forward_fields(effort: Any, cache_key: Any, effort_name: str) -> dict[str, Any]:
    """The fields to forward, by their chat completions names, from a client's
    ``effort`` (named ``effort_name`` in its API) and ``prompt_cache_key``; a
    400 for one that is not a string."""
    found = {EFFORT: _text(effort, effort_name), CACHE_KEY: _text(cache_key, CACHE_KEY)}
    return {name: value for name, value in found.items() if value}


def anthropic_effort(output_config: Any, thinking: Any = None) -> dict[str, Any]:
    """An Anthropic ``output_config.effort`` and ``thinking`` as the fields to
    forward (the module docstring)."""
    fields = _thinking_fields(thinking)
    if fields.get(THINK) is False:  # no thinking: whatever effort its answer is given
        return fields
    if not isinstance(output_config, dict) or output_config.get("effort") is None:
        return fields
    effort = _text(output_config["effort"], "output_config.effort")
    if effort not in _ANTHROPIC_EFFORTS:
        raise RequestError(
            f"output_config.effort must be one of {', '.join(_ANTHROPIC_EFFORTS)}, not {effort!r}"
        )
    return {**fields, EFFORT: _ANTHROPIC_EFFORTS[effort]}


def _thinking_fields(thinking: Any) -> dict[str, Any]:
    """``thinking`` as a level and a ``think``; a type not known sends neither."""
    kind = thinking.get("type") if isinstance(thinking, dict) else None
    if kind == "disabled":
        return {EFFORT: "none", THINK: False}
    if kind == "adaptive":
        return {THINK: True}
    if kind != "enabled":
        return {}
    budget = thinking.get("budget_tokens")
    if budget is None:
        return {THINK: True}
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 1:
        raise RequestError(f"thinking.budget_tokens must be a positive integer, not {budget!r}")
    level = next((name for most, name in _BUDGETS if budget <= most), "high")
    return {EFFORT: level, THINK: True}


def sent_fields(forward: dict[str, Any], kind: str) -> dict[str, Any]:
    """The fields of ``forward`` that an upstream of ``kind`` (``openai`` or
    ``ollama``; another gets none) is sent, in its API's words."""
    if kind == "openai":
        return {name: value for name, value in forward.items() if name != THINK}
    if kind != "ollama":
        return {}
    think, effort = forward.get(THINK), forward.get(EFFORT)
    if think is None and effort is not None:
        think = effort != "none"
    return {} if think is None else {THINK: think}


def refused_field(exc: ProviderError, names: Any) -> str | None:
    """The field among ``names`` that the upstream's refusal ``exc`` names (by
    its name, or in the words of ``_SAID``)."""
    if exc.status not in (400, 422):
        return None
    said = f"{exc.body or ''}\n{exc}"
    return next(
        (name for name in names if name in said or any(w in said for w in _SAID.get(name, ()))),
        None,
    )


class Forwarded:
    """``model`` with ``fields`` added to each request's body, less those its
    upstream refused and the sampling options it refused (``refused``, which
    grows as it refuses more)."""

    def __init__(self, model: Model, fields: dict[str, Any], refused: set[str]) -> None:
        self.inner = model
        self.fields = fields
        self.refused = refused
        self.given = frozenset(refused)  # what it was told (``learned``)
        self.told: Any = None  # and its provider (``learned.Refusals.applied``)

    def __getattr__(self, name: str) -> Any:  # count_tokens and the like
        return getattr(self.inner, name)

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[Chunk]]:
        async with AsyncExitStack() as stack:
            while True:
                refused = self.refused
                fields = {k: v for k, v in self.fields.items() if k not in refused}
                left = {k: None for k in DROPPABLE if k in refused}
                sent = msgspec.structs.replace(
                    request, extra={**fields, **request.extra}, **left
                )
                named = [k for k in DROPPABLE if getattr(sent, k) is not None]
                try:
                    chunks = await stack.enter_async_context(self.inner.stream(sent))
                    break
                except ProviderError as exc:
                    name = refused_field(exc, [*named, *fields])
                    if name is None:
                        raise
                    refused.add(name)  # and asked again without it
            yield chunks
