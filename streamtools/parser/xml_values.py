"""How an ``am_xml`` parameter element's text becomes JSON argument text.

Theory of operation
-------------------
``ParamValues`` is the value half of the ``am_xml`` body (a mixin: the element
machine in ``am_xml`` finds element boundaries, this turns content into
``ArgsDelta`` text). A parameter has a kind:

* ``STRING`` (schema ``type: string``): ``"key": "`` is emitted when the element
  opens, each decoded piece of content is JSON-escaped and emitted at once, ``"``
  when it closes. One newline right after the opening tag and one right before
  the closing tag are layout and dropped (the trailing one is held back until
  the next piece shows it was not the last). Everything else is the value's:
  indentation and spaces around it too (``<code>\n    x = 1\n</code>`` is
  ``"    x = 1"``), as Qwen3-Coder's template writes a value (one newline per
  side) and as vLLM's parsers for it and for GLM's form read it, after
  stripping broke the first line of every code edit (vllm-project/vllm#48753,
  #48846). A newline is ``\n`` or ``\r\n``: a
  model writing CRLF lays a value out the same way, and dropping only the ``\n``
  half left a stray CR in a path or command (``'\r\nls\r'``). A CR at the end of
  a piece is held back too, since the ``\n`` may follow in the next delta; a CR
  that ends no newline is content. A high surrogate half ending a piece is
  held back the same way, since its low half may follow (the pair is one
  character, as ``valid_text`` makes it, whatever the cut).
* ``WORD`` (a string the schema lists the values of, ``enum`` or ``const``
  (``Literal["c", "f"]``, an ``Enum``), or gives a ``format`` no value begins or
  ends with a space in: a date, a URI, an e-mail, a UUID, pydantic's ``path``):
  not free text, so it is held, as a ``TYPED`` value is, and emitted when it
  closes, its spaces and layout dropped: a model that lays a call out as
  pretty-printed XML (``<unit>\n    celsius\n  </unit>``) means ``celsius``,
  and ``"    celsius\n  "`` was refused by the schema (the repair turn cost a
  round-trip for a value whose meaning is plain). A listed value written in
  quotes (``"celsius"``) is the value too; a text that is a listed value as
  written (spaces and all) stays so; ``null`` is null where the schema allows
  it (``Literal["c", "f"] | None``). Free-text strings are not trimmed: only
  the schema says that spaces cannot be meant, and holding a free-text string
  to its close to look would lose its streaming.
* ``TYPED`` (any other schema type): the content is held and emitted when the
  element closes: its stripped text if that is JSON (Python's ``True``,
  ``False`` and ``None``, in any case, are ``true``, ``false`` and ``null``:
  the schema says it is no text), else as a JSON string so the catalog's
  validation can say what is wrong. An empty element (whitespace only) is
  ``[]`` for an array, ``{}`` for an object (``empty_json``).
* ``UNTYPED`` (no schema, a parameter the schema does not declare, or one whose
  schema names no type): the text the model wrote, but for an array or object
  (JSON text, as the prompt teaches) and ``null``. The first ``_PROBE``
  characters decide: a start of ``[``, ``{`` or ``null`` is held to the close and
  kept as JSON if it decodes (to an array, an object or null); any other start
  turns the parameter into a ``STRING`` and it streams from then on. A bare
  ``5`` or ``true`` is the string ``"5"`` or ``"true"``. It was the number or
  boolean: a string parameter got an int (which a lenient reader does not
  take for a string) and a text lost its spelling for good (``1.10`` became
  1.1, ``1e3`` 1000.0); ``"5"`` is typed again by any lenient reader (the
  registry's validation reads it as 5 for an int parameter, ``"true"`` as
  true). vLLM's Qwen3-Coder XML parser leaves a parameter it has no type for a
  string too.
* ``AUTO`` (a schema that allows several types, not one: ``int | str``, a type
  list, an enum of numbers and strings): the schema says a number or literal
  may be meant, so JSON decides. A start that could be a number, array,
  object, ``true``, ``false`` or ``null`` is held to the close and kept as JSON
  if it decodes to a non-string; any other start turns the parameter into a
  ``STRING``.
* ``NULLABLE`` (a string that may also be null: ``str | None``, ``anyOf:
  [string, null]``, ``type: [string, null]``): a ``STRING`` whose start is held
  while it could still be ``null`` (past leading whitespace, the layout newline
  among it); a content of exactly ``null`` (stripped) is JSON null, anything
  else turns it into a ``STRING`` that streams from then on. Without this a
  ``None`` written back from history (``<tag>null</tag>``, as OpenAI strict mode
  sends every optional parameter) read back as the string ``"null"``, and a
  model copying it sent that to the tool. ``ArgsDelta`` is append-only, so
  nothing of the value is emitted before it is decided.

CDATA is the model saying "this is text": a section in a ``NULLABLE`` value
makes it a ``STRING`` at once (``<![CDATA[null]]>`` is the string ``"null"``, as
the render side writes it). An ``AUTO`` or ``UNTYPED`` value with a section in
it becomes ``AUTO_TEXT``: decided as ``AUTO`` is, but at the close only an array or object
stays JSON, a number, ``true``, ``false`` or ``null`` is the text
(``<![CDATA[5]]>`` is ``"5"``). No one needs CDATA to write a number or a
literal, while an array or object holding ``<`` or ``&`` in its strings goes in
CDATA (the render side writes it so; the prompt asks it of text with them).
``TYPED`` values are read as JSON with or without it (``<n><![CDATA[5]]></n>``
for an integer is ``5``: the schema says what it is).

A ``[`` or ``{`` written as a character reference (``&#91;1, 2]``) where an
undecided value begins (nothing but whitespace before it) says "text" too: the
value is a ``STRING`` from there, its text ``[1, 2]``. A string whose text is
JSON array or object text has no other spelling where the schema allows an array
or object (CDATA cannot say it: an array whose strings hold ``<`` needs a
section), and no one escapes the bracket of an array they mean; the render side
writes a past call's such string so (``prompts.am_xml``). It was that array.

Where a value held to its close is read as JSON, an array or object whose
strings hold raw control characters (a newline in code, written unescaped) is
read with them escaped (``jsonscan.escape_controls``), as the JSON dialects
read their arguments: JSON does not allow them raw, but the meaning is plain.
"""

