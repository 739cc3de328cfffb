"""Token counts for Anthropic clients: ``POST /v1/messages/count_tokens``.

Theory of operation
-------------------
Anthropic clients ask how many input tokens a request would cost before they
send it: Claude Code does at start-up (its VS Code extension dozens of times) and
for ``/context``, to decide when to compact a conversation; the SDK has
``messages.count_tokens``. A proxy without the endpoint answers 404, and the
client is left guessing.

What the proxy counts is what it would send upstream, not what the client
sent: the request's tools rendered as the dialect's system prompt, past calls
and results projected into text, the ``tool_choice`` instruction
(``turn.upstream_request``). Then:

* an Anthropic upstream counts that request itself
  (``AnthropicMessages.count_tokens``), and its figure is the answer;
* the other upstreams have no such endpoint (OpenAI's chat API, Ollama), so the
  proxy estimates (``estimate_tokens``): a token per four characters, the usual
  rule of thumb for English and code, plus four per message for the role and
  separators of a chat template. The answer says so in the header
  ``x-streamtools-token-count: estimate``. It can be off by a third either way
  (CJK text costs more tokens per character, long identifiers fewer); a client
  that compacts by it should leave that margin.
"""

from __future__ import annotations

from streamtools.model import ModelRequest

__all__ = ["ESTIMATE_HEADER", "estimate_tokens"]

ESTIMATE_HEADER = "x-streamtools-token-count"
_CHARS_PER_TOKEN = 4
_PER_MESSAGE = 4  # the role and separators a chat template puts around a message


def estimate_tokens(request: ModelRequest) -> int:
    """About how many input tokens ``request`` costs an upstream that cannot
    count them (see the module docstring). Everything in a request of the
    proxy's is message text: calls and results are projected into it."""
    return sum(
        -(-len(message.content) // _CHARS_PER_TOKEN) + _PER_MESSAGE
        for message in request.messages
    )
