"""A request opened again when the server refuses a keyword of a tool's schema.

Theory of operation
-------------------
A server the rule of ``streamtools.providers.toolschema`` does not know
refuses a keyword with a 400 (422, or a 500 from a grammar backend) before a
token, and says which in its own words (see that module's docstring):
``schema_refusals_retried`` reads them (``_left_out``, with
``toolschema.refused_keyword``), changes the provider's ``tool_schema`` for
this and every later request, and opens the same request again, at most
``_RETRIES`` more times. vLLM's xgrammar backend and llama-server's grammar
converter name nothing: then what they cannot compile is left out.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from typing import Protocol

from streamtools.errors import ProviderError
from streamtools.model import Chunk, ModelRequest
from streamtools.providers.refused_fields import Opener, reopened
from streamtools.providers.toolschema import GEMINI, KEYWORDS, SchemaRule, refused_keyword

__all__ = ["schema_refusals_retried"]

# a refusal of these is no keyword to leave out: the schema would say nothing
_ESSENTIAL = frozenset({"type", "properties", "items", "required", "description", "anyOf"})
_RETRIES = 3  # openings after the first, each for one more keyword
# vLLM's words when its xgrammar backend cannot compile a schema, naming nothing,
# and what it cannot enforce (vLLM's ``has_xgrammar_unsupported_json_features``;
# lengths: with a pattern or format, xgrammar drops them)
_XGRAMMAR = "not supported by xgrammar"
_XGRAMMAR_OUT = frozenset({
    "multipleOf", "uniqueItems", "contains", "minContains", "maxContains", "patternProperties",
    "propertyNames", "dependentSchemas", "format", "minLength", "maxLength",
})  # fmt: skip
# llama-server's when its grammar converter fails on a tool's schema (a regex
# class in a pattern, a reference into an array, ``$schema``), naming nothing
_GRAMMAR_FAILED = "failed to parse grammar"
_GRAMMAR_OUT = frozenset({"pattern", "patternProperties", "propertyNames", "format", "$schema"})
# vLLM's guidance backend names them: ``Grammar error: Unimplemented keys: ["propertyNames"]``
_UNIMPLEMENTED = re.compile(r"Unimplemented keys?: \[([^\]]*)\]")


class _Ruled(Protocol):
    tool_schema: SchemaRule


def _mended(provider: _Ruled, exc: ProviderError) -> bool:
    """Whether ``exc`` refused a tool schema keyword the provider now leaves out
    (see the module docstring)."""
    if exc.status not in (400, 422, 500):
        return False
    rule = provider.tool_schema
    mended = _left_out(f"{exc.body or ''}\n{exc}", rule)
    if mended is None or mended == rule:
        return False  # not ours to mend, or left out already
    provider.tool_schema = mended
    return True


def _left_out(said: str, rule: SchemaRule) -> SchemaRule | None:
    """``rule`` without what ``said`` (an error's words) refuses, or None."""
    lower = said.lower()
    if _XGRAMMAR in lower:
        return replace(rule, drop=rule.drop | _XGRAMMAR_OUT)
    if _GRAMMAR_FAILED in lower:
        return replace(rule, inline=True, drop=rule.drop | _GRAMMAR_OUT)
    listed = _UNIMPLEMENTED.search(said)
    if listed:
        keys = set(re.findall(r"[$A-Za-z]+", listed.group(1))) & KEYWORDS
        return replace(rule, drop=rule.drop | (keys - _ESSENTIAL)) if keys else None
    found = refused_keyword(said)
    if found is None:
        return None
    gemini, keyword = found
    if gemini and not rule.openapi:
        return replace(GEMINI, drop=GEMINI.drop | rule.drop)
    if keyword in _ESSENTIAL or (rule.keep and keyword not in rule.keep):
        return None
    return rule.without(keyword)


def schema_refusals_retried(
    provider: _Ruled, open_stream: Opener, request: ModelRequest
) -> AbstractAsyncContextManager[AsyncIterator[Chunk]]:
    """``open_stream(request)``, opened again when the server refuses a keyword
    of a tool's schema and says which (see the module docstring): the provider
    leaves it out of this and every later request."""
    return reopened(
        open_stream, request, lambda exc: bool(request.tools) and _mended(provider, exc),
        _RETRIES,
    )
