"""Per-parameter descriptions from a function's docstring, for ``@tool``.

The first paragraph is the tool's description; it also ends where a section
(``Args:``, ``Returns:``…) or a Sphinx field (``:param x:``) begins without a
blank line before it. Parameter descriptions come from:

* an ``Args:`` (also ``Arguments``, ``Parameters``, ``Params``, ``Keyword
  Args``, ``Keyword Arguments``, ``Other Parameters``) section: Google style
  (``name (type): text``, continued on deeper-indented lines) or NumPy style
  (the section title over a ``---`` rule, then ``name : type`` lines, or
  ``x, y : type`` for several, with the text indented below). The section ends
  at the next titled section (NumPy), where the indentation falls back to the
  title's, or at a blank line when the items are not indented under the title
  (Google). Every such
  section is read (keyword-only parameters often have their own);
* Sphinx fields: ``:param name: text`` (also ``:param type name:``, ``:arg``,
  ``:argument``, ``:key``, ``:keyword``), continued on more-indented lines,
  up to the next field.

Core module: standard library only.
"""

from __future__ import annotations

import re

__all__ = ["parse_docstring"]

_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword\s+Args|Keyword\s+Arguments"
    r"|Other\s+Parameters)\s*:?\s*$"
)
# any Google/NumPy section title: ends the summary when no blank line came before it
_ANY_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword\s+Args|Keyword\s+Arguments|Other\s+Parameters"
    r"|Returns?|Yields?|Raises|Examples?|Notes?|See\s+Also|Attributes|Warnings?)\s*:\s*$"
)
_NUMPY_RULE = re.compile(r"^-{3,}\s*$")
# the type in parentheses may hold one level of its own: ``x (tuple(int, int)): …``
_GOOGLE_ITEM = re.compile(r"^(\*{0,2}\w+)\s*(?:\(((?:[^()]|\([^()]*\))*)\))?\s*:\s*(.*)$")
# NumPy names parameters that share a type and a text on one line: ``x, y : int``
_NUMPY_ITEM = re.compile(r"^(\w+(?:\s*,\s*\w+)*)\s*(?::.*)?$")
_FIELD = re.compile(r"^:\w[^:]*:")
_SPHINX_PARAM = re.compile(
    r"^:(?:param|parameter|arg|argument|key|keyword)\s+(?:[^:]*\s)?\*{0,2}(\w+)\s*:(.*)$"
)


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """First paragraph (joined into one line) and per-parameter descriptions."""
    lines = doc.splitlines()
    first: list[str] = []
    for i, line in enumerate(lines):
        text = line.strip()
        numpy_title = i + 1 < len(lines) and bool(_NUMPY_RULE.match(lines[i + 1].strip()))
        if not text or _SECTION.match(text) or _ANY_SECTION.match(text) or _FIELD.match(text):
            break
        if first and numpy_title:
            break
        first.append(text)
    params: dict[str, str] = {}
    for i, line in enumerate(lines):
        if _SECTION.match(line.strip()):
            params.update(_section(lines, i))
    params.update(_sphinx(lines))
    return " ".join(first), {k: v for k, v in params.items() if v}


def _section(lines: list[str], i: int) -> dict[str, str]:
    """The parameters of the Google or NumPy section whose title is ``lines[i]``."""
    params: dict[str, str] = {}
    numpy = i + 1 < len(lines) and bool(_NUMPY_RULE.match(lines[i + 1].strip()))
    title = _indent(lines[i])
    body = lines[i + (2 if numpy else 1) :]
    base = None
    current: list[str] = []  # the names the text being read describes
    for n, raw in enumerate(body):
        if not raw.strip():
            if numpy or _continues(body, n, title):
                continue
            break
        if numpy and n + 1 < len(body) and _NUMPY_RULE.match(body[n + 1].strip()):
            break  # the next NumPy section ("Returns" over a rule) begins
        indent = _indent(raw)
        if base is None:
            base = indent
        if indent < base or (not numpy and indent == 0 and raw.strip().endswith(":")):
            break
        text = raw.strip()
        item = (_NUMPY_ITEM if numpy else _GOOGLE_ITEM).match(text)
        if indent == base and item:
            current = [name.strip().lstrip("*") for name in item.group(1).split(",")]
            for name in current:
                params[name] = "" if numpy else item.group(3).strip()
        else:
            for name in current:
                params[name] = (params[name] + " " + text).strip()
    return params


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _continues(body: list[str], n: int, title: int) -> bool:
    """Whether a Google section goes on past the blank line ``body[n]``: its next
    line is indented under the section's title (a parameter's second paragraph,
    or the next parameter), as napoleon reads it. Items written level with the
    title (``Args:`` then ``a: …`` unindented) end at the blank line, as the
    text after them could not be told apart."""
    rest = (line for line in body[n + 1 :] if line.strip())
    following = next(rest, None)
    return following is not None and _indent(following) > title


def _sphinx(lines: list[str]) -> dict[str, str]:
    """The ``:param name: text`` fields, each continued on its more-indented lines."""
    params: dict[str, str] = {}
    current = None
    indent = 0
    for raw in lines:
        text = raw.strip()
        if _FIELD.match(text):
            item = _SPHINX_PARAM.match(text)
            current = None
            if item is not None:
                current = item.group(1)
                params[current] = item.group(2).strip()
            indent = len(raw) - len(raw.lstrip())
        elif current is not None and text and len(raw) - len(raw.lstrip()) > indent:
            params[current] = (params[current] + " " + text).strip()
        else:
            current = None
    return params
