"""Render side of the ``am_xml`` dialect: XML elements, one child element per parameter.

Theory of operation
-------------------
The model writes::

    <am:tool_call name="get_weather">
    <city>Paris</city>
    <days>3</days>
    </am:tool_call>

and generation stops at ``</am:tool_call>`` (the stop marker), so the model
cannot invent the result itself. Strings are written as they are; a string
holding ``<`` or ``&`` (or with leading/trailing whitespace that a reader might
trim) goes in a CDATA section, with any ``]]>`` inside split across two
sections, and so is a chat template's special token (``<|im_end|>``: see
``streamtools.prompts.special_tokens``), and a string that is a JSON number,
``true``, ``false`` or ``null``, which bare is that literal to the parser where
the schema allows it (``int | str``: ``"5"`` read back as 5; ``str | None``: a
``None`` from history is written ``null``). A string that is JSON array or object
text, which would read back as that array or object where the schema allows one,
is written with its ``[`` or ``{`` as a character reference (``&#91;1, 2]``), which
the parser reads as text. Numbers, booleans and null are JSON
literals; arrays and objects are JSON text inside the element. A newline right
after the opening tag or right before the closing tag is layout, not content,
so a value that starts or ends with a newline gets one more there. Because
every value is text, arguments from this dialect are validated leniently
(``"5"`` -> ``5``).

A parameter whose name is not an XML name (``$top``, ``1st``, ``user name``),
or is ``am:tool_call`` (which would open a call), is written
``<parameter name="$top">…</parameter>``, the form the tool definitions use,
which the parser reads too.

Tool definitions are exactly ``<am:tools><am:tool name= description=>``
``<parameter name= type= description= required=/>…</am:tool></am:tools>``.
Details a flat ``type`` cannot carry (enum values, defaults, item types,
nested schemas) go into the parameter's description. Every attribute is
escaped, ``type`` too: a foreign schema's ``type`` may be any string (a quote,
``<``, ``&`` in it), and it is shown as the schema says it.

Results come back as ``<am:tool_result name="…">…</am:tool_result>`` (errors as
``<am:tool_error>``). The content is escaped with XML entities: ``&``, ``<``
and ``>`` become ``&amp;``, ``&lt;`` and ``&gt;``. After that no ``<`` is left in
the content, so nothing in a result can close the element, open a call, or
start ``<think>``; unescaping gives the content back verbatim. (Entities rather
than CDATA: a CDATA section would still need its own ``]]>`` handling and leaves
``<am:tool_call`` visible to a model that reads it.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from streamtools.model import ToolSpec
from streamtools.prompts.renderer import ReadResult, Renderer, listed, mapping
from streamtools.prompts.special_tokens import defused
from streamtools.schema import alternatives, json_type, resolve

__all__ = ["AmXmlRenderer", "cdata", "xml_attr", "xml_text"]

# the names the parser reads as parameter elements (``parser.am_xml_fast.OPEN_TAG``),
# but the call's own (``<am:tool_call>`` in a call opens the next call); any other
# key is written ``<parameter name="KEY">``, which it reads as well
_ELEMENT_NAME = re.compile(r"(?!am:tool_call\Z)[^\W\d][\w.\-:]*")
_LITERAL_START = frozenset("-0123456789tfn")
_RESULT = re.compile(r'\A<am:tool_(result|error) name="([^"]*)">(.*)</am:tool_\1>\Z', re.DOTALL)


def xml_text(text: str) -> str:
    """Escape element content: no ``<`` survives, ``&`` stays unambiguous."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def xml_unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def xml_attr(text: str) -> str:
    """Escape an attribute value (double-quoted), keeping it on one line."""
    return (
        xml_text(text)
        .replace('"', "&quot;")
        .replace("\n", "&#10;")
        .replace("\r", "&#13;")
        .replace("\t", "&#9;")
    )


def cdata(text: str) -> str:
    """Wrap text in CDATA; a ``]]>`` inside is split so it cannot end the section,
    and a chat template's special token so that it is not one (``<|im_end|>`` as
    ``<]]><![CDATA[|im_end|]]><![CDATA[>``): a server would read it as the
    token, and its ``<`` cannot be written as ``&lt;`` inside CDATA. The parser
    joins the sections back into the text."""
    text = text.replace("]]>", "]]]]><![CDATA[>")
    return "<![CDATA[" + defused(text, lt="<]]><![CDATA[", gt="]]><![CDATA[>") + "]]>"


