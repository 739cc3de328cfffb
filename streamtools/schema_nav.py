"""Reading a JSON Schema: local ``$ref``, a schema's alternatives, a value's one type,
the sub-schema at a path, and an explanation of an error for the model.

Theory of operation
-------------------
The rest of the package asks a tool's JSON Schema a few questions, whether the
schema came from a msgspec type (``schema.schema_of``) or from elsewhere (an
MCP server, a proxy request). Each answer follows local references only (a
schema never fetches anything), ``$ref`` chains and nesting at most
``MAX_DEPTH`` deep, so a recursive or malformed schema costs a bounded walk and
an "I don't know" (``None``, ``{}``, an empty hint) rather than an error.

* **a value's one type** (``json_type``): what a dialect that writes every
  value as text (am_xml) needs to know to read it back, ``str | None`` being
  ``anyOf: [string, null]`` and an enum a ``$ref``. A schema's alternatives
  (``alternatives``) are read one way by it and by the render side's example
  values: the options of ``anyOf`` (else ``oneOf``), each with the keywords of
  the schema around it (``{"type": "integer", "anyOf": [{"minimum": 1}, …]}``
  is an integer of at least 1); an option whose ``type`` that schema's
  ``type`` excludes is none (nothing can be both), and with none left the
  schema's own ``type`` says.

* **paths** (``at_path``, ``resolve``): msgspec's errors name a path such as
  ``$.items[0].id``; ``at_path`` finds the sub-schema there, following local
  ``$ref`` on the way (``resolve``: the target, with the referring node's own
  keys, such as a ``description``, laid over it).

* **explanations** (``explain``): from msgspec's error text, the path and a
  hint for the model: the schema snippet at that path (bounded, its local
  ``$ref`` written out, since the snippet carries no ``$defs``), or, for an
  unknown field, the names it may use instead.

``schema`` imports these names and re-exports them: code and users import them
from ``streamtools.schema``. Nothing here knows about tools, functions or
dialects. Core module: standard library only.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["MAX_DEPTH", "alternatives", "at_path", "explain", "json_type", "local_ref", "resolve"]

#: how deep ``$ref`` chains and nested schemas are followed before giving up
MAX_DEPTH = 12
_SNIPPET_MAX = 600
_PATH = re.compile(r" - at `(\$[^`]*)`$")
_MISSING = re.compile(r"missing required field `([^`]+)`")
_STEP = re.compile(r"\.([^.\[]+)|\[([^\]]*)\]")


# --- paths -----------------------------------------------------------------------


def local_ref(root: dict[str, Any], ref: Any) -> dict[str, Any] | None:
    """The dict a local reference (``#/$defs/Item``) points at in ``root``, or None."""
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return None  # only local references: a schema never fetches anything
    node: Any = root
    for part in ref[2:].split("/"):
        node = node.get(part) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def resolve(root: dict[str, Any], node: Any) -> dict[str, Any]:
    """``node`` with local ``$ref`` followed: the target, with the node's other keys
    laid over it (``{"$ref": …, "description": …}`` keeps its description). A
    reference that leads nowhere resolves to the node's other keys alone; a
    non-dict node to ``{}``."""
    for _ in range(MAX_DEPTH):
        if not isinstance(node, dict) or "$ref" not in node:
            break
        own = {k: v for k, v in node.items() if k != "$ref"}
        node = {**(local_ref(root, node["$ref"]) or {}), **own}
    return node if isinstance(node, dict) else {}


def alternatives(root: dict[str, Any], node: dict[str, Any]) -> list[dict[str, Any]]:
    """The options of ``node``'s (resolved) ``anyOf``, else ``oneOf``: each
    resolved, with ``node``'s other keywords beneath its own (an option without
    a ``type`` has ``node``'s: ``{"type": "integer", "anyOf": [{"minimum": 1},
    {"maximum": -1}]}`` offers integers); an option whose ``type`` ``node``'s
    ``type`` excludes is left out (``{"type": "string", "anyOf": [{"type":
    "integer"}]}`` offers none: nothing is both). Empty when there are none:
    ``node``'s own ``type`` says. The one reading of a schema's ``type`` beside
    its ``anyOf`` for ``json_type`` and the render side's example values."""
    for key in ("anyOf", "oneOf"):
        options = node.get(key)
        if isinstance(options, list) and options:
            break
    else:
        return []
    around = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}
    allowed = around.get("type")
    if isinstance(allowed, str):
        allowed = [allowed]
    out = []
    for option in options:
        option = {**around, **resolve(root, option)}
        t = option.get("type")
        if isinstance(allowed, list) and not (
            all(x in allowed for x in t) if isinstance(t, list) else t in allowed
        ):
            continue
        out.append(option)
    return out


