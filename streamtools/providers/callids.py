"""Past calls' ids as an OpenAI-compatible server takes them.

Theory of operation
-------------------
A conversation may go on with another server than the one that named its
calls: vLLM names them ``chatcmpl-tool-`` and 32 hex digits (46 characters),
gateways and SDKs prefix UUIDs. OpenAI's own API refuses a past call whose id
is longer than 40 characters (400 "Invalid 'messages[2].tool_calls[0].id':
string too long"), and so does Azure OpenAI; other servers (vLLM, llama.cpp,
SGLang, Kimi, Ollama's OpenAI endpoint) take any id, and must get their own
back as they sent them (a server may look a call up by its id). So ids are
shortened only for those hosts (``id_limit``), or where ``OpenAIChat``'s
``call_id_limit`` asks for it (a gateway in front of OpenAI under another
name).

``shortened`` is a function of the id alone, so a call and its result get the
same one, in every request of the conversation; the digest of the whole id
at its end keeps ids alike up to the limit apart.
"""

from __future__ import annotations

import hashlib
from urllib.parse import urlsplit

from streamtools.errors import UsageError

__all__ = ["OPENAI_LIMIT", "checked_limit", "id_limit", "shortened"]

OPENAI_LIMIT = 40
# hosts, and the ends of host names, that serve OpenAI's API with its checks
_OPENAI_HOSTS = ("api.openai.com",)
_OPENAI_DOMAINS = (".openai.azure.com", ".cognitiveservices.azure.com", ".services.ai.azure.com")
_DIGEST = 8


def id_limit(base_url: str, limit: int | None) -> int | None:
    """The longest id the server at ``base_url`` takes: ``limit`` if given,
    else OpenAI's for OpenAI's and Azure's hosts, else None (no limit)."""
    if limit is not None:
        return limit
    host = (urlsplit(base_url).hostname or "").lower().rstrip(".")
    if host in _OPENAI_HOSTS or host.endswith(_OPENAI_DOMAINS):
        return OPENAI_LIMIT
    return None


def checked_limit(limit: int | None) -> int | None:
    """``limit`` if it is None or a positive int, else ``UsageError``."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise UsageError(f"call_id_limit must be a positive number of characters, not {limit!r}")
    return limit


def shortened(call_id: str, limit: int | None) -> str:
    """``call_id`` if it fits ``limit``, else its start and a digest of it
    (only the digest's start under a limit too short for both)."""
    if limit is None or len(call_id) <= limit:
        return call_id
    digest = hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).hexdigest()
    if limit <= _DIGEST + 1:
        return digest[:limit]
    return f"{call_id[: limit - _DIGEST - 1]}_{digest[:_DIGEST]}"
