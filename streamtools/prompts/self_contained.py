"""A tool's parameters schema as the JSON dialects show it: references inlined.

Theory of operation
-------------------
msgspec and pydantic write a nested type (a Struct, a model, an ``Enum``) once,
under ``$defs``, and point at it with ``{"$ref": "#/$defs/Address"}``; MCP
servers send such schemas too. An API dereferences them for its model; a prompt
shows them as they are, so a small local model reading ``"to": {"$ref":
"#/$defs/Address"}`` has to find ``Address`` at the end of a long line of JSON
and carry it back, and often does not: it invents the fields or passes a
string. ``self_contained`` gives the schema with each local reference replaced
by what it points at (keywords beside the ``$ref``, a description, laid over
it) and the root's ``$defs``/``definitions`` gone, so every parameter reads
whole where it stands, as the ``am_xml`` definitions already show it. A tagged
union's ``discriminator`` loses its ``mapping`` to the ``$defs`` pointers; the
alternatives show their tag values themselves.

It keeps the schema as it is when inlining cannot be whole or would not help:
a reference that is not local, leads nowhere, or leads back into itself (a
recursive type has no finite inlining), or an inlined schema more than twice
as long as the original (a type used in many places), which would cost more
prompt than the lookup saves. Tool names, validation and the parser never see
this: it only changes what the model is shown.

Core module: standard library only.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["self_contained"]

_GROWTH = 2  # the inlined schema's text may be at most this many times the original's
_DEFS = ("$defs", "definitions")


class _Kept(Exception):
    """Inlining cannot be whole or grows too much: the schema is shown as it is."""


def self_contained(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its local ``$ref`` inlined and its ``$defs`` dropped, or
    ``schema`` itself when it has none or inlining cannot be whole (see above)."""
    if not any(key in schema for key in _DEFS):
        return schema
    size = len(json.dumps(schema, ensure_ascii=False))
    budget = [_GROWTH * size]
    try:
        body = {k: v for k, v in schema.items() if k not in _DEFS}
        out = _inlined(schema, body, (), budget)
    except (_Kept, RecursionError):
        return schema
    if len(json.dumps(out, ensure_ascii=False)) > _GROWTH * size:
        return schema
    assert isinstance(out, dict)
    return out


def _inlined(root: dict[str, Any], node: Any, seen: tuple[str, ...], budget: list[int]) -> Any:
    """``node`` with the references in it inlined; ``seen``: the references being
    inlined around it (one of them again is a cycle); ``budget``: what the
    copies may still cost, roughly in characters."""
    budget[0] -= 1  # (every node costs a character or more: the copies stay bounded)
    if budget[0] < 0:
        raise _Kept
    if isinstance(node, dict):
        ref = node.get("$ref")
        if ref is not None:
            if not isinstance(ref, str) or ref in seen:
                raise _Kept
            own = {k: v for k, v in node.items() if k != "$ref"}
            return _inlined(root, {**_pointed(root, ref), **own}, (*seen, ref), budget)
        return {k: _keyword(root, k, v, seen, budget) for k, v in node.items()}
    if isinstance(node, list):
        return [_inlined(root, v, seen, budget) for v in node]
    return node


def _keyword(root: dict[str, Any], key: str, value: Any, seen: tuple[str, ...],
             budget: list[int]) -> Any:
    """A schema keyword's value, inlined. The names of ``properties`` (and
    ``patternProperties``, ``dependentSchemas``) are the tool's, not keywords: a
    parameter named ``discriminator`` or ``$ref`` is a schema like any other
    (it was taken for the keyword, and kept its ``$ref`` to the dropped ``$defs``)."""
    if key in _NAMED and isinstance(value, dict):
        budget[0] -= 1
        return {name: _inlined(root, sub, seen, budget) for name, sub in value.items()}
    if key == "discriminator":
        return _unmapped(value)
    return _inlined(root, value, seen, budget)


_NAMED = ("properties", "patternProperties", "dependentSchemas")


def _unmapped(discriminator: Any) -> Any:
    """An OpenAPI ``discriminator`` (msgspec writes one for a tagged union) without
    its ``mapping`` of tag values to ``#/$defs/…`` pointers, which lead nowhere
    once ``$defs`` is gone: each inlined alternative shows its own tag value."""
    if not isinstance(discriminator, dict):
        return discriminator
    mapping = discriminator.get("mapping")
    if not isinstance(mapping, dict) or not all(
        isinstance(v, str) and v.startswith("#/") for v in mapping.values()
    ):
        return discriminator
    return {k: v for k, v in discriminator.items() if k != "mapping"}


def _pointed(root: dict[str, Any], ref: str) -> dict[str, Any]:
    """The schema a local JSON Pointer reference names (``#/$defs/A``, ``~1`` for
    ``/`` and ``~0`` for ``~``)."""
    if not ref.startswith("#/"):
        raise _Kept
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise _Kept
        node = node[part]
    if not isinstance(node, dict) or node is root:
        raise _Kept
    if not any(ref.startswith(f"#/{key}/") for key in _DEFS):
        raise _Kept  # (a pointer into the properties: its target is shown already)
    return node
