"""A server that refuses ``stream_options``, asked again without it.

Theory of operation
-------------------
``OpenAIChat`` asks for the final usage chunk with ``stream_options:
{"include_usage": true}`` (``stream_usage``). Some OpenAI-compatible servers
refuse the field with a 400 before a byte is streamed: Azure AI Foundry's
serverless models (``Extra parameters ['stream_options'] are not allowed when
extra-parameters is not set``), older Azure OpenAI API versions
(``Unrecognized request argument supplied: stream_options``), and servers that
forbid unknown fields (pydantic's ``extra_forbidden`` at ``stream_options``).
Every request failed so, and the way out (``OpenAIChat(stream_usage=False)``)
was in a docstring only; ``streamtools chat`` and the proxy had none.

``usage_optional`` opens the stream; when that fails with a 400 or 422 whose
error names ``stream_options``, and the field was ours (neither
``extra_body`` nor the request's ``extra`` sets it), the provider stops asking
for it (``stream_usage = False``, for its later requests too) and opens the
same request once more. Only the opening is watched: nothing the consumer
does with the chunks is caught here. The answer then has no usage chunk
unless the server sends one anyway.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING

from streamtools.errors import ProviderError
from streamtools.model import Chunk, ModelRequest

if TYPE_CHECKING:
    from streamtools.providers.openai import OpenAIChat

__all__ = ["usage_optional"]

_FIELD = "stream_options"
Opener = Callable[[ModelRequest], AbstractAsyncContextManager[AsyncIterator[Chunk]]]


def _refused(exc: ProviderError) -> bool:
    """Whether ``exc`` is a refusal of ``stream_options`` (see the module docstring)."""
    return exc.status in (400, 422) and _FIELD in f"{exc.body or ''}\n{exc}"


@asynccontextmanager
async def usage_optional(
    provider: OpenAIChat, open_stream: Opener, request: ModelRequest
) -> AsyncIterator[AsyncIterator[Chunk]]:
    """``open_stream(request)``, opened again without ``stream_options`` if the
    server refused it (see the module docstring)."""
    async with AsyncExitStack() as stack:
        try:
            chunks = await stack.enter_async_context(open_stream(request))
        except ProviderError as exc:
            ours = _FIELD not in provider.extra_body and _FIELD not in request.extra
            if not (provider.stream_usage and ours and _refused(exc)):
                raise
            provider.stream_usage = False
            chunks = await stack.enter_async_context(open_stream(request))
        yield chunks