def _value_text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    # One newline right after the opening tag and one right before the closing tag
    # are layout to the reader (``<code>\nx = 1\n</code>`` is "x = 1"): a value that
    # itself starts or ends with a newline gets one extra, outside its CDATA. A CRLF
    # is a newline to the reader too: a value starting with one lost it.
    lead = "\n" if text.startswith(("\n", "\r\n")) else ""
    tail = "\n" if text.endswith("\n") else ""
    if isinstance(value, str) and _reads_as_container(text):
        # its bracket as a character reference, which says "text" to the parser
        # (CDATA cannot: an array with "<" in a string is written in one)
        k = len(text) - len(text.lstrip())
        bracket = "&#91;" if text[k] == "[" else "&#123;"
        return lead + _piece(text[:k]) + bracket + _piece(text[k + 1 :]) + tail
    if (
        any(ch in text for ch in "<&")
        or "]]>" in text
        or text != text.strip()
        or (isinstance(value, str) and _reads_as_literal(text))
    ):
        return lead + cdata(text) + tail
    return text


def _piece(text: str) -> str:
    """Part of a value, written as ``_value_text`` writes a whole one: in CDATA
    where it needs to be."""
    if any(ch in text for ch in "<&") or "]]>" in text or text != text.strip():
        return cdata(text)
    return text


def _reads_as_container(text: str) -> bool:
    """Whether a string, bare or in CDATA, would read back as a JSON array or
    object where the schema allows one (``list[int] | str``, no type)."""
    start = text.lstrip()[:1]
    if start != "[" and start != "{":
        return False
    try:
        return isinstance(json.loads(text), list | dict)
    except ValueError:
        return False


def _reads_as_literal(text: str) -> bool:
    """Whether a string, bare in its element, would read back as a JSON number,
    boolean or null: where the schema allows one (``int | str``, ``str |
    None``) the parser takes it so (``"5"`` came back as 5). CDATA says "text"."""
    if not text or text[0] not in _LITERAL_START:
        return False
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return not isinstance(value, str | list | dict)


def _type_name(schema: dict[str, Any], root: dict[str, Any]) -> str:
    """The ``type`` a parameter is shown with: its one JSON type as the parser
    reads the value back (``json_type``), else ``object`` for an object schema,
    else ``any``."""
    kind = json_type(root, schema)
    if kind is not None:
        return kind
    return "object" if "$ref" in schema or "properties" in schema else "any"


