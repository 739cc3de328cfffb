"""JSON Schema work for tools: msgspec types to schemas and back, paths, explanations.

Theory of operation
-------------------
A tool has one argument type (a msgspec Struct) and one JSON Schema (what the
model sees). This module translates between the two, in both directions, and
answers the questions the rest of the package asks of a schema:

* **type -> schema** (``schema_of``): ``msgspec.json.schema_components`` on
  the argument type, with the root's own definition lifted out of ``$defs`` so
  the schema's root is the arguments object itself (``schema`` would put a
  ``$ref`` there, which many models and APIs refuse).

* **schema -> type** (``type_from_schema``): for tools that arrive as a JSON
  Schema (an MCP server, a proxy request). The common subset becomes a msgspec
  type: ``type`` (also as a list), ``properties``/``required`` (a Struct whose
  optional fields default to ``UNSET``, so absent stays absent),
  ``additionalProperties`` (``false`` forbids unknown keys, a schema types the
  values of a free-form object), ``items``, ``enum``/``const`` (a ``Literal``
  of strings or of integers), ``anyOf``/``oneOf`` (a union, if msgspec can
  tell its members apart), numeric and length bounds (``msgspec.Meta``) and
  local ``$ref``. Anything else, and anything deeper than ``MAX_DEPTH``,
  becomes ``Any``: accepted as given rather than refused, since the server that
  published the schema validates again. ``arguments_from`` turns the converted
  value back into the keyword arguments, with undeclared keys kept as sent.

* **what convert lets through** (``value_check``, ``closed_objects``): a key
  no field of a Struct, dataclass or TypedDict declares, which msgspec drops,
  and a number that is not finite, which lenient conversion reads from
  ``"nan"``; a tool refuses both, and its schema says such objects are closed.

* **whole numbers written as floats** (``integral_repair``): JSON Schema counts
  ``5.0`` as an integer and models write it, while msgspec's strict conversion
  refuses a float where an ``int`` is expected (lenient conversion takes it,
  but not into an integer ``Literal`` or ``IntEnum``). The arguments are
  rewritten with ``5`` there, at any depth, and converted again; ``5.5`` stays
  refused. Only when a conversion has failed: valid arguments pay nothing.

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

Nothing here knows about tools, functions or dialects. Core module: standard
library and msgspec only.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Annotated, Any, Literal, Union

import msgspec
import msgspec.inspect as mi

__all__ = [
    "MAX_DEPTH",
    "ValueCheck",
    "alternatives",
    "arguments_from",
    "at_path",
    "closed_objects",
    "json_type",
    "explain",
    "integral_repair",
    "resolve",
    "schema_of",
    "type_from_schema",
    "value_check",
]

#: how deep ``$ref`` chains and nested schemas are followed before giving up
MAX_DEPTH = 12
_SNIPPET_MAX = 600
_PATH = re.compile(r" - at `(\$[^`]*)`$")
_MISSING = re.compile(r"missing required field `([^`]+)`")
_STEP = re.compile(r"\.([^.\[]+)|\[([^\]]*)\]")


# --- type -> schema ------------------------------------------------------------


# ``schema_of``'s ``describe``: a type msgspec does not know as its schema and the
# definitions its references point to, or None
Describe = Callable[[Any], "tuple[dict[str, Any], dict[str, Any]] | None"]


def schema_of(arg_type: Any, describe: Describe | None = None) -> dict[str, Any]:
    """The JSON Schema of ``arg_type`` with the object itself at the root; nested
    types stay under ``$defs``. Raises ``TypeError``/``ValueError`` from msgspec
    for a type it cannot describe. ``object`` is any JSON value, as ``Any`` is
    (``{}``): msgspec validates it so, but has no schema for it. ``describe``
    gives the schema of other types (pydantic models: ``tools``); the
    definitions it returns join the root's ``$defs``, and one name given two
    different definitions is a ``ValueError`` (one would describe the other's
    values)."""
    found: dict[str, Any] = {}

    def hook(cls: Any) -> dict[str, Any]:
        if cls is object:
            return {_ANY_MARK: True}
        given = describe(cls) if describe is not None else None
        if given is None:
            raise NotImplementedError  # msgspec's own error for any other custom type
        schema, defs = given
        _join(found, defs)
        return schema

    (ref,), defs = msgspec.json.schema_components(
        [arg_type], ref_template="#/$defs/{name}", schema_hook=hook
    )
    defs = _without_mark(defs)
    if "$ref" in ref:
        root = dict(defs.pop(ref["$ref"].rsplit("/", 1)[-1]))
    else:  # a type ``describe`` gave is its schema, not a reference
        root = dict(_without_mark(ref))
    _join(defs, found)
    if root.get("title", "").endswith(".arguments"):
        del root["title"]  # the generated Struct's name says nothing to the model
    if defs:
        root["$defs"] = defs
    return root


def _join(defs: dict[str, Any], more: dict[str, Any]) -> None:
    for name, definition in more.items():
        if defs.setdefault(name, definition) != definition:
            raise ValueError(
                f"two different types are both named {name!r} in these parameters; "
                "rename one of them"
            )


# msgspec takes a hook's schema only when it is not empty, and ``{}`` is the
# schema of any value: ``object`` is given this mark, taken out afterwards
_ANY_MARK = "x-streamtools-any"


def _without_mark(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_mark(v) for k, v in node.items() if k != _ANY_MARK}
    if isinstance(node, list):
        return [_without_mark(v) for v in node]
    return node


# --- schema -> type ------------------------------------------------------------


def type_from_schema(schema: dict[str, Any]) -> Any:
    """A msgspec type that validates what ``schema`` describes (its common subset;
    the rest validates as ``Any``). Local ``$ref`` resolve against ``schema``."""
    return _type(schema, schema, 0)


def arguments_from(value: Any, raw: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments from a value converted into a ``type_from_schema`` type.

    Declared keys come from ``value`` (converted, e.g. ``"5"`` -> ``5`` when
    lenient); keys the schema does not declare are kept from ``raw`` as sent
    (they were allowed unless ``additionalProperties`` is false), at every
    depth: an object inside the arguments keeps its undeclared keys too. What
    comes out is plain JSON data (dicts, lists), never one of the Structs the
    value was converted into."""
    plain = msgspec.to_builtins(value)  # UNSET fields are left out
    if not isinstance(plain, dict):  # not an object type: the arguments as sent
        return dict(raw) if isinstance(raw, dict) else {}
    merged: dict[str, Any] = _merged(raw, plain, 0)
    return merged


