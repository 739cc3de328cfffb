"""Fields an OpenAI-compatible server refuses, left out and the request asked again.

Theory of operation
-------------------
A few fields ``OpenAIChat`` sends are refused by some servers with a 400 (or
a 422) before a byte is streamed; every request then failed, and the way out
was an option in a docstring (``streamtools chat`` and the proxy had none):

* ``stream_options`` (the final usage chunk, ``stream_usage``): Azure AI
  Foundry's serverless models (``Extra parameters ['stream_options'] are not
  allowed when extra-parameters is not set``), older Azure OpenAI API versions
  (``Unrecognized request argument supplied: stream_options``), servers that
  forbid unknown fields (pydantic's ``extra_forbidden`` at
  ``stream_options``). Left out: the answer has no usage chunk unless the
  server sends one anyway.
* ``max_tokens``, which OpenAI's reasoning models (o-series, gpt-5) and Azure
  OpenAI's refuse for ``max_completion_tokens`` (``Unsupported parameter:
  'max_tokens' is not supported with this model. Use 'max_completion_tokens'
  instead.``): sent under that name (``max_tokens_field``).

* ``stop``, which the same reasoning models refuse (``Unsupported parameter:
  'stop' is not supported with this model.``), as do xAI's (``Argument not
  supported on this model: stop``) and Vertex AI's OpenAI endpoint for some
  models (``the model does not support the stopSequences parameter``): left
  out, and every stop string is cut client-side (``supports_stop = False``,
  see ``providers.base``), so the answer ends at the same place, a call at
  its closing marker, and the request is closed there. ``streamtools chat``,
  ``ui`` and the proxy cannot know in advance which model refuses it
  (``--no-stop`` still sends none from the start).

* ``parallel_tool_calls`` (false, for one call per reply), which OpenAI's
  reasoning models refuse (``Unsupported parameter: 'parallel_tool_calls' is
  not supported with this model.``, o1, o3, o4-mini: fast-agent#279,
  llama_index#20865): left out (``supports_parallel_tool_calls = False``);
  the runtime still runs one call of a reply and refuses the others.

``refusals_retried`` opens the stream; when the opening fails so, and the
field is the provider's own (neither ``extra_body`` nor the request's
``extra`` sets it), the provider changes for this and its later requests
(``stream_usage = False``, ``max_tokens_field = "max_completion_tokens"``,
``supports_stop = False``, ``supports_parallel_tool_calls = False``) and
opens the same request again, once per field. Only the opening is watched:
nothing the consumer does with the chunks is caught here.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING

from streamtools.errors import ProviderError
from streamtools.model import Chunk, ModelRequest

if TYPE_CHECKING:
    from streamtools.providers.openai import OpenAIChat

__all__ = ["refusals_retried", "reopened"]

Opener = Callable[[ModelRequest], AbstractAsyncContextManager[AsyncIterator[Chunk]]]
_RENAMED = "max_completion_tokens"
# ``stop`` named as refused, in each server's words (see the module docstring); a
# sentence that says "stop" in passing is no refusal of the field
_STOP_REFUSED = re.compile(
    r"(?:unsupported|not supported|does not support|not allowed|not permitted|unrecognized)"
    r"[^.\n]{0,60}?(?:['\"`]stop['\"`]|\bstop(?:Sequences|_sequences)?\b)"
    r"|['\"`]stop['\"`][^.\n]{0,40}?(?:not supported|not allowed|not permitted)"
    r"|\bat body\.stop\b",
    re.IGNORECASE,
)


def _changed(provider: OpenAIChat, exc: ProviderError, request: ModelRequest) -> bool:
    """Whether ``exc`` refused a field of the provider's own, now left out (see
    the module docstring)."""
    if exc.status not in (400, 422):
        return False
    said = f"{exc.body or ''}\n{exc}"
    theirs = {**provider.extra_body, **request.extra}
    if provider.stream_usage and "stream_options" in said and "stream_options" not in theirs:
        provider.stream_usage = False
        return True
    if (
        provider.supports_stop
        and request.stop
        and "stop" not in theirs
        and _STOP_REFUSED.search(said)
    ):
        provider.supports_stop = False
        return True
    if (
        provider.supports_parallel_tool_calls
        and request.parallel_tool_calls is False
        and "parallel_tool_calls" in said
        and "parallel_tool_calls" not in theirs
    ):
        provider.supports_parallel_tool_calls = False
        return True
    field = provider.max_tokens_field
    if field == "max_tokens" and request.max_tokens is not None and field not in theirs:
        # "not supported": vLLM's overflow ("'max_tokens' or 'max_completion_tokens'
        # is too large") names the new name too, and is no refusal of the field
        if _RENAMED in said and "supported" in said.lower() and _RENAMED not in theirs:
            provider.max_tokens_field = _RENAMED
            return True
    return False


@asynccontextmanager
async def reopened(
    open_stream: Opener, request: ModelRequest, mended: Callable[[ProviderError], bool],
    times: int,
) -> AsyncIterator[AsyncIterator[Chunk]]:
    """``open_stream(request)``, opened again, at most ``times`` more, after each
    refusal that ``mended`` answers for by changing the provider (True): the
    loop of this module's and ``schema_refusals``' retries."""
    async with AsyncExitStack() as stack:
        for left in range(times, -1, -1):
            try:
                chunks = await stack.enter_async_context(open_stream(request))
                break
            except ProviderError as exc:
                if not left or not mended(exc):
                    raise
        yield chunks


def refusals_retried(
    provider: OpenAIChat, open_stream: Opener, request: ModelRequest
) -> AbstractAsyncContextManager[AsyncIterator[Chunk]]:
    """``open_stream(request)``, opened again without each field the server
    refused (see the module docstring): one more opening per field it may refuse."""
    return reopened(open_stream, request, lambda exc: _changed(provider, exc, request), 4)
