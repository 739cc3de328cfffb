"""An object or array parameter written as nested XML elements (``am_xml``).

Theory of operation
-------------------
The prompt teaches an object or array parameter as JSON text inside its
element, but models trained on XML tool formats (Anthropic's old
``<invoke>``, MiniMax, GLM, Claude-style agents) often write the structure
as elements instead::

    <address><city>Paris</city><zip>75001</zip></address>
    <tags><item>a</item><item>b</item></tags>

It was a string, and the call failed the schema (``Expected object, got
str``). ``read_nested`` reads such a value once its element has closed (a
typed value is held until then anyway), guided by the tool's schema, and
returns its JSON text, or None where the text is not that structure or the
schema does not say how to read it; the value then stays a string and the
schema check says what is wrong, with the call's raw text kept, as before.

* An object (the schema's ``type: object``, through ``$ref`` and ``anyOf``):
  each child element is the property of its name, read by that property's
  schema; a name given twice is ambiguous (None).
* An array: each child element is one item, read by ``items``; every child
  has the same name (``<item>``, or any other: ``<tag>``), else None.
* A child whose schema is an object or array holds elements again, or JSON
  text (``<tags>["a", "b"]</tags>``); a scalar is read as a top-level value
  of its kind is (``xml_values``): a string is the text with the layout
  newline after its opening tag and before its closing tag dropped, an
  integer, number, boolean or null its JSON (Python's ``True``, ``None`` as
  well), anything else kept as text for the schema check to name by its
  path (``$.address.zip``); without a type, JSON for an array, object or
  null and text otherwise; under several types, JSON if it is no string.
* Only ``<name>``, ``</name>``, ``<name/>`` (and whitespace between
  elements) are structure: an attribute, text beside child elements, a
  closing tag that closes no open element is None. A leaf's text is
  whatever comes before its own closing tag (``a < b``, entities the
  element machine decoded, a CDATA section it unwrapped).

Core package: standard library and msgspec only; reached only after a typed
value failed to decode as JSON, so it costs nothing on any other path.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from streamtools.parser.xml_values import (
    AUTO,
    NULLABLE,
    STRING,
    TYPED,
    WORD,
    empty_json,
    kind_of,
    layout_free,
    word_value,
)
from streamtools.schema import MAX_DEPTH, alternatives, json_type, resolve

__all__ = ["read_nested"]

_OPEN = re.compile(r"<([A-Za-z_][\w.\-]*)\s*(/?)>")
_SPACE = re.compile(r"\s*")
_PY = {"true": True, "false": False, "none": None, "null": None}


class _Unreadable(Exception):
    """The text is not nested elements this reader takes (see the docstring)."""


def read_nested(text: str, root: dict[str, Any], node: Any) -> str | None:
    """The JSON text of ``text``, the content of a parameter whose schema is
    ``node`` inside ``root``, read as nested elements; None if it is not."""
    t = json_type(root, node)
    if t not in ("object", "array"):
        return None
    try:
        reader = _Reader(text, root)
        value = reader.container(t, node, 0)
        if reader.pos != len(text):
            return None  # text after the elements, or a stray closing tag
        return msgspec.json.encode(value).decode()
    except (_Unreadable, UnicodeEncodeError):
        return None


class _Reader:
    def __init__(self, text: str, root: dict[str, Any]) -> None:
        self.text = text
        self.root = root
        self.pos = 0

    def container(self, t: str, node: Any, depth: int) -> Any:
        """Child elements from ``pos`` to the end or the next closing tag."""
        if depth > MAX_DEPTH:
            raise _Unreadable
        branch = _branch(self.root, node, t)
        children: list[tuple[str, Any]] = []
        text = self.text
        while True:
            self.pos = _SPACE.match(text, self.pos).end()  # type: ignore[union-attr]
            if self.pos == len(text) or text.startswith("</", self.pos):
                break
            m = _OPEN.match(text, self.pos)
            if m is None:
                raise _Unreadable  # text beside elements, an attribute, a comment
            name = m.group(1)
            self.pos = m.end()
            schema = _child_schema(branch, t, name)
            if m.group(2):
                value = self.leaf("", schema)
            else:
                value = self.value(name, schema, depth + 1)
            children.append((name, value))
        if not children:
            raise _Unreadable  # an empty element: nothing says which
        if t == "array":
            if len({name for name, _ in children}) != 1:
                raise _Unreadable  # items under different names
            return [value for _, value in children]
        obj = dict(children)
        if len(obj) != len(children):
            raise _Unreadable  # a property given twice
        return obj

    def value(self, name: str, schema: Any, depth: int) -> Any:
        """The element ``name`` opened before ``pos``: its value, up to and
        including its closing tag."""
        text = self.text
        close = re.compile(rf"</{re.escape(name)}\s*>")
        t = json_type(self.root, schema)
        if t in ("object", "array"):
            start = _SPACE.match(text, self.pos).end()  # type: ignore[union-attr]
            if _OPEN.match(text, start) is not None:
                self.pos = start
                value = self.container(t, schema, depth)
                m = close.match(text, self.pos)
                if m is None:
                    raise _Unreadable  # closed by another element's tag
                self.pos = m.end()
                return value
        m = close.search(text, self.pos)
        if m is None:
            raise _Unreadable
        content = text[self.pos : m.start()]
        self.pos = m.end()
        return self.leaf(content, schema)

    def leaf(self, content: str, schema: Any) -> Any:
        kind = kind_of(self.root, schema)
        if kind == STRING:
            return layout_free(content)
        if kind == WORD:
            return word_value(content, self.root, schema)
        value = content.strip()
        if kind == NULLABLE:
            return None if value == "null" else layout_free(content)
        try:
            decoded = msgspec.json.decode(value)
        except (msgspec.DecodeError, RecursionError):
            if kind == TYPED and value.lower() in _PY:
                return _PY[value.lower()]
            if kind == TYPED and not value and (empty := empty_json(self.root, schema)):
                return msgspec.json.decode(empty)  # <tags/>: an empty list
            return value if kind == TYPED else layout_free(content)
        if kind == TYPED:
            return decoded
        if kind == AUTO:
            return layout_free(content) if isinstance(decoded, str) else decoded
        # no type: an array, an object or null is JSON, the rest text
        return decoded if isinstance(decoded, list | dict) or decoded is None else (
            layout_free(content)
        )


def _branch(root: dict[str, Any], node: Any, t: str) -> dict[str, Any]:
    """``node`` resolved, or its alternative of type ``t`` (``Address | None``)."""
    resolved = resolve(root, node)
    for option in alternatives(root, resolved):
        if json_type(root, option) == t:
            return resolve(root, option)
    return resolved


def _child_schema(branch: dict[str, Any], t: str, name: str) -> Any:
    if t == "array":
        return branch.get("items")
    props = branch.get("properties")
    if isinstance(props, dict) and name in props:
        return props[name]
    extra = branch.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


