"""The attributes of an ``am_xml`` call's opening tag, read from the whole tag.

Theory of operation
-------------------
Attributes are read one after another from the element's name on (``ATTR``),
so a quoted value is skipped whole and ``name=`` inside another attribute's
value is not taken for the name; a value may be quoted or not (``name=search``,
as HTML allows). ``name_attribute`` reads the ``name`` a call's tag gives (the
common ``name="..."`` first, without the pattern); ``attribute`` any other;
``no_name`` says what to fix in a call whose tag has none.

Core package: standard library only.
"""

from __future__ import annotations

import html
import re

__all__ = ["ATTR", "attribute", "name_attribute", "no_name"]

# one attribute of a tag, its value quoted, unquoted (``name=search``, as HTML
# allows) or absent; read one after another from the element's name on, so a
# quoted value is skipped whole and ``name=`` inside another attribute's value is
# not taken for the name
ATTR = re.compile(
    r"""\s+([^\s=/>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'<>`=/]+)))?"""
)
# a child element that names the tool where the ``name`` attribute should (error path)
NAME_CHILD = re.compile(r"<(name|tool|tool_name|function)>([^<]{1,64})</\1\s*>")


def no_name(raw: str, opener: str, example: str) -> str:
    """What to fix in a call whose opening tag has no ``name`` attribute: the name
    given in another attribute (``tool="x"``) or in a child element (``<name>x</name>``)
    is quoted back, in the ``name`` attribute where it belongs."""
    tag = raw[: raw.find(">") + 1]
    pos = len(opener)
    while (m := ATTR.match(tag, pos)) is not None:
        value = m.group(2) if m.group(2) is not None else m.group(3) or m.group(4)
        if value:
            where = f"not in a {m.group(1)} attribute"
            break
        pos = m.end()
    else:
        c = NAME_CHILD.search(raw, len(tag))
        value, where = (c.group(2).strip(), f"not in a <{c.group(1)}> element") if c else ("", "")
    if not value:
        return f'The call has no tool name: give it in the name attribute.{example}'
    return (
        f"The call has no tool name: give it in the name attribute, "
        f'<am:tool_call name="{html.unescape(value)}">, {where}.{example}'
    )


def name_attribute(tag: str, pos: int) -> str | None:
    """The ``name`` attribute of a whole tag whose attributes begin at ``pos``,
    its entities decoded; None if absent (or after text that is no attribute)."""
    if tag.startswith(' name="', pos):  # the common form, read as ``ATTR`` reads it
        e = tag.find('"', pos + 7)
        if e >= 0:
            value = tag[pos + 7 : e]
            return html.unescape(value) if "&" in value else value
    return attribute(tag, pos, "name")


def attribute(tag: str, pos: int, key: str) -> str | None:
    """The attribute ``key`` of a whole tag whose attributes begin at ``pos``,
    its entities decoded; None if absent (or after text that is no attribute)."""
    while (m := ATTR.match(tag, pos)) is not None:
        if m.group(1) == key:
            value = m.group(2)
            if value is None:
                value = m.group(3) if m.group(3) is not None else m.group(4)
            return None if value is None else html.unescape(value)
        pos = m.end()
    return None
