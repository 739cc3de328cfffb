"""A tool's JSON Schema as each API takes it in native mode.

Theory of operation
-------------------
In native mode a tool's parameter schema goes to the API in the request's
``tools``. Schemas come from ``@tool`` (msgspec: ``$defs`` and ``$ref`` for
Structs and Enums, ``anyOf`` with null for ``Optional``, ``title``) and from
MCP servers (any JSON Schema: ``$schema``, ``additionalProperties``,
``oneOf``, ``allOf``, ``const``, ``format``, ``examples``, recursive
``$ref``…), and several APIs refuse some of it with a 400 that ends the run
before a token, or drop it without a word:

* Every API wants an object at the root: OpenAI answers "schema must have
  type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top
  level", Anthropic "input_schema does not support oneOf, allOf, or anyOf at
  the top level", Groq "'required' present but 'properties' is missing". So
  every rule mends the root (``_root``): a root ``$ref`` is resolved, root
  ``allOf`` merged and ``anyOf``/``oneOf`` variants' properties taken
  together (required: what every variant requires), root ``enum``, ``const``,
  ``not`` and ``if``/``then``/``else`` left out, ``type`` made ``object``,
  ``properties`` given to a ``required`` that has none.
* Anthropic checks ``input_schema`` against draft 2020-12's metaschema
  ("JSON schema is invalid. It must match JSON Schema draft 2020-12",
  anthropics/claude-code#63673, #86665): an MCP server's draft-4 or draft-7
  forms (a tuple's ``items`` list, a boolean ``exclusiveMinimum``, draft 3's
  ``required: true`` on a property) failed every request. ``ANTHROPIC``
  writes them in 2020-12's forms (``prefixItems``, the bound itself) and
  leaves out the draft-3 ones.
* Gemini's OpenAI-compatible endpoint (and a gateway in front of Gemini)
  reads the schema into its OpenAPI 3.0 subset and refuses any other keyword
  ("Invalid JSON payload received. Unknown name \\"$defs\\"", the same for
  ``additionalProperties``, ``const``, ``$schema``, ``propertyNames``,
  ``examples``), a ``type`` list ("Proto field is not repeating, cannot
  start list"), an ``enum`` on anything but strings ("enum: only allowed for
  STRING type"), an object with no properties ("should be non-empty for
  OBJECT type"), an array without ``items`` ("items: missing field"), a
  required name no property describes ("property is not defined").
  ``GEMINI`` inlines every local ``$ref``, keeps only the
  keywords of that subset, writes null as ``nullable``, ``oneOf`` as
  ``anyOf``, ``allOf`` merged, ``const`` as a one-string ``enum``, and a
  ``default`` or a value list it cannot keep into the description; a tool
  without parameters goes without ``parameters``. Vertex AI's ``Schema`` has
  ``additionalProperties`` (its v1beta1 proto; an object with it and no
  properties is taken, BerriAI/litellm#14251), and it refuses a property
  with no type ("schema didn't specify the schema type field",
  directus/mcp#8), which is what ``GEMINI`` made of a ``dict[str, int]`` (any
  value, described "A JSON object."): ``VERTEX`` is ``GEMINI`` keeping
  ``additionalProperties``, so a map is an object of its values' schema. The
  Gemini API's own refuses it (freellmapi#97, Gitlawb/zero#373, 2026), and
  both read the OpenAI endpoint's ``parameters`` into that proto
  (Kilo-Org/kilocode#5333), so neither takes ``$ref`` or a schema with no
  type as JSON Schema would (``Any``, a union's ``anyOf`` without one: sent as
  they are, untyped, the loosest they can say).
* Ollama reads ``tools`` into Go structs that keep ``$defs`` but drop a
  property's ``$ref``: a Struct argument reached the model as a bare name,
  and the model guessed its fields. ``OLLAMA`` inlines every local ``$ref``.
  A property there keeps only ``type``, ``description``, ``enum``,
  ``anyOf``, ``items`` and ``properties``: a nested object's ``required``,
  a ``default`` and a ``const`` (a union's tag) reached the model as
  nothing. ``OLLAMA`` writes ``const`` as a one-value ``enum`` and the
  others into the description (``Required: a, b.``, ``Default: 3.``).

Inlining is bounded: a definition unfolded ``_UNFOLD`` times inside itself
(a tree of nodes) is, one level further, any value, with its description;
so is every reference met once the sent schema has ``_NODES`` schemas (a
definition used twice by one used twice by one… doubles at each level).
Everything a rule leaves out only loosens the schema: the sent schema takes
every instance the tool's own schema takes (the tests check it), and the
arguments a model sends are still checked against the tool's own schema
(``Tool.validate``), which nothing here changes.

* OpenAI refuses an array schema without ``items`` ("Invalid schema for
  function 'f': In context=('properties', 'paths'), array schema missing
  items", streamnative/streamnative-mcp-server#26, LionSR/TeXRA#2323; a
  bare ``list`` argument of ``@tool`` is one): ``OPENAI`` gives it
  ``items: {}``, and writes older drafts' forms in 2020-12's as for
  Anthropic.

``rule_for(base_url, model)`` is the rule an OpenAI-compatible provider
chooses from what it knows of its server; ``OPENAI`` for any other. A gateway
passes a tool's schema on to the API behind it: OpenRouter's ``google/gemini-…``
reached Google's with the request's schema (its 400 came back as Vertex AI
worded it, BoltAI/BoltAI#375), so a model named gemini takes ``GEMINI``, the
subset both Google APIs take, whatever the host; the host decides where it is
Google's own.
``PLAIN`` is the root mended and the rest as given. ``sent_schema(schema,
rule)`` is the schema to send, a new object (None: send no parameters).

A server the rule does not know (a gateway in front of Gemini under a model
alias, an API that refuses one more keyword) answers 400 (or 422) and names
what it refuses: ``Unknown name "$defs" at 'tools[0].function_declarations…'``
(Google's), ``'uniqueItems' is not supported`` in a tool schema's error,
OpenAI's words for a function's schema (``Invalid schema for function 'f':
… 'format' is not permitted``, which Groq answers too).
``schema_refusals.schema_refusals_retried`` (``OpenAIChat.stream``) reads
that (``refused_keyword``), changes the provider's ``tool_schema`` for this and
every later request (Google's words: ``GEMINI``; others: the rule without
that keyword) and opens the same request again, at most three more times.
vLLM names nothing when its xgrammar backend cannot compile a tool's schema
(a forced or ``required`` tool choice: "The provided JSON schema contains
features not supported by xgrammar", vllm-project/vllm#16321, #26421): then
every keyword xgrammar does not enforce is left out (``_XGRAMMAR_OUT``).
llama-server names nothing either when its grammar converter fails on a
tool's schema ("Failed to initialize samplers: failed to parse grammar",
lidge-jun/opencodex#2135, QwenLM/qwen-code#10435): then ``$ref``s are
inlined and patterns, formats and ``$schema`` left out (``_GRAMMAR_OUT``).
vLLM's guidance backend lists them ("Grammar error: Unimplemented keys:
[\"propertyNames\"]", noonghunna/club-3090#45, a 500): those are left out.
A refusal of ``type``, ``properties``, ``items``, ``required``, ``anyOf``
or ``description``, or of a keyword already left out, is passed on as it came.

Sources (2025-2026): openswarm-ai/openswarm#24, zed-industries/zed#44875 and
#53919, musistudio/claude-code-router#475, zcj-ui/astrbot_plugin_group_guardian
#62, iBUHub/AIStudioToAPI#154 (Gemini); anthropics/claude-code
#27337 (Anthropic); imagekit-developer/imagekit-nodejs#150 (OpenAI);
usestrix/strix#1088 (Groq); ollama/ollama#13472 (Ollama).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "ANTHROPIC", "GEMINI", "OLLAMA", "OPENAI", "PLAIN", "VERTEX", "SchemaRule", "refused_keyword",
    "rule_for", "sent_schema",
]

_UNFOLD = 2  # times a definition may be unfolded inside itself
_NODES = 2000  # schemas in a sent schema past which references are no longer unfolded
# keywords whose value is a schema, a list of schemas, or a name -> schema map
_ONE = frozenset({
    "items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
    "unevaluatedProperties", "unevaluatedItems", "additionalItems",
})  # fmt: skip
_LIST = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_MAP = frozenset({"properties", "patternProperties", "dependentSchemas", "$defs", "definitions"})
_DEFS = ("$defs", "definitions")
_NOTES = frozenset({"description", "title", "default", "examples", "example", "$comment"})
_ROOT_OUT = ("enum", "const", "not", "if", "then", "else")
# Gemini's OpenAPI subset (``Schema`` of generativelanguage v1beta), less title and default
_GEMINI_KEEP = frozenset({
    "type", "format", "description", "nullable", "enum", "items", "properties", "required",
    "anyOf", "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern",
    "minProperties", "maxProperties", "propertyOrdering",
})  # fmt: skip
_GEMINI_FORMATS = frozenset({"date-time", "enum", "int32", "int64", "float", "double"})
# every JSON Schema keyword known here (``schema_refusals`` reads refusals of them)
KEYWORDS = _ONE | _LIST | _MAP | _NOTES | _GEMINI_KEEP | frozenset({
    "$schema", "$id", "$ref", "$anchor", "const", "exclusiveMinimum", "exclusiveMaximum",
    "multipleOf", "uniqueItems", "minContains", "maxContains", "dependentRequired",
    "readOnly", "writeOnly", "deprecated", "contentEncoding", "contentMediaType",
})  # fmt: skip


@dataclass(frozen=True)
class SchemaRule:
    """What an API takes of a tool's schema (see the module docstring).

    ``inline``: local ``$ref``s replaced by what they name. ``keep``: the
    only keywords kept (None: all). ``drop``: keywords left out. ``openapi``:
    Gemini's rewrites (``nullable``, string enums, ``allOf`` merged…).
    ``described``: below the root, ``const`` as ``enum``, and ``required``
    and ``default`` said in the description too (Ollama's). ``maps``:
    ``additionalProperties`` kept, so an object without properties (a
    ``dict[str, int]``) stays an object (Vertex AI's). ``modern``:
    older drafts' forms in draft 2020-12's (Anthropic's). ``items``: an
    array schema without ``items`` given ``items: {}`` (OpenAI's)."""

    name: str
    inline: bool = False
    keep: frozenset[str] | None = None
    drop: frozenset[str] = frozenset()
    openapi: bool = False
    described: bool = False
    modern: bool = False
    items: bool = False
    maps: bool = False

    def without(self, keyword: str) -> SchemaRule:
        """This rule, leaving ``keyword`` out too (a reference's targets: inlined)."""
        inline = self.inline or keyword in (*_DEFS, "$ref")
        maps = self.maps and keyword != "additionalProperties"
        return replace(self, drop=self.drop | {keyword}, inline=inline, maps=maps)


PLAIN = SchemaRule("plain")
OLLAMA = SchemaRule(
    "ollama", inline=True, drop=frozenset({"$defs", "definitions"}), described=True
)
GEMINI = SchemaRule("gemini", inline=True, keep=_GEMINI_KEEP, openapi=True)
VERTEX = SchemaRule(
    "vertex", inline=True, keep=_GEMINI_KEEP | {"additionalProperties"}, openapi=True, maps=True
)
ANTHROPIC = SchemaRule("anthropic", modern=True)
OPENAI = SchemaRule("openai", modern=True, items=True)
_GEMINI_HOST = "generativelanguage.googleapis.com"
_VERTEX_HOST = "aiplatform.googleapis.com"
_OLLAMA_PORT = 11434


def rule_for(base_url: str, model: str) -> SchemaRule:
    """The rule for an OpenAI-compatible server and model: ``VERTEX`` for
    Vertex AI's endpoints, ``GEMINI`` for the Gemini API's and any model named
    gemini (a gateway passes the schema on to either), ``OLLAMA`` for
    Ollama's port, else ``OPENAI``."""
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    if host.endswith(_VERTEX_HOST):
        return VERTEX
    if host.endswith(_GEMINI_HOST) or "gemini" in model.lower():
        return GEMINI
    try:
        port = parts.port
    except ValueError:
        port = None
    return OLLAMA if port == _OLLAMA_PORT else OPENAI


def sent_schema(schema: Mapping[str, Any], rule: SchemaRule) -> dict[str, Any] | None:
    """``schema`` as ``rule``'s API takes it: a new object, ``schema`` unchanged.
    None when the API wants no parameters at all (Gemini, for a tool without any)."""
    root = _root(schema)
    if rule != PLAIN:
        out = _Walk(root, rule).node(root, ())
        root = out if isinstance(out, dict) else {}
        root["type"] = "object"
        root.pop("nullable", None)
        if rule.openapi and not root.get("properties") and not _open(root, rule):
            return None
    return root


# --- the root ---------------------------------------------------------------


def _root(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with an object at its root (see the module docstring)."""
    out = dict(schema)
    ref = out.get("$ref")
    if isinstance(ref, str):
        target = _pointer(schema, ref)
        del out["$ref"]
        if isinstance(target, dict):
            out = _merged(target, out)
    for key in ("allOf", "anyOf", "oneOf"):
        variants = out.pop(key, None)
        if not isinstance(variants, list):
            continue
        parts = [_deref(schema, v) for v in variants if isinstance(v, dict)]
        if key == "allOf":
            for part in parts:
                out = _merged(part, out)
        else:
            out = _union(out, parts)
    for key in _ROOT_OUT:
        out.pop(key, None)
    out["type"] = "object"
    if "required" in out and not isinstance(out.get("properties"), dict):
        out["properties"] = {}
    return out


def _props(node: Mapping[str, Any]) -> dict[str, Any]:
    """``node``'s properties, or none when it has none or not as an object."""
    props = node.get("properties")
    return props if isinstance(props, dict) else {}


def _names(node: Mapping[str, Any]) -> list[str]:
    """``node``'s required names: its ``required`` strings (anything else: none)."""
    names = node.get("required")
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def _deref(root: Mapping[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if not isinstance(ref, str):
        return node
    target = _pointer(root, ref)
    rest = {k: v for k, v in node.items() if k != "$ref"}
    return _merged(target, rest) if isinstance(target, dict) else rest


def _union(base: dict[str, Any], variants: list[dict[str, Any]]) -> dict[str, Any]:
    """``base`` taking any of ``variants``: their properties together, and only
    what every one of them requires (a superset of the union). A name some
    variant does not describe is, there, what its ``additionalProperties``
    says (any value, unless false); ``base``'s own properties stay as they are."""
    own = _props(base)
    order = [n for v in variants for n in _props(v) if n not in own]
    props = dict(own)
    for name in dict.fromkeys(order):
        options: list[Any] = []
        for variant in variants:
            sub = _props(variant).get(name)
            if sub is None and "patternProperties" not in variant:
                sub = variant.get("additionalProperties", True)
            elif sub is None:
                sub = True
            if sub is not False and sub not in options:
                options.append(sub)
        if any(o is True or o == {} for o in options):
            said = next((o["description"] for o in options if isinstance(o, dict)
                         and isinstance(o.get("description"), str)), None)
            props[name] = {"description": said} if said else {}
        else:
            props[name] = options[0] if len(options) == 1 else {"anyOf": options}
    required = _names(base)
    common: set[str] | None = None
    for variant in variants:
        mine = set(_names(variant))
        common = mine if common is None else common & mine
    out = {k: v for k, v in base.items() if k not in ("additionalProperties", "required")}
    out["properties"] = props
    names = [*required, *sorted((common or set()) - set(required))]
    if names:
        out["required"] = names
    return out


def _merged(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """One schema that takes every instance both ``a`` and ``b`` take: their
    properties together (``a``'s where both have one), every required name,
    ``b``'s words (description, default) over ``a``'s, and otherwise ``a``'s
    keyword where both have it. ``additionalProperties`` goes when the
    properties were joined (the other's names would be refused)."""
    out = dict(a)
    for key, value in b.items():
        if key == "properties" and isinstance(value, dict) and isinstance(a.get(key), dict):
            out[key] = {**value, **a[key]}
            if set(value) - set(a[key]):
                out.pop("additionalProperties", None)
        elif key == "required" and isinstance(value, list) and isinstance(a.get(key), list):
            out[key] = [*a[key], *(n for n in value if n not in a[key])]
        elif key == "additionalProperties" and "properties" in a and "properties" in b:
            continue
        elif key in _NOTES or key not in out:
            out[key] = value
    if "properties" in a and "properties" in b and set(_props(a)) - set(_props(b)):
        out.pop("additionalProperties", None)
    return out


def _pointer(root: Mapping[str, Any], ref: str) -> Any:
    """What a local ``$ref`` (``#/$defs/Name``, any JSON pointer) names, or None."""
    if not ref.startswith("#"):
        return None
    node: Any = root
    for part in ref[1:].split("/")[1:] if ref != "#" else []:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


# --- the rest ------------------------------------------------------------------


class _Walk:
    """One schema's walk under a rule: every schema position, each once per
    path (``$ref``s followed up to the bound)."""

    def __init__(self, root: Mapping[str, Any], rule: SchemaRule) -> None:
        self.root = root
        self.rule = rule
        self.made = 0  # schemas walked so far (``_NODES``)

    def node(self, node: Any, unfolding: tuple[str, ...]) -> Any:
        self.made += 1
        if isinstance(node, bool):
            return {} if self.rule.openapi else node  # true; false only loosened
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if self.rule.inline and isinstance(ref, str):
            return self._inlined(node, ref, unfolding)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "items" and isinstance(value, list):  # a tuple, as drafts 4 to 7 wrote it
                out[key] = [self.node(v, unfolding) for v in value]
            elif key == "additionalProperties" and isinstance(value, bool) and self.rule.maps:
                out[key] = value  # Vertex AI's takes a value: true and false as they are
            elif key in _ONE:
                out[key] = self.node(value, unfolding)
            elif key in _LIST and isinstance(value, list):
                out[key] = [self.node(v, unfolding) for v in value]
            elif key in _MAP and isinstance(value, dict):
                if self.rule.inline and key in _DEFS:
                    continue  # every reference to them is inlined
                out[key] = {name: self.node(v, unfolding) for name, v in value.items()}
            else:
                out[key] = value
        if self.rule.modern:
            out = _modern(out)
        if self.rule.items and "items" not in out and _kinds(out) & {"array"}:
            out["items"] = {}  # "array schema missing items": the same instances
        if self.rule.openapi:
            out = _openapi(out, self.rule.maps)
        elif self.rule.described and node is not self.root:
            out = _described(out)
        return self._kept(out)

    def _inlined(self, node: dict[str, Any], ref: str, unfolding: tuple[str, ...]) -> Any:
        rest = {k: v for k, v in node.items() if k != "$ref"}
        target = _pointer(self.root, ref)
        deep = unfolding.count(ref) >= _UNFOLD or self.made >= _NODES
        if not isinstance(target, dict | bool) or deep:
            # not ours to follow, or unfolded enough: any value, with its words
            said = rest.get("description") or (
                target.get("description") or target.get("title") if isinstance(target, dict)
                else None
            )
            cut = {k: v for k, v in rest.items() if k in _NOTES}
            if said:
                cut["description"] = said
            return self.node(cut, unfolding)
        if isinstance(target, bool):
            target = {}  # true; false only loosened
        return self.node(_merged(target, rest) if rest else target, (*unfolding, ref))

    def _kept(self, node: dict[str, Any]) -> dict[str, Any]:
        keep, drop = self.rule.keep, self.rule.drop
        if keep is None and not drop:
            return node
        out = {k: v for k, v in node.items() if (keep is None or k in keep) and k not in drop}
        if "prefixItems" in node and "prefixItems" not in out:
            out.pop("items", None)  # it would apply to the tuple's first items too
        if any(k in node and k not in out for k in ("properties", "patternProperties")):
            out.pop("additionalProperties", None)  # it would refuse their names
        if self.rule.openapi and node.get("default") is not None and "default" not in out:
            note = f"Default: {_shown(node['default'])}."
            out["description"] = _noted(out.get("description"), note)
        return out


def _open(node: Mapping[str, Any], rule: SchemaRule) -> bool:
    """Whether, under ``rule``, ``node`` is an object that takes names it does
    not list (``additionalProperties`` kept, and not false)."""
    return rule.maps and node.get("additionalProperties", True) is not False


def _openapi(node: dict[str, Any], maps: bool = False) -> dict[str, Any]:
    """``node`` in Gemini's terms (see the module docstring); its subschemas are
    already. ``maps``: Vertex AI's, where ``additionalProperties`` is kept."""
    node = dict(node)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in node and not isinstance(node[key], list):
            del node[key]  # no list of schemas: nothing it could say
    if "oneOf" in node:
        node["anyOf"] = [*node.get("anyOf", []), *node.pop("oneOf")]
    for part in node.pop("allOf", None) or ():
        if isinstance(part, dict):
            node = _merged(part, node)
    variants = node.get("anyOf")
    if isinstance(variants, list):
        rest = [v for v in variants if not _is_null(v)]
        if len(rest) < len(variants):
            node["nullable"] = True
        if not rest or any(v == {} or not isinstance(v, dict) for v in rest):
            node.pop("anyOf")  # null alone, or one of them takes anything: so does the whole
        elif len(rest) == 1:
            node.pop("anyOf")
            node = _merged(rest[0], node)
        else:
            node["anyOf"] = rest
    kind = node.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        if len(kinds) < len(kind):
            node["nullable"] = True
        if len(kinds) == 1:
            node["type"] = kinds[0]
        else:
            del node["type"]
            if kinds and "anyOf" not in node:  # else: any type (looser)
                node["anyOf"] = [{"type": k} for k in kinds]
    if isinstance(node.get("items"), list) or "prefixItems" in node:
        node.pop("items", None)  # a tuple: its items are any value here (looser)
    if node.get("type") == "null":
        del node["type"]
        node["nullable"] = True
    if "const" in node:
        node["enum"] = [node.pop("const")]
    values = node.get("enum")
    if isinstance(values, list):
        if None in values:
            node["nullable"] = True
            values = [v for v in values if v is not None]
        strings = node.get("type", "string") == "string"  # "only allowed for STRING type"
        if values and strings and all(isinstance(v, str) for v in values):
            node["enum"] = values
            node.setdefault("type", "string")
        else:
            del node["enum"]
            if values:
                listed = ", ".join(_shown(v) for v in values)
                node["description"] = _noted(node.get("description"), f"One of: {listed}.")
                if "type" not in node and (kind := _kind_of(values)):
                    node["type"] = kind
    fmt = node.get("format")
    if fmt is not None and not (isinstance(fmt, str) and fmt in _GEMINI_FORMATS):
        del node["format"]
        node["description"] = _noted(node.get("description"), f"Format: {fmt}.")
    if "type" not in node:
        if isinstance(node.get("properties"), dict):
            node["type"] = "object"
        elif "items" in node:
            node["type"] = "array"
    if node.get("type") == "object" and not node.get("properties") and maps:
        node.setdefault("additionalProperties", True)  # an object, with its values' schema
        node.pop("properties", None)
    elif node.get("type") == "object" and not node.get("properties"):
        del node["type"]  # "should be non-empty for OBJECT type": any value instead
        node.pop("properties", None)
        node.pop("required", None)
        node["description"] = _noted(node.get("description"), "A JSON object.")
    if node.get("type") == "array" and not node.get("items"):
        del node["type"]  # "items: missing field": any value instead
        node.pop("items", None)
        node["description"] = _noted(node.get("description"), "A JSON array.")
    if "required" in node:  # "required[0]: property is not defined"
        node["required"] = [n for n in _names(node) if n in _props(node)]
        if not node["required"]:
            del node["required"]
    return node


_JSON_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})


def _modern(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` with older drafts' forms in draft 2020-12's (see the module
    docstring): the same instances, but a tuple's ``items`` list is
    ``prefixItems`` (its ``additionalItems`` the ``items``), a boolean
    ``exclusiveMinimum``/``Maximum`` the bound itself, and draft 3's
    ``required: true`` on a property and a ``type`` no draft has left out
    (looser)."""
    if isinstance(node.get("items"), list):
        node["prefixItems"] = node.pop("items")
        if "additionalItems" in node:
            node["items"] = node.pop("additionalItems")
    for flag, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        said = node.get(flag)
        if isinstance(said, bool):
            del node[flag]
            limit = node.get(bound)
            if said and isinstance(limit, int | float) and not isinstance(limit, bool):
                node[flag] = node.pop(bound)
    if isinstance(node.get("required"), bool):
        del node["required"]
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "type" in node and not all(isinstance(k, str) and k in _JSON_TYPES for k in kinds):
        del node["type"]
    return node


def _kinds(node: Mapping[str, Any]) -> set[str]:
    """The JSON types ``node``'s ``type`` names."""
    kind = node.get("type")
    return {k for k in (kind if isinstance(kind, list) else [kind]) if isinstance(k, str)}


def _described(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` saying in words what Ollama's structs drop below the root (see
    the module docstring); the keywords stay, for a server that reads them."""
    if "const" in node and "enum" not in node:
        node["enum"] = [node.pop("const")]
    notes = []
    required = node.get("required")
    if isinstance(required, list) and required and isinstance(node.get("properties"), dict):
        notes.append(f"Required: {', '.join(str(n) for n in required)}.")
    if node.get("default") is not None:
        notes.append(f"Default: {_shown(node['default'])}.")
    if notes:
        node["description"] = _noted(node.get("description"), " ".join(notes))
    return node


def _kind_of(values: list[Any]) -> str | None:
    """The one JSON type of ``values``, if they share one."""
    if all(isinstance(v, bool) for v in values):
        return "boolean"
    if any(isinstance(v, bool) for v in values):
        return None
    if all(isinstance(v, int) for v in values):
        return "integer"
    return "number" if all(isinstance(v, int | float) for v in values) else None


def _is_null(node: Any) -> bool:
    """Whether ``node`` is null's schema (a ``{"type": "null"}`` rewritten already)."""
    if not isinstance(node, dict):
        return False
    return node.get("type") == "null" or (
        node.get("nullable") is True and set(node) <= {"nullable", "description"}
    )


def _noted(description: Any, note: str) -> str:
    return f"{description} {note}" if isinstance(description, str) and description else note


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# --- a server's refusal ---------------------------------------------------------

# Gemini: ``Unknown name "X" at 'tools[0].function_declarations[1].parameters…'``
_GEMINI_REFUSAL = re.compile(r"Unknown name \\*\"([^\"\\]+)\\*\" at '[^']*function_declarations")
# others: a keyword named as unsupported in a tool's schema
_KEYWORD_REFUSAL = re.compile(
    r"['\"`]?(\$?[A-Za-z]+)['\"`]? (?:is |are )?not (?:supported|permitted|allowed)"
)


def refused_keyword(said: str) -> tuple[bool, str] | None:
    """What a 400's words say of a tool schema: (Gemini's words, the keyword
    refused), or None when they refuse no schema keyword."""
    found = _GEMINI_REFUSAL.search(said)
    if found:
        return True, found.group(1)
    lower = said.lower()
    if "schema" not in lower or ("tool" not in lower and "function" not in lower):
        return None  # a field of the request, not of a tool's schema
    for match in _KEYWORD_REFUSAL.finditer(said):
        if match.group(1) in KEYWORDS:
            return False, match.group(1)
    return None
