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

* **reading a schema** (``alternatives``, ``json_type``, ``at_path``,
  ``resolve``, ``explain``, ``MAX_DEPTH``): in ``schema_nav``, imported here
  so the names stay where callers have always found them; ``type_from_schema``
  follows ``$ref`` with its ``local_ref``.

Nothing here knows about tools, functions or dialects. Core module: standard
library, msgspec and ``schema_nav`` only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Annotated, Any, Literal, Union

import msgspec
import msgspec.inspect as mi

from streamtools.schema_nav import (
    MAX_DEPTH,
    alternatives,
    at_path,
    explain,
    json_type,
    local_ref,
    resolve,
)

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
        target = local_ref(root, schema["$ref"])
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