from __future__ import annotations

import html
import re
from typing import Any

import msgspec

from streamtools.events import ParserEvent
from streamtools.parser.calls import XML_ARGS, Call
from streamtools.parser.jsonscan import escape_controls
from streamtools.results import valid_text
from streamtools.schema import MAX_DEPTH, alternatives, json_type, resolve

__all__ = [
    "AUTO", "AUTO_TEXT", "NULLABLE", "PARAMETER_IS", "STRING", "TYPED", "UNTYPED", "WORD",
    "ParamValues", "empty_json", "equals_tag", "kind_of", "kinds_from_schema", "layout_free",
    "word_value",
]

# (the undecided kinds last: ``kind >= AUTO`` is "undecided, probing")
STRING, TYPED, WORD, AUTO, NULLABLE, AUTO_TEXT, UNTYPED = range(7)


def equals_tag(element: str) -> re.Pattern[str]:
    """A whole ``<ELEMENT=NAME>`` tag, the name quoted or not, as Qwen3-Coder
    models write a parameter (``<parameter=q>``, closed by ``</parameter>``) and,
    in ``hermes``, the function (``<function=search>``); group 1 is the name."""
    return re.compile(rf"""<{element}=["']?([^\s"'<>=/]+)["']?\s*>\Z""")


PARAMETER_IS = equals_tag("parameter")

_JSON_START = frozenset('{["-0123456789')
_CONTAINER_START = frozenset("[{")
_LITERALS = ("true", "false", "null")
# every non-empty start of a literal: ``core in`` this is ``any(lit.startswith(core))``
_LITERAL_STARTS = frozenset(lit[:k] for lit in _LITERALS for k in range(1, len(lit) + 1))
_PY_LITERALS = {"true": "true", "false": "false", "none": "null"}  # (lowered)
_NULL: tuple[str, ...] = ("null",)
_NULL_STARTS = frozenset(("n", "nu", "nul", "null"))
_PROBE = 16


def _json_str(text: str) -> str:
    try:
        return msgspec.json.encode(text).decode()[1:-1]
    except UnicodeEncodeError:
        # a lone UTF-16 surrogate half (not text UTF-8 can carry): U+FFFD in the
        # arguments, as in the transcript; the call's raw text keeps it
        return msgspec.json.encode(valid_text(text)).decode()[1:-1]