def _shown(value: Any) -> str:
    """A schema's value (an enum's, a const, a default) as the model would write
    it in a parameter element: a string as it is, anything else as JSON. Python's
    ``str`` wrote ``True`` and ``None``, which no JSON reader takes for ``true``
    and ``null``: a model copying ``True`` for a parameter without one type
    (``enum: [true, false, null]``) sent the string "True"."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):  # a hand-built schema may hold any object
        return str(value)


def _shape(schema: Any, root: dict[str, Any], depth: int = 0) -> str:
    """A short type expression: ``array of string``, ``object {a, b?}``, ``one of a, b``."""
    if not isinstance(schema, dict) or depth > 4:
        return "any"
    if "$ref" in schema:
        return _shape(resolve(root, schema), root, depth + 1)
    if "enum" in schema:
        return "one of " + ", ".join(_shown(v) for v in listed(schema["enum"]))
    if "const" in schema:
        return "exactly " + _shown(schema["const"])
    options = alternatives(root, schema)  # (``json_type`` reads them the same way)
    if options:
        return " or ".join(dict.fromkeys(_shape(o, root, depth + 1) for o in options))
    kind = schema.get("type")
    if isinstance(kind, list):
        return " or ".join(_shape({**schema, "type": k}, root, depth + 1) for k in kind)
    if kind == "array":
        return "array of " + _shape(schema.get("items"), root, depth + 1)
    props = mapping(schema.get("properties"))
    if isinstance(props, dict) and props:
        required = {k for k in listed(schema.get("required")) if isinstance(k, str)}
        fields = [
            f"{k}{'' if k in required else '?'}: {_shape(v, root, depth + 1)}"
            for k, v in props.items()
        ]
        return "object {" + ", ".join(fields) + "}"
    if kind == "string" and schema.get("format"):
        return f"string ({schema['format']})"
    return str(kind) if isinstance(kind, str) else "any"


def _describe(schema: dict[str, Any], root: dict[str, Any]) -> str:
    text = " ".join(str(schema.get("description", "")).split())
    shape = _shape(schema, root)
    extra = [] if shape == _type_name(schema, root) else [shape]
    if "default" in schema:
        extra.append(f"default: {_shown(schema['default'])}")
    if extra:
        text = (text + " " if text else "") + "(" + "; ".join(extra) + ")"
    return text


class AmXmlRenderer(Renderer):
    name = "am_xml"
    stop_marker = call_close = "</am:tool_call>"
    results_role = "user"
    raw_start = re.compile(r"\s*<am:tool_call\b")
    call_form = (
        '<am:tool_call name="TOOL_NAME">\n<PARAMETER_NAME>value</PARAMETER_NAME>\n</am:tool_call>'
    )
    results_rule = (
        "After </am:tool_call>, stop and wait: the result comes back in an "
        "<am:tool_result> element (or <am:tool_error> if the call failed). "
        "Never write results yourself."
    )

    def name_problem(self, name: str) -> str | None:
        # the parser trims the name attribute's value (``name=" search "`` is search)
        if name != name.strip():
            return "a name there may not begin or end with whitespace"
        return super().name_problem(name)

    def tool_definitions(self, tools: Sequence[ToolSpec]) -> str:
        lines = ["# Tools", "", "<am:tools>"]
        for spec in tools:
            lines.append(
                f'<am:tool name="{xml_attr(spec.name)}" '
                f'description="{xml_attr(" ".join(spec.description.split()))}">'
            )
            props = mapping(spec.parameters.get("properties"))
            required = {k for k in listed(spec.parameters.get("required")) if isinstance(k, str)}
            for pname, pschema in props.items():
                schema = pschema if isinstance(pschema, dict) else {}
                kind = _type_name(schema, spec.parameters)
                lines.append(
                    f'<parameter name="{xml_attr(pname)}" type="{xml_attr(kind)}" '
                    f'description="{xml_attr(_describe(schema, spec.parameters))}" '
                    f'required="{"true" if pname in required else "false"}"/>'
                )
            lines.append("</am:tool>")
        lines.append("</am:tools>")
        return "\n".join(lines)

    def instructions(self) -> str:
        return self.protocol(
            "To call a tool, write an am:tool_call element with the tool's name, "
            "and one child element per parameter:",
            "Write strings as plain text; put text containing < or & inside <![CDATA[ ... ]]>.",
            "Write numbers and true/false as they are; write arrays and objects as JSON.",
            "Leave out optional parameters you do not need.",
        )

    def request_instructions(self) -> str:
        return (
            "To get the full definitions of the ones you need, write "
            "<am:request_tools>name_one, name_two</am:request_tools> and stop; "
            "they are added for your next reply."
        )

    def format_call(self, name: str, arguments: dict[str, Any]) -> str:
        lines = [f'<am:tool_call name="{xml_attr(name)}">']
        for key, value in arguments.items():
            if _ELEMENT_NAME.fullmatch(key):
                lines.append(f"<{key}>{_value_text(value)}</{key}>")
            else:  # ``$top``, ``1st``, ``user name``: not an element's name
                lines.append(f'<parameter name="{xml_attr(key)}">{_value_text(value)}</parameter>')
        lines.append("</am:tool_call>")
        return "\n".join(lines)

    def defuse_call(self, text: str) -> str:
        # no token is left to defuse: the markup writes ``<`` as ``&lt;`` but in
        # CDATA, which ``cdata`` splits around one (a JSON escape there is text)
        return text

    def format_call_text(self, name: str, arguments: str) -> str:
        # no parameter element can be read out of it: the text inside the call,
        # escaped as results are (no tag in it can close the call)
        return f'<am:tool_call name="{xml_attr(name)}">\n{xml_text(arguments)}\n</am:tool_call>'

    def render_result(self, name: str, content: str, *, call_id: str) -> str:
        return f'<am:tool_result name="{xml_attr(name)}">{xml_text(content)}</am:tool_result>'

    def render_error(self, name: str, message: str, *, call_id: str) -> str:
        return f'<am:tool_error name="{xml_attr(name)}">{xml_text(message)}</am:tool_error>'

    def read_result(self, text: str) -> ReadResult | None:
        match = _RESULT.match(text)
        if match is None:
            return None
        kind, name, body = match.groups()
        return xml_unescape(name), xml_unescape(body), kind == "error"

    def continuation(self) -> str:
        return (
            "Continue with the task using these results: call another tool if you "
            "still need one, otherwise give your final answer in plain text."
        )

    def format_reminder(self) -> str:
        return (
            "Write tool calls exactly in this form, one child element per parameter, "
            f"and stop after the closing tag:\n{self.call_form}"
        )
