"""An upstream's context-window overflow, in the words each client API's users act on.

Theory of operation
-------------------
A request too long for the model's window is refused by every server in its
own words: OpenAI's ``code: "context_length_exceeded"``, vLLM's and
OpenRouter's "maximum context length is N tokens", llama.cpp's
``exceed_context_size_error`` (with ``n_prompt_tokens`` and ``n_ctx``; older
builds answer it with a 500), Anthropic's "prompt is too long: N tokens > M
maximum", and others below (``_NUMBERED``, ``_PHRASES``). Passed on as a plain
400 (or a 500, or an ``api_error`` in a stream), a client could not tell it
from any other refusal, and a coding agent that would compact its history on
an overflow retried the same request, or gave up.

``overflow_message`` recognises one, from the error's text (and the
upstream's JSON body, when it came as an HTTP answer), and returns the message
the proxy answers with instead, whose kind is ``CONTEXT_LENGTH``: Anthropic's
own words first, with the token counts when the upstream said them ("prompt is
too long: N tokens > M maximum", which Claude Code reads to compact, or "input
length and `max_tokens` exceed context limit: N + K > M", which it reads to
lower ``max_tokens`` instead), then the upstream's message, which keeps the
words other clients look for ("maximum context length"). The wires write the
kind as their API does: ``invalid_request_error`` with ``code:
"context_length_exceeded"`` for OpenAI's chat and Responses clients (Codex
reads the code, in a ``response.failed`` too), Anthropic's
``invalid_request_error``; its status is 400, whatever the upstream's was, and
the answer says ``x-should-retry: false``: the same request overflows again.

Sans-IO: text in, text out.
"""

from __future__ import annotations

import re
from typing import Any, Final, NamedTuple

import msgspec

__all__ = ["CONTEXT_LENGTH", "Overflow", "find_overflow", "overflow_message"]

CONTEXT_LENGTH: Final = "context_length"  # the wire-neutral kind of the error

# statuses an overflow comes with (None: an error inside a stream). A rate
# limit's words ("Request too large … tokens per min") never make one.
_STATUSES = frozenset({400, 413, 422})


class Overflow(NamedTuple):
    """What the upstream said of the overflow: the prompt's tokens, the answer's
    asked-for tokens when they were counted in, and the window (each None when
    not said)."""

    prompt: int | None = None
    completion: int | None = None
    limit: int | None = None


def _n(text: str | None) -> int | None:
    return None if text is None else int(text)


# Messages that say the numbers, each read by its own pattern into an Overflow
# (the groups: prompt, completion, limit; a missing one is None).
_NUMBERED: list[tuple[re.Pattern[str], tuple[str | None, str | None, str | None]]] = [
    # Anthropic
    (re.compile(r"prompt is too long: (?P<p>\d+) tokens > (?P<l>\d+) maximum"), ("p", None, "l")),
    (
        re.compile(r"input length and `max_tokens` exceed context limit: (?P<p>\d+) \+ (?P<c>\d+)"
                   r" > (?P<l>\d+)"),
        ("p", "c", "l"),
    ),
    # vLLM: the answer's max_tokens does not fit beside the prompt
    (
        re.compile(r"is too large: (?P<c>\d+)\. This model's maximum context length is (?P<l>\d+)"
                   r" tokens and your request has (?P<p>\d+) input tokens"),
        ("p", "c", "l"),
    ),
    # vLLM: "you requested 32000 output tokens and your prompt contains at least 5001
    # input tokens" (the prompt may fit, the answer's room not)
    (
        re.compile(r"maximum context length is (?P<l>\d+) tokens\. However, you requested "
                   r"(?P<c>\d+) output tokens and your prompt contains at least (?P<p>\d+)"),
        ("p", "c", "l"),
    ),
    # OpenRouter: "(21239 of text input, 16384 in the output)"
    (
        re.compile(r"maximum context length is (?P<l>\d+) tokens.*?\((?P<p>\d+) of text input"
                   r"[^)]*?(?P<c>\d+) in the output\)", re.DOTALL),
        ("p", "c", "l"),
    ),
    # OpenAI's and vLLM's older words: "(3162 in the messages, 1000 in the completion)"
    (
        re.compile(r"maximum context length is (?P<l>\d+) tokens.*?\((?P<p>\d+) in the messages"
                   r"(?:, \d+ in the functions)?, (?P<c>\d+) in the completion", re.DOTALL),
        ("p", "c", "l"),
    ),
    (
        re.compile(r"maximum context length is (?P<l>\d+) tokens.*?(?:your request has|your "
                   r"messages resulted in|you requested(?: about)?) (?P<p>\d+)", re.DOTALL),
        ("p", None, "l"),
    ),
    (re.compile(r"maximum context length is (?P<l>\d+) tokens"), (None, None, "l")),
    # vLLM's V1 engine
    (
        re.compile(r"prompt \((?:total )?length (?P<p>\d+)\) is (?:longer than the maximum model "
                   r"length of|too long to fit into the model \(context length) (?P<l>\d+)"),
        ("p", None, "l"),
    ),
    # SGLang
    (
        re.compile(r"input \((?P<p>\d+) tokens\) is longer than the model's context length "
                   r"\((?P<l>\d+) tokens\)"),
        ("p", None, "l"),
    ),
    # Text Generation Inference
    (
        re.compile(r"must be <= (?P<l>\d+)\. Given: (?P<p>\d+) `inputs` tokens and (?P<c>\d+) "
                   r"`max_new_tokens`"),
        ("p", "c", "l"),
    ),
    # Gemini's OpenAI endpoint
    (
        re.compile(r"input token count \((?P<p>\d+)\) exceeds the maximum number of tokens "
                   r"allowed \((?P<l>\d+)\)"),
        ("p", None, "l"),
    ),
    # GitHub Copilot's API
    (
        re.compile(r"prompt token count of (?P<p>\d+) exceeds the limit of (?P<l>\d+)"),
        ("p", None, "l"),
    ),
    # Mistral
    (
        re.compile(r"Prompt contains (?P<p>\d+) tokens.*?too large for model with (?P<l>\d+) "
                   r"maximum context length", re.DOTALL),
        ("p", None, "l"),
    ),
    # llama-cpp-python
    (
        re.compile(r"Requested tokens \((?P<p>\d+)\) exceed context window of (?P<l>\d+)"),
        ("p", None, "l"),
    ),
]