def kinds_from_schema(schema: dict[str, Any] | None) -> dict[str, int]:
    """Parameter kinds from a parameters schema (missing: ``UNTYPED``)."""
    kinds: dict[str, int] = {}
    schema = schema or {}
    props = schema.get("properties")
    if isinstance(props, dict):
        for name, prop in props.items():
            kind = kind_of(schema, prop)
            if kind != UNTYPED:
                kinds[name] = kind
    return kinds


def kind_of(root: dict[str, Any], node: Any) -> int:
    """The kind of a value whose schema is ``node`` (inside ``root``)."""
    t = json_type(root, node)  # through anyOf and $ref: ``str | None`` is a string
    if t == "string":
        if _listed(root, node) is not None or _formatted(root, node):
            return WORD  # (one that may be null too: ``word_value`` reads ``null``)
        return NULLABLE if _allows_null(root, node) else STRING
    if t is not None:
        return TYPED
    if _types_named(root, node) - {"string", "null"}:
        return AUTO  # several types, not only text: JSON decides
    return UNTYPED


# formats whose values never begin or end with a space (JSON Schema's, pydantic's paths)
_WORD_FORMATS = frozenset((
    "date", "date-time", "time", "duration", "email", "idn-email", "hostname",
    "idn-hostname", "ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uuid",
    "path", "file-path", "directory-path",
))


def _listed(root: dict[str, Any], node: Any, depth: int = 0) -> frozenset[str] | None:
    """The strings a string schema lists (``enum``, ``const``, those of each of
    its ``alternatives``), or None if it takes any string. Read through local
    ``$ref``."""
    node = resolve(root, node)
    if depth > MAX_DEPTH:
        return None
    options = alternatives(root, node)
    if options:
        out: frozenset[str] = frozenset()
        for o in options:
            if o.get("type") == "null":
                continue
            listed = _listed(root, o, depth + 1)
            if listed is None:
                return None
            out |= listed
        return out or None
    values = node.get("enum")
    values = list(values) if isinstance(values, list) else []
    if "const" in node:
        values.append(node["const"])
    strings = frozenset(v for v in values if isinstance(v, str))
    return strings or None


def _formatted(root: dict[str, Any], node: Any) -> bool:
    """Whether a string schema gives a format no value is spaced in (``_WORD_FORMATS``)."""
    node = resolve(root, node)
    if node.get("format") in _WORD_FORMATS:
        return True
    options = alternatives(root, node)
    return bool(options) and all(
        o.get("type") == "null" or o.get("format") in _WORD_FORMATS for o in options
    )


def word_value(text: str, root: dict[str, Any], node: Any) -> str | None:
    """A ``WORD`` value's text (see the module docstring): a listed value as
    written, stripped or unquoted; else, for a listed schema, the text without
    its layout newlines (the schema check names it) or, for a format, stripped.
    None (JSON null) for ``null`` where the schema allows null and lists no
    such string (``Literal["a", "b"] | None``), as a ``NULLABLE`` value reads it."""
    plain = layout_free(text)
    word = plain.strip()
    listed = _listed(root, node)
    if word == "null" and (listed is None or word not in listed) and _allows_null(root, node):
        return None
    if listed is None:
        return word
    if plain in listed:
        return plain
    if word in listed:
        return word
    if len(word) > 1 and word[0] == word[-1] and word[0] in "\"'" and word[1:-1] in listed:
        return word[1:-1]
    return plain


def _types_named(root: dict[str, Any], node: Any, depth: int = 0) -> set[str]:
    """The JSON types a parameter's schema names: ``type`` (a list's strings
    too), the values of an ``enum`` or ``const``, those of each of its
    ``alternatives``. Read through local ``$ref``."""
    node = resolve(root, node)
    if not node or depth > MAX_DEPTH:
        return set()
    options = alternatives(root, node)  # (read as ``json_type`` reads them)
    if options:
        return set().union(*(_types_named(root, o, depth + 1) for o in options))
    t = node.get("type")
    types = t if isinstance(t, list) else [t]
    named = {x for x in types if isinstance(x, str)}
    enum = node.get("enum")
    values = list(enum) if isinstance(enum, list) else []
    if "const" in node:
        values.append(node["const"])
    for v in values:  # (which non-string type it is does not matter here)
        named.add("null" if v is None else "string" if isinstance(v, str) else "other")
    return named