def json_type(root: dict[str, Any], node: Any, depth: int = 0) -> str | None:
    """The one JSON type ``node`` (a schema inside ``root``) allows besides null,
    or None if it allows several or does not say. Read through local ``$ref``
    (``resolve``) and the ``alternatives`` of ``anyOf``/``oneOf``: ``str | None``
    is ``anyOf: [string, null]`` (msgspec and pydantic both write it so). A
    string ``enum`` is a string."""
    node = resolve(root, node)
    if not node or depth > MAX_DEPTH:
        return None
    options = alternatives(root, node)
    if options:
        found = {json_type(root, o, depth + 1) for o in options if o.get("type") != "null"}
        return found.pop() if len(found) == 1 else None
    t = node.get("type")
    if isinstance(t, str):
        return t
    if isinstance(t, list):  # a foreign schema's list may hold anything
        types = [x for x in t if x != "null"]
        return types[0] if len(types) == 1 and isinstance(types[0], str) else None
    enum = node.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
        return "string"
    return None


def at_path(root: dict[str, Any], path: str) -> dict[str, Any] | None:
    """The sub-schema at a msgspec path such as ``$.a.b[0]`` (None when unknown).
    A step into a union (``anyOf``/``oneOf``: ``Location | None``) goes into the
    first option that has it, as msgspec converted the value into the one that fits."""
    node: dict[str, Any] = root
    for key, index in _STEP.findall(path[1:]):
        nxt = None
        for option in _options(root, node):
            if key:
                props = option.get("properties")
                nxt = props.get(key) if isinstance(props, dict) else None
            else:  # msgspec writes ``[...]`` for a key of a free-form object
                nxt = option.get("items") if index != "..." else option.get("additionalProperties")
            if isinstance(nxt, dict):
                break
        if not isinstance(nxt, dict):
            return None
        node = nxt
    return node


def _options(root: dict[str, Any], node: Any) -> list[dict[str, Any]]:
    """``node`` resolved, then the options of its ``anyOf``/``oneOf`` (resolved too)."""
    node = resolve(root, node)
    out = [node]
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            out += [resolve(root, option) for option in node[key]]
    return out


# --- explanations ----------------------------------------------------------------


def _inlined(root: dict[str, Any], node: Any, depth: int) -> Any:
    """``node`` with its local ``$ref`` replaced by what they point at, nested ones
    too (``{"items": {"$ref": "#/$defs/Item"}}`` shows the item's fields): a snippet
    quoted to the model has no ``$defs`` to look them up in. A reference deeper
    than ``MAX_DEPTH`` (a recursive type) is left as it is."""
    if depth > MAX_DEPTH:
        return node
    if isinstance(node, dict):
        if "$ref" in node:
            node = resolve(root, node)
        return {k: _inlined(root, v, depth + 1) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inlined(root, v, depth + 1) for v in node]
    return node


def explain(schema: dict[str, Any], detail: str) -> tuple[str, str]:
    """The path named by a msgspec error (``detail``) and a hint for the model:
    the names allowed there (unknown field) or the schema at that path, bounded.
    A missing field's path is the field's own (``$.loc.city``, not ``$.loc``)."""
    match = _PATH.search(detail)
    path = match.group(1) if match else "$"
    where = at_path(schema, path)
    missing = _MISSING.search(detail)
    if missing and where is not None:
        path = f"{path}.{missing.group(1)}"
        where = at_path(schema, path)
    if "unknown field" in detail:
        found = (o.get("properties") for o in _options(schema, where or {}))
        props = next((p for p in found if isinstance(p, dict)), None)
        names = ", ".join(props) if props else "(none)"
        return path, f"Allowed parameters at `{path}`: {names}."
    if where is None:
        return path, ""
    snippet = json.dumps(_inlined(schema, where, 0), ensure_ascii=False)
    if len(snippet) > _SNIPPET_MAX:
        snippet = snippet[:_SNIPPET_MAX] + " …"
    return path, f"`{path}` must match this schema: {snippet}"