# Words that say an overflow without its numbers (compared in lower case)
_PHRASES = (
    "context_length_exceeded",  # OpenAI's code, as the providers write an in-stream one
    "exceed_context_size_error",  # llama.cpp's type
    "exceeds the available context size",  # llama.cpp
    "exceeds the context window",  # OpenAI's Responses API
    "prompt is too long",  # Anthropic
    "model_max_prompt_tokens_exceeded",  # GitHub Copilot's API
    "contextwindowexceedederror",  # LiteLLM
    "context window exceeded",
    "context length exceeded",
    "exceeds the context length",  # Ollama
    "exceeded max context length",  # Ollama
    "exceeds maximum context length",  # Ollama
    "exceeds the maximum context length",
)


def find_overflow(text: str, body: str | None = None) -> Overflow | None:
    """The overflow an upstream's error (its ``text``, and its JSON ``body``
    when it answered with one) reports, or None for another error."""
    found = _from_body(body)
    for pattern, names in _NUMBERED:
        match = pattern.search(text)
        if match is not None:
            said = Overflow(*(None if n is None else _n(match.group(n)) for n in names))
            return said if found is None or found.prompt is None else found
    if found is not None:
        return found
    lowered = text.lower()
    return Overflow() if any(phrase in lowered for phrase in _PHRASES) else None


def _from_body(body: str | None) -> Overflow | None:
    """An overflow that a JSON error body says by its code or type: llama.cpp's
    ``exceed_context_size_error`` with its counts, OpenAI's code."""
    if not body:
        return None
    try:
        data: Any = msgspec.json.decode(body)
    except (msgspec.DecodeError, RecursionError):
        return None
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        return None
    if error.get("type") == "exceed_context_size_error":
        prompt, limit = error.get("n_prompt_tokens"), error.get("n_ctx")
        return Overflow(
            prompt if type(prompt) is int else None, None, limit if type(limit) is int else None
        )
    if error.get("code") == "context_length_exceeded":
        return Overflow()
    return None


def overflow_message(detail: str, body: str | None = None, status: int | None = None) -> str | None:
    """The message of an overflow the upstream reported (``detail``, its
    ``body``, the ``status`` it answered with: None inside a stream), in
    Anthropic's words, then ``detail``; None when the error is no overflow."""
    if status is not None and status not in _STATUSES and status < 500:
        return None
    found = find_overflow(detail, body)
    if found is None:
        return None
    prompt, completion, limit = found
    if prompt is not None and limit is not None and completion is not None and prompt <= limit:
        head = (
            f"input length and `max_tokens` exceed context limit: {prompt} + {completion} > "
            f"{limit}, decrease input length or `max_tokens` and try again"
        )
    elif prompt is not None and limit is not None and prompt > limit:
        head = f"prompt is too long: {prompt} tokens > {limit} maximum"
    else:
        head = "prompt is too long for the model's context window"
    return f"{head} ({detail})"
