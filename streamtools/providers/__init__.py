"""HTTP model providers: OpenAI-compatible, Anthropic Messages, Ollama.

Each implements ``streamtools.model.Model`` over real HTTP (httpx, httpx-sse,
msgspec); the shared opening, retry and error handling is in ``base``.
"""

from __future__ import annotations

from streamtools.providers.anthropic import AnthropicMessages
from streamtools.providers.base import HTTPProvider, ProviderOptions
from streamtools.providers.ollama import OllamaChat
from streamtools.providers.openai import OpenAIChat

__all__ = ["AnthropicMessages", "HTTPProvider", "OllamaChat", "OpenAIChat", "ProviderOptions"]
