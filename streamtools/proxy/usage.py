"""The proxy's token counts: one ``Usage`` per response, and how each wire writes it.

Theory of operation
-------------------
A proxied response may take several upstream requests (re-prompts, an
Anthropic upstream's paused turns), each with its ``UsageChunk``. ``reported``
folds them into the one ``Usage`` the turn gives the client (see
``streamtools.proxy.turn``): the input counts of the request with the largest
input (the last, which holds the others) and the prompt-cache counts of that
same request, so that the cached part never exceeds the input it is a part
of; the output and reasoning counts of every request, added.

Each wire then writes it in its API's words, with every field its clients read
without a check present (0 for a count the upstream did not say, as before):

* ``chat_usage``: ``prompt_tokens`` (all the input), with
  ``prompt_tokens_details.cached_tokens`` and
  ``completion_tokens_details.reasoning_tokens``, and the cache write in
  ``prompt_tokens_details.cache_write_tokens``.
* ``anthropic_usage``: the API's ``input_tokens``, which leaves the cached
  tokens out (our count less the cache's), ``cache_read_input_tokens`` and
  ``cache_creation_input_tokens``; clients add the three up for the context's
  size (NaN in JavaScript when one is missing). ``output_tokens_details``
  (``thinking_tokens``) only when the upstream counted the reasoning. A
  stream's ``message_delta`` (``anthropic_delta``) says only the counts the
  upstream gave: the SDK's accumulator takes each over ``message_start``'s,
  which the proxy wrote before the upstream answered.
* ``responses_usage``: ``input_tokens`` with
  ``input_tokens_details.cached_tokens`` (and ``cache_write_tokens``), and
  ``output_tokens_details.reasoning_tokens``.
"""

from __future__ import annotations

from typing import Any

import msgspec

from streamtools.events import Usage
from streamtools.model import UsageChunk

__all__ = ["anthropic_delta", "anthropic_usage", "chat_usage", "reported", "responses_usage"]


def reported(known: Usage, chunk: UsageChunk) -> Usage:
    """``known`` with one more upstream request's counts (see the module docstring)."""
    more = Usage.of(chunk)
    counted = known.plus(more)  # output and reasoning: every request's
    inp = known
    if more.input_tokens is not None and (
        known.input_tokens is None or more.input_tokens > known.input_tokens
    ):
        inp = more
    # the input side (input and cache counts) of the largest request
    return msgspec.structs.replace(
        inp, output_tokens=counted.output_tokens, reasoning_tokens=counted.reasoning_tokens
    )


def chat_usage(usage: Usage) -> dict[str, Any]:
    """A chat completion's ``usage`` object."""
    p, c = usage.input_tokens or 0, usage.output_tokens or 0
    prompt = {
        "cached_tokens": usage.cache_read_tokens or 0,
        "cache_write_tokens": usage.cache_write_tokens or 0,
        "audio_tokens": 0,
    }
    return {
        "prompt_tokens": p,
        "completion_tokens": c,
        "total_tokens": p + c,
        "prompt_tokens_details": prompt,
        "completion_tokens_details": {
            "reasoning_tokens": usage.reasoning_tokens or 0,
            "audio_tokens": 0,
        },
    }


def anthropic_input(usage: Usage) -> dict[str, int]:
    """A message's three input counts, in the API's meaning."""
    read, wrote = usage.cache_read_tokens or 0, usage.cache_write_tokens or 0
    return {
        "input_tokens": max(0, (usage.input_tokens or 0) - read - wrote),
        "cache_creation_input_tokens": wrote,
        "cache_read_input_tokens": read,
    }


def anthropic_usage(usage: Usage) -> dict[str, Any]:
    """A message's ``usage`` object."""
    out: dict[str, Any] = {**anthropic_input(usage), "output_tokens": usage.output_tokens or 0}
    if usage.reasoning_tokens is not None:
        out["output_tokens_details"] = {"thinking_tokens": usage.reasoning_tokens}
    return out


def anthropic_delta(usage: Usage) -> dict[str, Any]:
    """A ``message_delta``'s ``usage``: the output, and the input counts the
    upstream gave (see the module docstring)."""
    given = anthropic_usage(usage)
    out = {k: v for k, v in given.items() if k in ("output_tokens", "output_tokens_details")}
    if usage.input_tokens is not None:
        out["input_tokens"] = given["input_tokens"]
    if usage.cache_read_tokens is not None:
        out["cache_read_input_tokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens is not None:
        out["cache_creation_input_tokens"] = usage.cache_write_tokens
    return out


def responses_usage(usage: Usage) -> dict[str, Any]:
    """A Responses API response's ``usage`` object."""
    p, c = usage.input_tokens or 0, usage.output_tokens or 0
    return {
        "input_tokens": p,
        "input_tokens_details": {
            "cached_tokens": usage.cache_read_tokens or 0,
            "cache_write_tokens": usage.cache_write_tokens or 0,
        },
        "output_tokens": c,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens or 0},
        "total_tokens": p + c,
    }