def _allows_null(root: dict[str, Any], node: Any, depth: int = 0) -> bool:
    """Whether a parameter's schema admits null: ``type: "null"`` or a type list
    with it, OpenAPI's ``nullable: true``, an enum holding null, or one of its
    ``alternatives`` that does (``str | None``). Read through local ``$ref``,
    and the alternatives as ``json_type`` reads them (``{"type": ["string",
    "null"], "anyOf": [{"type": "string"}]}`` is a string, never null)."""
    node = resolve(root, node)
    if not node or depth > MAX_DEPTH:
        return False
    options = alternatives(root, node)
    if options:
        return any(_allows_null(root, o, depth + 1) for o in options)
    t = node.get("type")
    if t == "null" or (isinstance(t, list) and "null" in t) or node.get("nullable") is True:
        return True
    enum = node.get("enum")
    return isinstance(enum, list) and None in enum


class ParamValues:
    """Builds the arguments JSON text of one call, parameter by parameter."""

    call: Call
    out: list[ParserEvent]
    kinds: dict[str, int]
    params: int
    state: int
    pname: str
    pclose: str
    kind: int
    held: list[str]  # typed or undecided value text
    probe: str  # the start of an AUTO value while undecided
    probe_done: bool
    fresh: bool  # no content yet: a leading newline is layout
    newline: str  # a trailing newline ("\n", "\r\n"), CR or high surrogate held back, or ""
    # ``CallBody.streaming``: XML_ARGS in a started call's string parameter text,
    # past its start, no newline held: the next plain piece is its own JSON string
    # text (the core's lane; 0 is always safe, it only sends a piece the longer way)
    streaming: int
    param_state: int  # the element machine's state inside a parameter
    body_state: int  # … and between parameters
    given: set[str]  # the parameters' names so far
    bad: str | None  # why the call is malformed (``am_xml``), found so far


    def _start_values(self) -> None:
        """No parameter read yet: the state of a call's values before its first
        (a body made or renewed for a new call, in either XML form)."""
        self.kinds = {}
        self.params = 0
        self.given = set()
        self.bad = None
        self.pname = ""  # the open parameter
        self.pclose = ""
        self.kind = STRING
        self._start_value()

    def _start_value(self) -> None:
        """No text of the (next) parameter's value read yet."""
        self.held = []
        self.probe = ""
        self.probe_done = False
        self.fresh = True
        self.newline = ""
        self.streaming = 0

    def _open_param(self, name: str, element: str) -> None:
        if name not in self.given:
            self.given.add(name)
        elif self.bad is None:
            # the arguments would hold the last value only (see ``am_xml``)
            self.bad = (
                f"The parameter {name!r} is given more than once: give each parameter "
                f'once, a list as one JSON array (<{element}>["a", "b"]</{element}>).'
            )
        self.pname = name
        self.pclose = f"</{element}>"
        self.state = self.param_state
        self.kind = self.kinds.get(name, UNTYPED)
        self._start_value()
        lead = "{" if self.params == 0 else ", "
        self.params += 1
        # an ASCII identifier is its own JSON string text (most names; the test is
        # cheaper than the encoder)
        text = name if name.isascii() and name.isidentifier() else _json_str(name)
        key = f'{lead}"{text}": '
        if self.kind == STRING:
            key += '"'
        self.call.add_args(key, self.out)

    def _content(self, text: str) -> None:
        if self.kind != STRING:
            self.held.append(text)
            if self.kind >= AUTO and self._probe(text):
                self._as_string()
            return
        if self.newline:
            text = self.newline + text
            self.newline = ""
        if self.fresh:
            if text == "\r":  # half a leading CRLF, maybe: held (and still fresh)
                self.newline = text
                return
            self.fresh = False
            if text.startswith("\n"):
                text = text[1:]
            elif text.startswith("\r\n"):
                text = text[2:]
        if text.endswith("\n"):
            cut = 2 if text.endswith("\r\n") else 1
            self.newline = text[-cut:]
            text = text[:-cut]
        elif text.endswith("\r"):
            self.newline = "\r"
            text = text[:-1]
        self.streaming = (
            XML_ARGS
            if not self.newline and self.state == self.param_state and self.call.started
            else 0
        )
        if text:
            try:
                piece = msgspec.json.encode(text).decode()[1:-1]
            except UnicodeEncodeError:
                piece = self._with_surrogates(text)
            self.call.add_args(piece, self.out)

    def _with_surrogates(self, text: str) -> str:
        """``_json_str`` of a piece with a lone surrogate half in it; a high half
        that ends the piece is held (in ``newline``): its low half may begin the
        next piece, and the pair is one character (``valid_text``), however the
        deltas cut it."""
        if not self.newline and "\ud800" <= text[-1] <= "\udbff":  # (else a newline ends it)
            self.newline = text[-1]
            self.streaming = 0
            text = text[:-1]
        return _json_str(text)

    def _reference(self, ref: str) -> None:
        """An entity or character reference in a value (``&amp;``, ``&#91;``): its
        character is content; a ``[`` or ``{`` written so where an undecided
        value begins says "text" (see the module docstring)."""
        text = html.unescape(ref)
        if (text == "[" or text == "{") and self.kind >= AUTO and not self.probe.strip():
            self._as_string()
        self._content(text)

    def _as_string(self) -> None:
        """An undecided (``AUTO``, ``NULLABLE``) value is a string after all: its
        opening quote, then the text held so far, as a ``STRING`` takes it (the
        layout newline, escaping); from here on it streams."""
        held, self.held = "".join(self.held), []
        self.kind = STRING
        self.call.add_args('"', self.out)
        if held:  # (an empty piece would end ``fresh``: the layout newline may follow)
            self._content(held)

    def _probe(self, text: str) -> bool:
        """``AUTO``, ``NULLABLE``, ``UNTYPED``: True once the value's start rules
        out a JSON non-string (``NULLABLE``: ``null``; ``UNTYPED``: an array, an
        object or ``null``).

        Looks at no more than ``_PROBE`` characters, so deciding costs O(1) per
        piece however long the value grows."""
        if self.probe_done:
            return False
        self.probe += text[: _PROBE + 1]
        p = self.probe.lstrip()
        if not p:
            self.probe = ""
            return False
        if self.kind == NULLABLE:
            literals, starts = _NULL, _NULL_STARTS
        elif p[0] in (_CONTAINER_START if self.kind == UNTYPED else _JSON_START):
            self.probe_done = True  # held whole until it closes, then decoded
            return False
        elif self.kind == UNTYPED:
            literals, starts = _NULL, _NULL_STARTS
        else:
            literals, starts = _LITERALS, _LITERAL_STARTS
        core = p.rstrip()
        if len(p) > _PROBE:
            return True
        if core != p:
            return core not in literals
        return core not in starts

    def _line_start(self, s: str, i: int, p: int) -> bool:
        """Whether ``s[p]`` begins a line of the value, whose text up to ``s[i]``
        has been read (or the value is empty so far)."""
        if p > i:
            return s[p - 1] == "\n"
        if self.kind == STRING:
            return self.fresh or self.newline.endswith("\n")
        held = self.held
        return not held or held[-1].endswith("\n") or not "".join(held).strip()

    def _undeclared_yet(self, name: str) -> bool:
        """Whether ``name`` may be the call's next parameter: not given yet, and
        declared by the tool's schema (any name, without one)."""
        if name in self.given:
            return False
        call = self.call
        schema = call.ctx.catalog.schema(call.name or "") if call.started else None
        props = schema.get("properties") if isinstance(schema, dict) else None
        return not isinstance(props, dict) or name in props

    def _cdata_opens(self) -> None:
        """A CDATA section begins in the value: in an undecided one it says
        "text" (see the module docstring)."""
        if self.kind == NULLABLE:
            self._as_string()
        elif self.kind == AUTO or self.kind == UNTYPED:
            self.kind = AUTO_TEXT

    def _close_param(self) -> None:
        self.state = self.body_state
        self.streaming = 0
        if self.kind == STRING:
            # a held CR that no LF followed is content (a held high surrogate half
            # with no low half too: U+FFFD); a held newline is layout
            held = self.newline
            close = _json_str(held) + '"' if held and held[-1] != "\n" else '"'
            self.call.add_args(close, self.out)
            return
        text = valid_text("".join(self.held))  # a lone surrogate half: see ``_json_str``
        if self.kind == WORD:
            word = word_value(text, *self._schema())
            self.call.add_args("null" if word is None else f'"{_json_str(word)}"', self.out)
            return
        value = text.strip()
        if self.kind == NULLABLE:  # still undecided: whitespace, ``nu``, ``null``
            self.call.add_args("null" if value == "null" else _layout_free(text), self.out)
            return
        as_json: str | None
        try:
            decoded = msgspec.json.decode(value)
            as_json = value
        except (msgspec.DecodeError, RecursionError):
            decoded, as_json = _with_controls(value)
        if as_json is None:
            # not JSON (``abc``, a lone ``"``, nesting deeper than the decoder
            # goes): sent as a JSON string, so the arguments stay JSON and the
            # catalog's validation says what is wrong
            decoded = value
            as_json = msgspec.json.encode(value).decode()
            if self.kind == TYPED and value.lower() in _PY_LITERALS:
                # Python's True, False, None (any case) where the schema says a
                # boolean or null, not text: the literal (it was "True", which
                # the parser's check refused though lenient reading takes it)
                as_json = _PY_LITERALS[value.lower()]
            elif self.kind == TYPED and value.startswith("<"):
                as_json = self._nested(value) or as_json
            elif self.kind == TYPED and not value:
                as_json = empty_json(*self._schema()) or as_json
        assert as_json is not None
        if self.kind == AUTO_TEXT and not isinstance(decoded, list | dict):
            decoded = value  # (CDATA: text, but an array or object)
        if self.kind >= AUTO and (isinstance(decoded, str) or value == ""):
            self.call.add_args(_layout_free(text), self.out)
        else:
            self.call.add_args(as_json, self.out)

    def _schema(self) -> tuple[dict[str, Any], Any]:
        """The tool's parameters schema and the open parameter's in it (None if
        it declares none)."""
        root = self.call.ctx.catalog.schema(self.call.name or "") or {}
        props = root.get("properties")
        return root, props.get(self.pname) if isinstance(props, dict) else None

    def _nested(self, value: str) -> str | None:
        """An object or array written as elements (``xml_nested``), as JSON text."""
        from streamtools.parser.xml_nested import read_nested  # (it imports this module)

        root, node = self._schema()
        return read_nested(value, root, node) if node is not None else None


