"""Token counts for Anthropic clients: ``POST /v1/messages/count_tokens``.

Theory of operation
-------------------
Anthropic clients ask how many input tokens a request would cost before they
send it: Claude Code does at start-up (its VS Code extension dozens of times) and
for ``/context``, and decides by the answer when to compact a conversation; the
SDK has ``messages.count_tokens``. A count that is too low is the costly error:
the client compacts too late and the upstream refuses a prompt longer than its
context window, which for a model run locally is often small.

What the proxy counts is what it would send upstream, not what the client
sent: the request's tools rendered as the dialect's system prompt, past calls
and results projected into text, the ``tool_choice`` instruction
(``turn.upstream_request``). ``TokenCounter`` then asks, in order:

* an Anthropic upstream: ``AnthropicMessages.count_tokens``, the API's count. A
  count that fails (the API is down, overloaded, rate-limits its count endpoint,
  which Claude Code's extension asks dozens of times at start-up; a compatible
  server has no such endpoint) falls back to the estimate for that request, as
  a local tokenizer's does below. Given the error, a client is left with a
  guess of its own (Claude Code estimates locally when the endpoint fails),
  made after its SDK's retries and from what it sent, not from the prompt the
  upstream reads; the estimate counts what goes upstream and says it is one;
* an OpenAI-style upstream: ``OpenAIChat.count_tokens``, the tokenizer and chat
  template of a vLLM or llama.cpp server. An upstream without a tokenizer
  endpoint (OpenAI itself, gateways; it answers 404) is asked once per
  process and model name, then no more: vLLM answers 404 too for a model it
  does not serve, and one request naming a wrong model turned every later
  count of the process into an estimate. (At most ``_REMEMBERED`` names are
  kept, so that clients naming ever new models cannot grow it.) A count that
  fails otherwise (the server is down, it refuses the messages) falls back to
  the estimate for that request only;
* otherwise (Ollama has no tokenizer endpoint) ``estimate_tokens``: a token per
  three ASCII characters and one per other character, plus four per message
  for the role and separators of a chat template. Tokenizers of current models
  take about four characters of English and three of code or JSON per token,
  and one or two CJK characters, so the estimate errs high, on the side that
  makes a client compact early rather than overflow. The answer says it is an
  estimate in the header ``x-streamtools-token-count: estimate``.

An Anthropic stream's ``message_start`` says the input tokens before the
upstream has counted them (its count comes with its answer, in
``message_delta``, which replaces it): there the proxy gives its best guess,
``expected_tokens``, not one that errs high. The count endpoint's estimate read
English prose at a token per three characters where tokenizers take four, so
every stream opened with about a third more tokens than the request had. The
guess weighs characters by kind, as byte-pair tokenizers (cl100k, o200k,
Llama 3, Qwen) split them: letters and spaces about four and a half to a token
(a common word and the space before it are one), punctuation and line breaks
about two to three to a token (``{"``, ``":``, ``</`` are merged pairs; JSON
and markup are dense with them), digits three to a token (numbers are split
in groups of three, or one by one in older vocabularies), and a token per
other character, as for the estimate. It stays within about a fifth of a
tokenizer's count for prose, code, JSON and CJK text
(``tests/test_proxy_s16_token_guess.py``). Two ``bytes.translate`` passes
over the ASCII text do the sorting, so it costs about what the estimate does.
"""

from __future__ import annotations

import logging
import math

from streamtools.errors import ProviderError, TokenCountUnavailable
from streamtools.model import Model, ModelRequest
from streamtools.providers import AnthropicMessages, OpenAIChat
from streamtools.proxy.forwarded import Forwarded

__all__ = ["ESTIMATE_HEADER", "TokenCounter", "estimate_tokens", "expected_tokens", "text_tokens"]

log = logging.getLogger("streamtools.proxy")

ESTIMATE_HEADER = "x-streamtools-token-count"
_ASCII_PER_TOKEN = 3
_PER_MESSAGE = 4  # the role and separators a chat template puts around a message
_REMEMBERED = 256  # model names remembered as having no tokenizer endpoint


def estimate_tokens(request: ModelRequest) -> int:
    """About how many input tokens ``request`` costs, erring high (see the module
    docstring). Everything in a request of the proxy's is message text: calls
    and results are projected into it."""
    total = 0
    for message in request.messages:
        text = message.content
        ascii_chars = len(text.encode("ascii", "ignore"))
        total += -(-ascii_chars // _ASCII_PER_TOKEN) + len(text) - ascii_chars + _PER_MESSAGE
    return total


_DIGITS = b"0123456789"
# the ASCII characters that are not letters or spaces: marks, line breaks, digits
_NOT_WORDS = bytes(c for c in range(128) if not (chr(c).isalpha() or c in b" \t"))
# characters per token, by kind (module docstring)
_PER_TOKEN_WORDS, _PER_TOKEN_MARKS, _PER_TOKEN_DIGITS = 4.5, 2.5, 3.0


def expected_tokens(request: ModelRequest) -> int:
    """About how many input tokens ``request`` costs: a guess near a tokenizer's
    count, neither high nor low (module docstring), for ``message_start``."""
    return sum(text_tokens(message.content) + _PER_MESSAGE for message in request.messages)


def text_tokens(text: str) -> int:
    """About how many tokens ``text`` is, as ``expected_tokens`` guesses them (a
    model's output, where the upstream did not count it: ``proxy.turn``)."""
    ascii_text = text.encode("ascii", "ignore")
    words = len(ascii_text.translate(None, _NOT_WORDS))  # letters and spaces
    digits = len(ascii_text) - len(ascii_text.translate(None, _DIGITS))
    marks = len(ascii_text) - words - digits
    guess = words / _PER_TOKEN_WORDS + marks / _PER_TOKEN_MARKS + digits / _PER_TOKEN_DIGITS
    return math.ceil(guess) + len(text) - len(ascii_text)


class TokenCounter:
    """The proxy's counts: the upstream's own where it has one, else an estimate.
    One per proxy process; it remembers the model names for which the upstream
    said it has no tokenizer endpoint."""

    def __init__(self) -> None:
        self.untokenized: set[str] = set()

    async def count(self, model: Model, request: ModelRequest) -> tuple[int, bool]:
        """(tokens, exact): the upstream's count, else (it has none, or it
        failed) the estimate."""
        if isinstance(model, Forwarded):  # the client's effort is no part of a count
            model = model.inner
        if isinstance(model, AnthropicMessages):
            try:
                return await model.count_tokens(request), True
            except ProviderError as exc:
                log.info("upstream token count failed, estimated instead: %s", exc)
        elif isinstance(model, OpenAIChat) and model.model not in self.untokenized:
            try:
                return await model.count_tokens(request), True
            except TokenCountUnavailable:
                if len(self.untokenized) >= _REMEMBERED:
                    self.untokenized.clear()
                self.untokenized.add(model.model)
            except ProviderError as exc:
                log.info("upstream token count failed, estimated instead: %s", exc)
        return estimate_tokens(request), False