def _merged(raw: Any, plain: Any, depth: int) -> Any:
    if depth > MAX_DEPTH + 1:  # deeper, the type was Any: ``plain`` is ``raw`` as sent
        return plain
    if isinstance(raw, dict) and isinstance(plain, dict):
        out = dict(raw)
        for key, item in plain.items():
            out[key] = _merged(raw.get(key), item, depth + 1)
        return out
    if isinstance(raw, list) and isinstance(plain, list) and len(raw) == len(plain):
        return [_merged(r, p, depth + 1) for r, p in zip(raw, plain, strict=True)]
    return plain


def _type(schema: Any, root: dict[str, Any], depth: int) -> Any:
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return Any
    if "$ref" in schema:
        target = _ref(root, schema["$ref"])
        return Any if target is None else _type(target, root, depth + 1)
    if "const" in schema:
        return _literal([schema["const"]])
    if "enum" in schema and isinstance(schema["enum"], list):
        return _literal(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return _union([_type(s, root, depth + 1) for s in schema[key]])
    kind = schema.get("type")
    if isinstance(kind, list):
        return _union([_type({**schema, "type": k}, root, depth) for k in kind])
    meta: dict[str, Any] = {}
    if kind in ("integer", "number"):
        py: Any = int if kind == "integer" else float
        for key, arg in (("minimum", "ge"), ("maximum", "le")):
            if isinstance(schema.get(key), int | float):
                meta[arg] = schema[key]
        for key, arg in (("exclusiveMinimum", "gt"), ("exclusiveMaximum", "lt")):
            if isinstance(schema.get(key), int | float) and not isinstance(schema[key], bool):
                meta[arg] = schema[key]
    elif kind == "string":
        py = str
        for key, arg in (("minLength", "min_length"), ("maxLength", "max_length")):
            if isinstance(schema.get(key), int):
                meta[arg] = schema[key]
    elif kind == "boolean":
        py = bool
    elif kind == "null":
        return None
    elif kind == "array":
        py = list[_type(schema.get("items"), root, depth + 1)]  # type: ignore[misc]
        for key, arg in (("minItems", "min_length"), ("maxItems", "max_length")):
            if isinstance(schema.get(key), int):
                meta[arg] = schema[key]
    elif kind == "object" or "properties" in schema:
        return _object(schema, root, depth)
    else:
        return Any
    return _bounded(py, meta)


def _bounded(py: Any, meta: dict[str, Any]) -> Any:
    """``py`` with the bounds in ``meta`` that msgspec can check. One it refuses
    (``true`` as a minimum, a negative or huge length, NaN or infinity, an integer
    beyond 64 bits, ``exclusiveMinimum`` beside ``minimum``) is left out, as an
    unknown keyword is: the server that published the schema validates again.
    Kept, it would raise out of ``add_schema``, or (64-bit bounds, checked only
    when a decoder is built) fail every call's validation. An integer bound
    beyond a float's range (``10**400``) makes ``msgspec.Meta`` itself fail: a
    ``SystemError`` around the ``OverflowError`` of its float conversion."""
    kept: dict[str, Any] = {}
    for arg, value in meta.items():
        trial = {**kept, arg: value}
        try:
            msgspec.json.Decoder(Annotated[py, msgspec.Meta(**trial)])
        except (TypeError, ValueError, OverflowError, SystemError):
            continue
        kept = trial
    return Annotated[py, msgspec.Meta(**kept)] if kept else py


def _object(schema: dict[str, Any], root: dict[str, Any], depth: int) -> Any:
    props = schema.get("properties")
    extra = schema.get("additionalProperties", True)
    if not isinstance(props, dict) or not props:
        if isinstance(extra, dict):
            return dict[str, _type(extra, root, depth + 1)]  # type: ignore[misc]
        if extra is False:  # no key at all (a tool without parameters, OpenAI's strict form)
            return msgspec.defstruct("object", [], forbid_unknown_fields=True)
        return dict[str, Any]
    names = schema.get("required")
    required = {k for k in names if isinstance(k, str)} if isinstance(names, list) else set()
    fields: list[Any] = []
    rename: dict[str, str] = {}
    for i, (key, sub) in enumerate(props.items()):
        attr = f"f{i}"  # JSON keys need not be identifiers; rename maps them back
        rename[attr] = key
        typ = _type(sub, root, depth + 1)
        if key in required:
            fields.append((attr, typ))
        else:
            fields.append((attr, typ | msgspec.UnsetType, msgspec.UNSET))
    try:
        return msgspec.defstruct(
            "object", fields, kw_only=True, rename=rename, forbid_unknown_fields=extra is False
        )
    except (TypeError, ValueError):  # keys msgspec cannot name (quotes, control characters)
        return dict[str, Any]


def _literal(values: list[Any]) -> Any:
    if values and all(isinstance(v, str) for v in values):
        return Literal[tuple(values)]
    if values and all(
        isinstance(v, int) and not isinstance(v, bool) and -(2**63) <= v < 2**63 for v in values
    ):  # msgspec's integer literals are 64-bit
        return Literal[tuple(values)]
    return Any


def _union(types: list[Any]) -> Any:
    if not types or Any in types:
        return Any
    # built at run time with Union: "None | None" has no "|"
    union: Any = Union.__getitem__(tuple(types))
    try:  # msgspec allows only unambiguous unions; anything else validates as Any
        msgspec.json.Decoder(union)
    except TypeError:
        return Any
    return union


# --- what convert lets through -----------------------------------------------------

_OBJECTS = (mi.StructType, mi.DataclassType, mi.TypedDictType)
_ARRAYS = (mi.ListType, mi.SetType, mi.FrozenSetType, mi.VarTupleType)
_TEXTS = (mi.StrType, mi.LiteralType, mi.EnumType)  # a union member a string may be

#: (arguments, lenient) -> an error in msgspec's words, or None
ValueCheck = Callable[[Any, bool], "str | None"]


def value_check(arg_type: Any, *, closed: bool) -> ValueCheck | None:
    """What ``msgspec.convert`` into ``arg_type`` lets through that a tool's
    arguments may not hold, as a function of (arguments, lenient) that returns
    an error in msgspec's words (with its `` - at `$.path` ``), or None; None
    for a type in which neither can happen.

    * With ``closed``, a key that no field of a Struct, dataclass or TypedDict
      declares: msgspec drops it unless the Struct forbids unknown fields, so a
      model's misspelt field lost its value without a word, while the schema
      (``closed_objects``) says ``additionalProperties: false``.
    * A float that is not finite: JSON has none, a schema cannot allow one,
      and msgspec writes one back as ``null``. Lenient conversion reads
      ``"nan"``, ``"inf"`` and ``"infinity"`` as such (while it refuses
      ``"1e999"`` as out of range); a caller that did not decode JSON may pass
      one as it is. A string where a union also takes text is left as msgspec
      reads it."""
    try:
        info = mi.type_info(arg_type)
    except (TypeError, ValueError):
        return None
    def checked(node: mi.Type) -> bool:
        if isinstance(node, mi.FloatType):
            return True
        return closed and isinstance(node, _OBJECTS) and not getattr(node, "array_like", False)

    if not _anywhere(info, checked):
        return None
    return lambda raw, lenient: _problem(info, raw, closed=closed, lenient=lenient)


def _children(node: mi.Type) -> list[mi.Type]:
    if isinstance(node, (*_OBJECTS, mi.NamedTupleType)):
        return [f.type for f in node.fields]
    if isinstance(node, _ARRAYS):
        return [node.item_type]
    if isinstance(node, mi.TupleType):
        return list(node.item_types)
    if isinstance(node, mi.DictType):
        return [node.value_type]
    if isinstance(node, mi.UnionType):
        return list(node.types)
    return []


def _anywhere(info: mi.Type, test: Callable[[mi.Type], bool]) -> bool:
    """Whether ``test`` holds for ``info`` or a type anywhere inside it (each
    type looked at once: a recursive type ends)."""
    seen: set[int] = set()
    stack = [info]
    while stack:
        node = stack.pop()
        if id(node) in seen:  # a recursive type
            continue
        seen.add(id(node))
        if test(node):
            return True
        stack.extend(_children(node))
    return False


def _member(union: mi.UnionType, raw: Any) -> mi.Type | None:
    """The member of ``union`` that msgspec converted ``raw`` into (as far as it
    matters here), or None."""
    types = union.types
    if isinstance(raw, dict):
        objects = [t for t in types if isinstance(t, (*_OBJECTS, mi.DictType))]
        for t in objects:  # tagged Structs: the tag says which
            if isinstance(t, mi.StructType) and t.tag_field is not None:
                if raw.get(t.tag_field) == t.tag:
                    return t
        return objects[0] if len(objects) == 1 else None
    if isinstance(raw, list):
        arrays: list[mi.Type] = [
            t
            for t in types
            if isinstance(t, (*_ARRAYS, mi.TupleType, mi.NamedTupleType))
            or getattr(t, "array_like", False)
        ]
        return arrays[0] if len(arrays) == 1 else None
    if isinstance(raw, str) and any(isinstance(t, _TEXTS) for t in types):
        return None
    return next((t for t in types if isinstance(t, mi.FloatType)), None)


def _not_finite(raw: Any, lenient: bool) -> bool:
    if isinstance(raw, float):
        return not math.isfinite(raw)
    if lenient and isinstance(raw, str) and len(raw) <= 16:
        try:  # as msgspec reads it: "nan", "-Infinity", in any case
            return not math.isfinite(msgspec.convert(raw, float, strict=False))
        except msgspec.ValidationError:
            return False
    return False


def _parts(node: mi.Type, value: Any) -> list[tuple[Any, mi.Type, Any]]:
    """What converting ``value`` into ``node`` (not a union: see ``_member``)
    converts inside it, as (key or index, the type it is converted into, the
    item): an object's declared fields (a key no field declares is dropped), a
    free-form object's values, an array's items by position. How a value is
    taken apart along its type, for both walks (``_problem``, ``_whole``)."""
    if isinstance(value, dict):
        if isinstance(node, _OBJECTS):
            fields = {f.encode_name: f.type for f in node.fields}
            return [(k, fields[k], v) for k, v in value.items() if k in fields]
        if isinstance(node, mi.DictType):
            return [(k, node.value_type, v) for k, v in value.items()]
        return []
    if not isinstance(value, list):
        return []
    if isinstance(node, _ARRAYS):
        return [(i, node.item_type, v) for i, v in enumerate(value)]
    if isinstance(node, mi.TupleType):
        types = node.item_types
    elif isinstance(node, (*_OBJECTS, mi.NamedTupleType)):  # array_like: fields by position
        types = tuple(f.type for f in node.fields)
    else:
        return []
    return [(i, t, v) for i, (t, v) in enumerate(zip(types, value, strict=False))]


def _problem(info: mi.Type, raw: Any, *, closed: bool, lenient: bool) -> str | None:
    stack: list[tuple[mi.Type, Any, str]] = [(info, raw, "$")]
    while stack:
        node, value, path = stack.pop()
        if isinstance(node, mi.UnionType):
            member = _member(node, value)
            if member is not None:
                stack.append((member, value, path))
        elif isinstance(node, mi.FloatType):
            if _not_finite(value, lenient):
                shown = value if isinstance(value, str) else repr(value)
                return f"Expected a finite number, got `{shown}` - at `{path}`"
        elif isinstance(value, list):
            parts = _parts(node, value)
            stack.extend(reversed([(t, v, f"{path}[{i}]") for i, t, v in parts]))
        elif isinstance(value, dict):
            parts = _parts(node, value)
            if closed and len(parts) < len(value) and isinstance(node, _OBJECTS):
                declared = {key for key, _, _ in parts} | {getattr(node, "tag_field", None)}
                unknown = next((key for key in value if key not in declared), None)
                if unknown is not None:
                    where = "" if path == "$" else f" - at `{path}`"
                    return f"Object contains unknown field `{unknown}`{where}"
            free = isinstance(node, mi.DictType)  # msgspec's path names no key of one
            pending = [(t, v, f"{path}[...]" if free else f"{path}.{k}") for k, t, v in parts]
            stack.extend(reversed(pending))  # the first item is looked at first
    return None


# --- whole numbers written as floats ---------------------------------------------


def integral_repair(arg_type: Any) -> Callable[[Any], Any] | None:
    """A function that returns ``raw`` (arguments for ``arg_type``) with each float
    that has no fractional part turned into an ``int`` where the type takes an
    integer and no float (``int``, ``int | None``, an integer ``Literal`` or
    ``IntEnum``, at any depth), or None when there was none; None for a type
    with no integer in it. ``raw`` itself is never changed (copy on write).
    Called after a conversion failed, so that valid arguments cost nothing."""
    try:
        info = mi.type_info(arg_type)
    except (TypeError, ValueError):
        return None
    if not _anywhere(info, _takes_whole):
        return None
    return lambda raw: _repaired(info, raw)


def _takes_whole(node: mi.Type) -> bool:
    """Whether ``node`` takes an integer where it does not take a float."""
    if isinstance(node, mi.IntType):
        return True
    if isinstance(node, mi.LiteralType):
        return any(isinstance(v, int) and not isinstance(v, bool) for v in node.values)
    if isinstance(node, mi.EnumType):
        return any(isinstance(m.value, int) for m in node.cls)
    if isinstance(node, mi.UnionType):
        floats = any(isinstance(t, mi.FloatType) for t in node.types)
        return not floats and any(_takes_whole(t) for t in node.types)
    return False


def _repaired(info: mi.Type, raw: Any) -> Any:
    try:
        fixed = _whole(info, raw)
    except RecursionError:  # nested deeper than Python recurses: left as it was
        return None
    return None if fixed is raw else fixed


def _whole(node: mi.Type, value: Any) -> Any:
    if isinstance(value, float):
        return int(value) if value.is_integer() and _takes_whole(node) else value
    if not isinstance(value, (dict, list)):  # a tuple: faster than dict | list
        return value
    if isinstance(node, mi.UnionType):
        member = _member(node, value)
        return value if member is None else _whole(member, value)
    out = value
    for key, typ, item in _parts(node, value):
        if (new := _whole(typ, item)) is not item:
            if out is value:
                out = value.copy()  # a dict or a list
            out[key] = new
    return out


def closed_objects(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (from ``schema_of``) with ``additionalProperties: false`` on each
    object with declared properties that does not say otherwise: the Structs,
    dataclasses and TypedDicts whose unknown keys ``value_check`` refuses."""
    for node in [schema, *schema.get("$defs", {}).values()]:
        if node.get("type") == "object" and "properties" in node:
            node.setdefault("additionalProperties", False)
    return schema


# --- paths -----------------------------------------------------------------------


def _ref(root: dict[str, Any], ref: Any) -> dict[str, Any] | None:
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
        node = {**(_ref(root, node["$ref"]) or {}), **own}
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