def empty_json(root: dict[str, Any], node: Any) -> str | None:
    """An empty element's JSON text where the schema ``node`` says an array
    (``[]``) or an object (``{}``); None for any other (an empty number is no
    number: it stays ``""`` for the schema check to name). ``<tags></tags>``,
    ``<tags/>`` and ``<tags>\n</tags>`` are how a model writes an empty list
    in XML; it was the string ``""``, which the schema refused (a repair
    round-trip for a value whose meaning is plain). A schema that also allows
    null (``list[str] | None``) still reads ``[]``: the element is there, and an
    empty string is ``""``, not null, for a ``str | None`` parameter too."""
    if node is None:
        return None
    t = json_type(root, node)
    return "[]" if t == "array" else "{}" if t == "object" else None


def _with_controls(value: str) -> tuple[Any, str | None]:
    """An array or object whose strings hold raw control characters (code written
    unescaped; the JSON dialects read it so too): decoded with them escaped, and
    that JSON text; ``(None, None)`` when it is not JSON even so."""
    if not value or value[0] not in "[{":
        return None, None
    fixed = escape_controls(value)
    if fixed is value:
        return None, None
    try:
        return msgspec.json.decode(fixed), fixed
    except (msgspec.DecodeError, RecursionError):
        return None, None


def _layout_free(text: str) -> str:
    """A held value's text as a JSON string, its layout newlines dropped, as a
    ``STRING`` drops them."""
    return msgspec.json.encode(layout_free(text)).decode()


def layout_free(text: str) -> str:
    """A value's text without its layout newlines: one right after the opening
    tag, one right before the closing tag."""
    if text.startswith("\n"):
        text = text[1:]
    elif text.startswith("\r\n"):
        text = text[2:]
    if text.endswith("\n"):
        text = text[: -2 if text.endswith("\r\n") else -1]
    return text
