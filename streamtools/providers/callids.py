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

Mistral's API (``api.mistral.ai``, ``codestral.mistral.ai``) takes only ids
of exactly nine letters and digits, as it names calls itself, and refuses any
other (400 "Tool call id was call_0 but must be a-z, A-Z, 0-9, with a length
of 9"): a conversation whose calls another server named, or ``NativeCalls``
(``call_0`` where a server gave none), failed at its next request. For those
hosts ``id_limit`` gives ``MISTRAL``, and an id of another shape becomes nine
letters and digits of its digest.

``shortened`` is a function of the id alone, so a call and its result get the
same one, in every request of the conversation; the digest of the whole id
at its end keeps ids alike up to the limit apart.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final, Literal
from urllib.parse import urlsplit

from streamtools.errors import UsageError

__all__ = ["MISTRAL", "OPENAI_LIMIT", "IdRule", "checked_limit", "id_limit", "shortened"]

OPENAI_LIMIT = 40
# hosts, and the ends of host names, that serve OpenAI's API with its checks
_OPENAI_HOSTS = ("api.openai.com",)
_OPENAI_DOMAINS = (".openai.azure.com", ".cognitiveservices.azure.com", ".services.ai.azure.com")
_DIGEST = 8
MISTRAL: Final = "mistral"  # nine letters and digits, exactly (see the module docstring)
_MISTRAL_HOSTS = ("api.mistral.ai", "codestral.mistral.ai")
_MISTRAL_ID = re.compile(r"[A-Za-z0-9]{9}")
_ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
IdRule = int | Literal["mistral"] | None  # the longest id, Mistral's shape, or any id


def id_limit(base_url: str, limit: int | None) -> IdRule:
    """The ids the server at ``base_url`` takes: ``limit`` if given, else
    OpenAI's longest for OpenAI's and Azure's hosts, Mistral's shape for
    Mistral's, else None (any id)."""
    if limit is not None:
        return limit
    host = (urlsplit(base_url).hostname or "").lower().rstrip(".")
    if host in _OPENAI_HOSTS or host.endswith(_OPENAI_DOMAINS):
        return OPENAI_LIMIT
    if host in _MISTRAL_HOSTS:
        return MISTRAL
    return None


def checked_limit(limit: int | None) -> int | None:
    """``limit`` if it is None or a positive int, else ``UsageError``."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise UsageError(f"call_id_limit must be a positive number of characters, not {limit!r}")
    return limit


def shortened(call_id: str, limit: IdRule) -> str:
    """``call_id`` if it fits ``limit``, else its start and a digest of it
    (only the digest's start under a limit too short for both); under
    ``MISTRAL``, nine letters and digits of its digest unless it is so already."""
    if limit == MISTRAL:
        if _MISTRAL_ID.fullmatch(call_id):
            return call_id
        number = int.from_bytes(hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).digest())
        return "".join(_ALNUM[number // 62**i % 62] for i in range(9))
    if limit is None or len(call_id) <= limit:
        return call_id
    digest = hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).hexdigest()
    if limit <= _DIGEST + 1:
        return digest[:limit]
    return f"{call_id[: limit - _DIGEST - 1]}_{digest[:_DIGEST]}"
